import { validateConfigFiles, type ValidateOptions } from '../config/validate';
import { defineCommand } from './command';
import { readStdin } from './stdin';

export const validateCommand = defineCommand({
  name: 'validate',
  summary: 'check config files as eddy server run -f would, opening nothing',
  description:
    'Reads the files together, in order, as one start loads them, and makes every check that start makes before it opens anything: ' +
    'sections, schemas, types, CEL, links and ports, the activation of each mapping, the files a flow reads (they must exist) and ' +
    'writes (they must be writable or creatable). Nothing is opened for writing, no port is bound, no broker is contacted; a port ' +
    'another program holds and a broker that refuses are found only by a start (docs/config-files.md). - reads a config from standard ' +
    'input (relative paths in it are taken from the working directory). Prints FILE: ok (what it declares) per file and exits 0; ' +
    'prints the error a start would stop with and exits 1; 2 for bad usage.',
  operands: 'FILE ...',
  flags: {
    'allow-path': {
      type: 'string',
      multiple: true,
      value: 'DIR',
      description: 'check that the files the artefacts use lie in DIR, as eddy server run --allow-path does',
    },
  },
  options({ values, operands }): ValidateOptions {
    if (operands.length === 0) throw new Error('name at least one config file (- reads standard input)');
    return { files: operands, allowPaths: values['allow-path'] };
  },
  run: (options, io) => validateConfigFiles(options, { out: io.out, err: io.err, stdin: readStdin }),
});
