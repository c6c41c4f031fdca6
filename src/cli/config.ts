import { printResolvedConfigs, type ConfigOptions } from '../config/resolved';
import { defineCommand } from './command';
import { readStdin } from './stdin';

export const configCommand = defineCommand({
  name: 'config',
  summary: 'print config files as a start resolves them, secrets as ***',
  description:
    'Reads the files in order as one start does and prints what each comes to: ${NAME} and ${file:PATH} replaced, relative paths ' +
    'made absolute, flow entries as bindings and mappings, the chain of a pipeline without links, and the schema defaults of every ' +
    'ramp, codec and operator config. Secrets show as ***: schema secrets and URL passwords (as the API shows them), values from ' +
    '${file:PATH}, and values of variables named like a secret (docs/config-files.md). YAML, one document per file after a # FILE ' +
    'line; --json: one JSON object of each file by its name. - reads a config from standard input. Exit 1 when a file does not ' +
    'read or validate (the message a start would give), 2 for bad usage. Opens nothing.',
  operands: 'FILE ...',
  flags: {
    json: { type: 'boolean', description: 'print JSON: an object of each file, by its name, to its resolved config' },
  },
  options({ values, operands }): ConfigOptions {
    if (operands.length === 0) throw new Error('name at least one config file (- reads standard input)');
    return { files: operands, json: values.json };
  },
  run: (options, io) => printResolvedConfigs(options, { out: io.out, err: io.err, env: io.env, stdin: readStdin }),
});
