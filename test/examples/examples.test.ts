import { expect } from 'chai';
import { readFileSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { loadConfigFile } from '../../src/config/load';
import { createLogger } from '../../src/core/logger';
import { Runtime } from '../../src/runtime/runtime';
import { shout } from '../../examples/embed';
import { requireService, type ServiceName } from '../helpers/services';

/** The real server an example's connectors talk to, by the type names it uses. */
function serviceOf(text: string): ServiceName | undefined {
  const services: Record<string, ServiceName> = { kafka: 'kafka', amqp: 'rabbitmq', nats: 'nats', postgres: 'postgres', elastic: 'elastic' };
  for (const [type, service] of Object.entries(services)) if (new RegExp(`type:\\s*${type}\\b`).test(text)) return service;
  return undefined;
}

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
    it(`${file} loads and activates in a runtime`, async function () {
      const service = serviceOf(readFileSync(join(EXAMPLES, file), 'utf8'));
      if (service) await requireService(this, service);
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
