import { expect } from 'chai';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import ts from 'typescript';
import type { PipelineArtefact, PipelineNode } from '../../src/index';
import { artefactSchemas } from '../../src/schema/artefacts';
import { docBlock, ROOT } from '../helpers/readme';
import { pipelineOperator, validatePipeline } from '../../src/index';

const FIXTURE = join(ROOT, 'test/fixtures/typed-artefact.ts');
const DOC_PROGRAM = join(ROOT, 'test/fixtures/embedding-doc.ts');

/** Each `// @ts-expect-error -- message` of a text: the line it marks (1-based) and the message it names. */
function expectedErrors(text: string): { line: number; message: string }[] {
  return text.split('\n').flatMap((line, i) => {
    const m = /^\s*\/\/ @ts-expect-error -- (.+)$/.exec(line);
    return m ? [{ line: i + 2, message: m[1] }] : [];
  });
}

/**
 * The type errors of each file, as `line: message` lists, the files read as `texts` gives them (a path absent there
 * is read from disk). `eddy` resolves to the sources, as in the build.
 */
function typeErrors(texts: Map<string, string>): Map<string, { line: number; message: string }[]> {
  const options: ts.CompilerOptions = {
    strict: true,
    noEmit: true,
    target: ts.ScriptTarget.ES2022,
    module: ts.ModuleKind.CommonJS,
    moduleResolution: ts.ModuleResolutionKind.Node10,
    esModuleInterop: true,
    skipLibCheck: true,
    types: ['node'],
    baseUrl: ROOT,
    paths: { eddy: ['./src/index.ts'], 'eddy/testing': ['./src/testing/index.ts'] },
  };
  const host = ts.createCompilerHost(options);
  const read = host.readFile.bind(host);
  host.readFile = (file) => texts.get(file) ?? read(file);
  const program = ts.createProgram([...texts.keys()], options, host);
  const result = new Map<string, { line: number; message: string }[]>();
  for (const file of texts.keys()) {
    const source = program.getSourceFile(file)!;
    const diagnostics = [...program.getSyntacticDiagnostics(source), ...program.getSemanticDiagnostics(source)];
    result.set(
      file,
      diagnostics.map((d) => ({
        line: source.getLineAndCharacterOfPosition(d.start ?? 0).line + 1,
        message: ts.flattenDiagnosticMessageText(d.messageText, '\n'),
      })),
    );
  }
  return result;
}

/** The keys a type must have, each listed once: a key missing from or added to the type fails to compile. */
type Keys<T> = Record<keyof T, true>;
/** The keys of T that are not optional. */
type RequiredKeys<T> = { [K in keyof T]-?: object extends Pick<T, K> ? never : K }[keyof T];

describe('pipelineOperator is typed', function () {
  // one program over the sources: seconds on a busy machine
  this.timeout(120_000);
  let errors: Map<string, { line: number; message: string }[]>;

  before(() => {
    const fixture = readFileSync(FIXTURE, 'utf8');
    // without the directives, the errors they silence are reported; the blank comments keep the line numbers
    const bare = fixture.replace(/\/\/ @ts-expect-error -- .*$/gm, '//');
    errors = typeErrors(
      new Map([
        [FIXTURE, bare],
        [DOC_PROGRAM, docBlock('docs/embedding.md', '# Embed eddy in your app', 'ts')],
      ]),
    );
  });

  it('a literal with a misspelt field, a wrong node shape, an unchecked unknown or data of another type does not compile, with the message the fixture names', () => {
    const expected = expectedErrors(readFileSync(FIXTURE, 'utf8'));
    expect(expected).to.have.length.of.at.least(12);
    const found = errors.get(FIXTURE)!;
    // exactly the marked lines fail: the accepted forms above them compile
    expect([...new Set(found.map((e) => e.line))]).to.deep.equal(expected.map((e) => e.line));
    for (const { line, message } of expected) {
      const messages = found.filter((e) => e.line === line).map((e) => e.message);
      expect(messages.join('\n'), `line ${line}: ${messages.join(' | ')}`).to.contain(message);
    }
  });

  it("docs/embedding.md's program compiles against the sources", () => {
    expect(errors.get(DOC_PROGRAM)).to.deep.equal([]);
  });

  it('PipelineArtefact has the fields of the pipeline schema, required where the schema requires them', () => {
    const schema = artefactSchemas({ codecs: [], preprocessors: [], postprocessors: [] }).pipeline as {
      required: string[];
      properties: Record<string, unknown> & { nodes: { items: { required: string[]; properties: Record<string, unknown> } } };
    };
    const fields: Keys<PipelineArtefact> = { id: true, description: true, interface: true, nodes: true, links: true, metrics_interval_s: true };
    const required: Keys<Pick<PipelineArtefact, RequiredKeys<PipelineArtefact>>> = { id: true, nodes: true };
    expect(Object.keys(fields).sort()).to.deep.equal(Object.keys(schema.properties).sort());
    expect(Object.keys(required).sort()).to.deep.equal(schema.required.slice().sort());
    const nodeFields: Keys<PipelineNode> = { id: true, type: true, config: true, description: true };
    const nodeRequired: Keys<Pick<PipelineNode, RequiredKeys<PipelineNode>>> = { id: true, type: true };
    expect(Object.keys(nodeFields).sort()).to.deep.equal(Object.keys(schema.properties.nodes.items.properties).sort());
    expect(Object.keys(nodeRequired).sort()).to.deep.equal(schema.properties.nodes.items.required.slice().sort());
  });

  it('what compiles is still validated when the operator is made: a misspelt operator type, an unknown value', () => {
    expect(() => pipelineOperator({ id: 'p', nodes: [{ id: 'n', type: 'runtime::cell' }] })).to.throw(
      "pipeline 'p': nodes[0].type: unknown operator 'runtime::cell' (did you mean 'runtime::cel'?) (known: ",
    );
    const parsed: unknown = JSON.parse('{"id":"p","nodes":[{"id":"n","type":"passthrough"}]}');
    // validatePipeline fills in what publishing fills in: the interface, and links chaining the nodes
    expect(validatePipeline(parsed)).to.deep.include({ interface: { inputs: ['in'], outputs: ['out', 'err'] }, links: { in: ['n'], n: ['out'] } });
    expect(() => validatePipeline({ id: 'p', nodes: [{ id: 'n' }] })).to.throw("pipeline 'p': nodes[0]: missing required field 'type'");
  });
});
