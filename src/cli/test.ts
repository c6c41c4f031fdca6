import { runCaseFiles, type TestRun } from '../testing/run-files';
import { defineCommand } from './command';

const REPORTERS = ['spec', 'json'] as const;

export const testCommand = defineCommand({
  name: 'test',
  summary: 'run the test cases of pipelines (case files)',
  description:
    'Runs every case of each file (docs/testing-pipelines.md) and prints a report. Exit 0 when every case passes, 1 when any fails or a ' +
    'file or a --require module cannot be used, 2 for bad usage.',
  operands: 'CASES.yaml ...',
  flags: {
    reporter: { type: 'string', value: 'spec|json', default: 'spec', description: 'spec: a readable report; json: one JSON document' },
    require: {
      type: 'string',
      multiple: true,
      value: 'MODULE',
      description: "load a module that registers the application's own types (it exports register(registries))",
    },
  },
  options({ values, operands }): TestRun {
    const reporter = REPORTERS.find((r) => r === values.reporter);
    if (reporter === undefined) throw new Error(`--reporter: '${values.reporter}' is not a reporter (${REPORTERS.join(', ')})`);
    if (operands.length === 0) throw new Error('name at least one case file');
    return { files: operands, modules: values.require, reporter };
  },
  run: (options, io) => runCaseFiles(options, io.out),
});
