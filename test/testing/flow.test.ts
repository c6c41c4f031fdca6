import { expect } from 'chai';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { expectPipeline, formatCase, runCaseFile } from '../../src/testing';
import { runEddy } from '../helpers/cli';
import { ERRORS_BY_HOST } from '../helpers/cases';

function caseFile(text: string, name = 'cases.yaml'): string {
  const path = join(mkdtempSync(join(tmpdir(), 'eddy-flow-')), name);
  writeFileSync(path, text);
  return path;
}

const LINES = `{"level":"error","host":"web1","msg":"disk full"}\n{"level":"info","host":"web1","msg":"started"}\n`;

/** A case file with one flow case through the example pipeline; `flow` is the YAML of the flow's fields. */
const flowFile = (flow: string) => caseFile(`pipeline: ${JSON.stringify(ERRORS_BY_HOST)}\ncases:\n  - name: flow\n    flow:\n${flow}`);

/** A YAML block scalar of `text` at the flow's indentation. */
const block = (text: string) => `|\n${text.replace(/^(?=.)/gm, '        ')}`;

describe('eddy test: flow cases (bytes in, bytes out)', () => {
  it('compares the bytes the offramp writes: a mismatch names the byte, line and column where they part', () => {
    const path = flowFile(
      `      onramp: { preprocessors: [lines] }\n      offramp: { postprocessors: [lines] }\n      input: ${block(LINES)}\n      output: ${block('{"level":"error","host":"web1","msg":"disk ful"}\n')}`,
    );
    const [result] = runCaseFile(path).cases;
    expect(result.passed).to.equal(false);
    expect(result.bytes).to.deep.equal({
      expected: '{"level":"error","host":"web1","msg":"disk ful"}\n',
      actual: '{"level":"error","host":"web1","msg":"disk full"}\n',
      firstDifference: 46,
    });
    expect(formatCase(result).split('\n')).to.deep.equal([
      '  ✗ flow',
      '      bytes written:',
      '        expected:',
      '          | {"level":"error","host":"web1","msg":"disk ful"}',
      '        actual:',
      '          | {"level":"error","host":"web1","msg":"disk full"}',
      '        first difference at byte 46 (line 1, column 47): expected "\\"}\\n", got "l\\"}\\n"',
    ]);
  });

  it("decodes with the onramp's codec (a frame without a value makes no event) and runs the offramp's postprocessors in order on each frame", () => {
    const influx = 'weather,location=us temperature=82 1465839830100400200\n# a comment\nweather,location=eu temperature=71i 1465839830100400300\n';
    const frames = [
      '{"measurement":"weather","tags":{"location":"us"},"fields":{"temperature":82},"timestamp":1465839830100400200}',
      '{"measurement":"weather","tags":{"location":"eu"},"fields":{"temperature":71},"timestamp":1465839830100400300}',
    ];
    const path = caseFile(
      [
        'pipeline: { id: pass, nodes: [{ id: p, type: passthrough }] }',
        'cases:',
        '  - name: influx in, base64 lines of JSON out',
        '    flow:',
        '      onramp: { codec: influx, preprocessors: [lines] }',
        '      offramp: { codec: json, postprocessors: [base64, lines] }',
        `      input: ${block(influx)}`,
        `      output: ${block(frames.map((f) => `${Buffer.from(f).toString('base64')}\n`).join(''))}`,
      ].join('\n'),
    );
    expect(runCaseFile(path).cases[0]).to.include({ passed: true });
  });

  it("runs the pipelines via names, out to in, each draining when the one before it has (a batch's partial batch leaves)", () => {
    const config = caseFile(
      [
        'pipeline:',
        '  - { id: errors, nodes: [{ id: f, type: runtime::cel, config: { filter: event.level == "error" } }] }',
        '  - { id: pairs, nodes: [{ id: b, type: generic::batch, config: { count: 2 } }] }',
        '  - { id: shout, nodes: [{ id: s, type: runtime::cel, config: { set: { msg: event.msg.upperAscii() } } }] }',
      ].join('\n'),
      'config.yaml',
    );
    const flow = (via: string, output: string) =>
      `  - name: via ${via}\n    flow:\n      via: ${via}\n      onramp: { preprocessors: [lines] }\n      offramp: { postprocessors: [lines] }\n      input: ${block(
        ['error a', 'info b', 'error c', 'error d'].map((l) => `${JSON.stringify({ level: l.split(' ')[0], msg: l.split(' ')[1] })}\n`).join(''),
      )}      output: ${block(output)}`;
    const line = (level: string, msg: string) => `{"level":"${level}","msg":"${msg}"}\n`;
    const path = caseFile(
      `pipeline: ${JSON.stringify(config)}\ncases:\n` +
        // d leaves only if pairs drains when errors has: a partial batch, member by member
        flow('[errors, pairs]', line('error', 'a') + line('error', 'c') + line('error', 'd')) +
        flow('[errors, shout]', line('error', 'A') + line('error', 'C') + line('error', 'D')),
    );
    const { cases } = runCaseFile(path);
    expect(cases.map((c) => [c.name, c.passed, c.error, c.bytes?.firstDifference])).to.deep.equal([
      ['via [errors, pairs]', true, undefined, -1],
      ['via [errors, shout]', true, undefined, -1],
    ]);
  });

  it('a flow case that cannot run fails alone, naming the field: a frame the codec refuses, an unknown codec or processor, a config a codec does not take, marbles beside the flow', () => {
    const flow = (name: string, fields: string) => `  - name: ${name}\n    flow:\n${fields}      input: ${block(LINES)}      output: ${block('')}`;
    const path = caseFile(
      `pipeline: ${JSON.stringify(ERRORS_BY_HOST)}\ncases:\n` +
        flow('strings go to err, nothing is written', `      onramp: { codec: string, preprocessors: [lines] }\n      offramp: { codec: yaml }\n`).replace(
          LINES.split('\n')[1],
          'not json',
        ) +
        flow('misspelt codec', `      onramp: { codec: jsno }\n`) +
        flow('misspelt processor', `      offramp: { postprocessors: [lines, gzipp] }\n`) +
        flow('codec config', `      onramp: { codec: { name: json, config: { strict: true } } }\n`) +
        `  - name: marbles too\n    in: { in: "a|" }\n    flow: { input: "", output: "" }\n` +
        flow('undecodable', `      onramp: { preprocessors: [lines] }\n`).replace(LINES.split('\n')[1], 'not json'),
    );
    const { cases } = runCaseFile(path);
    // the codec's own words (Node's JSON.parse message) are cut off after the colon
    const errors = cases.map((c) => [c.name, c.passed, c.error?.replace(`${path}: `, '').replace(/(cannot decode it): .*/, '$1: …')]);
    expect(errors).to.deep.equal([
      ['strings go to err, nothing is written', true, undefined],
      [
        'misspelt codec',
        false,
        "flow.onramp.codec: unknown codec 'jsno' (known: avro, binary, binflux, influx, json, msgpack, null, protobuf, statsd, string, syslog, yaml)",
      ],
      [
        'misspelt processor',
        false,
        "flow.offramp.postprocessors[1]: unknown postprocessor 'gzipp' (did you mean 'gzip'?) (known: base64, gelf-chunking, gzip, ingest-ns, length-prefixed, lines, lz4, snappy, textual-length-prefix, xz2, zlib, zstd)",
      ],
      ['codec config', false, 'flow.onramp.codec.config: the json codec takes no config'],
      ['marbles too', false, "case 'marbles too': cases[4]: in: a flow case gives flow.input and flow.output, not marbles"],
      ['undecodable', false, 'flow.input: frame 2 "not json": the json codec cannot decode it: …'],
    ]);
  });

  it('eddy test prints a failing flow case with both texts and exits 1', async () => {
    const path = flowFile(`      onramp: { preprocessors: [lines] }\n      input: ${block(LINES)}      output: ${block('nothing like it\n')}`);
    const run = await runEddy(['test', path]);
    expect(run.code).to.equal(1);
    const lines = run.stdout.split('\n').map((l) => l.trim());
    expect(lines).to.include.members([
      '✗ flow',
      'bytes written:',
      '| nothing like it',
      '| {"level":"error","host":"web1","msg":"disk full"}',
      '0 passing, 1 failing',
    ]);
    const json = JSON.parse((await runEddy(['test', '--reporter', 'json', path])).stdout);
    expect(json.files[0].cases[0].failures.map((f: { port: string }) => f.port)).to.deep.equal(['bytes']);
  });

  it('expectPipeline runs a flow case built in code, and throws the report of one that fails', () => {
    const shout = { id: 'shout', nodes: [{ id: 's', type: 'runtime::cel', config: { set: { msg: 'event.msg.upperAscii()' } } }] };
    const flow = { onramp: { preprocessors: ['lines'] }, offramp: { codec: 'yaml' }, input: '{"msg":"hi"}\n' };
    expect(() => expectPipeline({ name: 'shouts', pipeline: shout, flow: { ...flow, output: 'msg: HI\n' } })).not.to.throw();
    expect(() => expectPipeline({ name: 'whispers', pipeline: shout, flow: { ...flow, output: 'msg: hi\n' } })).to.throw(
      /✗ whispers\n.*bytes written:[\s\S]*first difference at byte 5 \(line 1, column 6\): expected "hi\\n", got "HI\\n"/,
    );
  });
});
