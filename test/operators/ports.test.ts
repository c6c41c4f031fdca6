import { expect } from 'chai';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { asyncScheduler } from '../../src/core/rx';
import type { OperatorContext } from '../../src/pipeline/operator';
import { Registries } from '../../src/runtime/registries';
import { SchemaValidator } from '../../src/schema/artefacts';
import { pathFields } from '../../src/schema/paths';

/**
 * An operator type says its ports from its config (`outputPorts`), so a link
 * is checked at publish, before any node exists: what it says must be what
 * the node `create` makes exposes, for each of its examples (the configs the
 * operators README lists the ports of).
 */
describe('operator ports: declared from the config, as the node exposes them', () => {
  const registries = Registries.withBuiltins();
  const validator = new SchemaValidator();
  const ctx: OperatorContext = { nodeId: 'n', pipelineUrl: '/pipeline/p/01', uid: 1, scheduler: asyncScheduler, insight: () => undefined };
  let dir: string;
  beforeEach(() => (dir = mkdtempSync(join(tmpdir(), 'eddy-ports-'))));
  afterEach(() => rmSync(dir, { recursive: true, force: true }));

  /** The example with each file it reads made, empty, in the test's folder (a lookup table is read at create). */
  const withFiles = (example: Readonly<Record<string, unknown>>, schema: Parameters<typeof pathFields>[0]) => {
    const config = structuredClone(example) as Record<string, unknown>;
    for (const { keys, use } of pathFields(schema)) {
      let holder: Record<string, unknown> | undefined = config;
      for (const key of keys.slice(0, -1)) holder = holder?.[key] as Record<string, unknown> | undefined;
      const last = keys[keys.length - 1];
      if (use !== 'read' || typeof holder?.[last] !== 'string') continue;
      holder[last] = join(dir, holder[last]);
      writeFileSync(holder[last] as string, '');
    }
    return config;
  };

  for (const name of registries.operators.names()) {
    it(`${name}: outputPorts gives the ports of the node create makes, for every example`, async () => {
      const type = registries.operators.get(name);
      expect(type.examples ?? [], 'give the type examples: the README lists their ports').to.not.be.empty;
      for (const example of type.examples ?? []) {
        const config = withFiles(example, type.configSchema);
        if (type.configSchema) validator.check(type.configSchema, config, 'config');
        const made = type.create(config, ctx);
        const exposed = typeof made === 'function' ? [] : made.ports;
        try {
          expect(type.outputPorts?.(config), JSON.stringify(example)).to.deep.equal(exposed);
        } finally {
          if (typeof made !== 'function') await made.stop?.();
        }
      }
    });
  }
});
