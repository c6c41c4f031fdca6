import { expect } from 'chai';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { firstValueFrom, from, toArray } from 'rxjs';
import { parse } from 'yaml';
import { pipelinePorts } from '../../src/embed/pipeline-operator';
import { validatePipeline } from '../../src/embed/standalone';
import { Runtime } from '../../src/runtime/runtime';
import { docBlock, ROOT } from '../helpers/readme';

/** The pages whose yaml blocks are pipeline nodes, or the config of a runtime::cel node, that a user pastes into a pipeline. */
const PAGES = ['docs/cel.md', 'docs/stream-processing.md'];

function yamlBlocks(file: string): string[] {
  return [...readFileSync(join(ROOT, file), 'utf8').matchAll(/^```yaml\n([\s\S]*?)^```$/gm)].map((m) => m[1]);
}

/** A block as the nodes of a pipeline: a list of nodes as it stands, a map as the config of a runtime::cel node. */
function nodesOf(block: string): { id: string; type: string; config?: unknown }[] {
  const parsed = parse(block) as unknown;
  return Array.isArray(parsed) ? (parsed as { id: string; type: string }[]) : [{ id: 'snippet', type: 'runtime::cel', config: parsed }];
}

/** Each node between `in` and `out` (its errors to `err`), side by side. */
function pipelineOf(id: string, nodes: { id: string }[]): object {
  const links: Record<string, string[]> = { in: nodes.map((n) => n.id) };
  for (const n of nodes) {
    links[n.id] = ['out'];
    links[`${n.id}/err`] = ['err'];
  }
  return { id, interface: { inputs: ['in'], outputs: ['out', 'err'] }, nodes, links };
}

describe('the pipeline snippets of the docs', () => {
  for (const page of PAGES) {
    yamlBlocks(page).forEach((block, i) => {
      it(`${page}, yaml block ${i + 1}, publishes in a pipeline (schema and checks at publish)`, () => {
        const runtime = new Runtime();
        expect(() => runtime.publish('pipeline', pipelineOf(`snippet_${String.fromCharCode(97 + i)}` /* ids have no digits */, nodesOf(block)))).not.to.throw();
      });
    });
  }

  it("docs/cel.md's string functions do what its comments say: words and host_key in meta, a short path to err", async () => {
    const artefact = pipelineOf('strings', nodesOf(docBlock('docs/cel.md', '## String functions', 'yaml')));
    const events = [
      { msg: 'a short log line', host: 'web.example.org', path: '/x' },
      { msg: 'GET /api/users 200', host: 'web.example.org', path: '/api/users' },
      { msg: 'GET /health 200', host: 'db.example.org', path: '/health' },
    ];
    const out = await firstValueFrom(from(events).pipe(pipelinePorts(validatePipeline(artefact)), toArray()));
    const byPort = (port: string) => out.filter((p) => p.port === port).map((p) => p.event);
    expect(byPort('out').map((e) => [e.meta.words, e.meta.host_key, (e.data as { path: string }).path])).to.deep.equal([
      [3, 'web_example_org', '/api/users'],
    ]);
    // the short path is an error (substring past its end), the other one filtered out
    expect(byPort('err').map((e) => (e.data as { path: string }).path)).to.deep.equal(['/x']);
  });
});
