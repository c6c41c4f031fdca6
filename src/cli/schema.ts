import { configFileSchema } from '../config/file-schema';
import { Registries } from '../runtime/registries';
import { defineCommand } from './command';

export const schemaCommand = defineCommand({
  name: 'schema',
  summary: 'print the JSON Schema of config files, for editors',
  description:
    'The schema checks the sections (pipeline, onramp, offramp, binding, mapping, flow), each artefact, and the config of each ' +
    "onramp, offramp and pipeline node against its type's own schema: what publish checks, so an editor completes and flags " +
    'what eddy would refuse. `eddy schema > eddy.schema.json`, then point the editor at it (docs/config-files.md).',
  flags: {},
  options: () => ({}),
  run: (_options, io) => {
    io.out(`${JSON.stringify(configFileSchema(Registries.withBuiltins()), null, 2)}\n`);
    return Promise.resolve(0);
  },
});
