import { expect } from 'chai';
import { readdirSync } from 'node:fs';
import { join } from 'node:path';
import { loadConfigFile } from '../../src/config/load';
import { createLogger } from '../../src/core/logger';
import { Runtime } from '../../src/runtime/runtime';
import { shout } from '../../examples/embed';

const EXAMPLES = join(__dirname, '../../../examples');

describe('examples', () => {
  it('the embedding example registers its own operator and uses it by type name in a pipeline', async () => {
    expect(await shout(['hello', 'world'])).to.deep.equal([{ message: 'HELLO' }, { message: 'WORLD' }]);
  });

  it('registering a type name twice is an error', async () => {
    const { uppercaseOperator } = await import('../../examples/custom-operator');
    const runtime = new Runtime({ logger: createLogger('silent') }).registerOperator(uppercaseOperator);
    expect(() => runtime.registerOperator(uppercaseOperator)).to.throw(/already registered/);
  });

  for (const file of readdirSync(EXAMPLES).filter((f) => /\.(ya?ml|json)$/.test(f))) {
    it(`${file} loads and activates in a runtime`, async () => {
      const runtime = await new Runtime({ logger: createLogger('silent') }).start();
      try {
        await loadConfigFile(runtime, join(EXAMPLES, file));
        expect(runtime.list('binding').length).to.be.greaterThan(0);
      } finally {
        await runtime.shutdown();
      }
    });
  }
});
