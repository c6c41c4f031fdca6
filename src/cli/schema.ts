import { configFileSchema, pipelineFileSchema } from '../config/file-schema';
import { Registries } from '../runtime/registries';
import { defineCommand } from './command';

export const schemaCommand = defineCommand({
  name: 'schema',
  summary: 'print the JSON Schema of config files, for editors',
  description:
    'The schema checks the sections (pipeline, onramp, offramp, binding, mapping, flow), each artefact, and the config of each ' +
    "onramp, offramp and pipeline node against its type's own schema: what publish checks, so an editor completes and flags " +
    'what eddy would refuse. `eddy schema > eddy.schema.json`, then point the editor at it (docs/config-files.md).',
  flags: {
    pipeline: {
      type: 'boolean',
      description: 'the schema of a pipeline file instead: one pipeline artefact by itself, as the case files of eddy test name it',
    },
  },
  options: ({ values }) => ({ pipeline: values.pipeline }),
  run: (options, io) => {
    const registries = Registries.withBuiltins();
    const schema = options.pipeline ? pipelineFileSchema(registries) : configFileSchema(registries);
    io.out(`${JSON.stringify(schema, null, 2)}\n`);
    return Promise.resolve(0);
  },
});
