import { expect } from 'chai';
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import ts from 'typescript';
import { ROOT } from '../helpers/readme';

/**
 * Layers hold: a module imports only from its own module and from lower
 * layers. This reads every import of src/ and tools/ (`import`, `export ...
 * from`, `import type`, `require()`, `import()`), maps both ends to a module
 * by path, and fails on each import from a module into a higher layer or into
 * another module of its own layer (modules of one layer know nothing of each
 * other), and on each import cycle between files. docs/development.md
 * (## Layers) writes the same order down in words.
 *
 * Type-only imports count: a type names the other module's design as much
 * as a value does, and once the types run backwards the values follow.
 */

/**
 * The layers, lowest first; each holds modules, each module is a list of path
 * prefixes from the repository root (a folder ends with '/'). A prefix
 * ending in '*\/' makes every folder under it a module of its own. A file
 * belongs to the module of its longest matching prefix.
 */
const LAYERS: { name: string; modules: Record<string, string[]> }[] = [
  { name: 'core', modules: { core: ['src/core/', 'src/version.ts'] } },
  { name: 'schema', modules: { schema: ['src/schema/'] } },
  {
    name: 'components',
    modules: { codecs: ['src/codecs/'], processors: ['src/processors/'], contraflow: ['src/contraflow/'], net: ['src/net/'] },
  },
  {
    name: 'engine and connector toolkit',
    modules: { pipeline: ['src/pipeline/'], 'connector toolkit': ['src/connectors/connector.ts', 'src/connectors/_shared/'] },
  },
  // the onramp/offramp machinery that runs any connector type (preprocess, decode; encode, postprocess, send), beside the types
  { name: 'connector types and ramps', modules: { 'connectors/*': ['src/connectors/*/'], ramps: ['src/ramps/'] } },
  { name: 'catalogs', modules: { catalogs: ['src/connectors/catalog.ts', 'src/connectors/index.ts', 'src/builtins.ts', 'src/system-artefacts.ts'] } },
  { name: 'runtime', modules: { runtime: ['src/runtime/'] } },
  // below the API, which applies a whole config document with the loader's own code (POST /config)
  { name: 'config files', modules: { config: ['src/config/'] } },
  {
    name: 'on the runtime',
    modules: { embed: ['src/embed/'], workers: ['src/workers/'], api: ['src/api/'], terminal: ['src/terminal/'] },
  },
  { name: 'testing', modules: { testing: ['src/testing/'] } },
  { name: 'entry points', modules: { entry: ['src/index.ts', 'src/cli.ts', 'src/cli/', 'src/cli-entry.ts'] } },
  { name: 'build tools', modules: { tools: ['tools/'] } },
];

/** The folders read: the shipped sources, and the build tools. */
const SCANNED = ['src', 'tools'];

/** Imports that still break the rule: [importing file, imported file, why]. An entry that matches nothing any more fails too. */
const EXCEPTIONS: [string, string, string][] = [];

/** Edges that close a cycle between files still there: [importing file, imported file, why]. Cutting them must leave no cycle. */
const CYCLE_EXCEPTIONS: [string, string, string][] = [];

interface Place {
  layer: number;
  module: string;
}

/** The layer and module of a file (a path from the root), or undefined when no prefix matches. */
export function placeOf(file: string): Place | undefined {
  let best: (Place & { length: number }) | undefined;
  LAYERS.forEach(({ modules }, layer) => {
    for (const [module, prefixes] of Object.entries(modules)) {
      for (const prefix of prefixes) {
        let name = module;
        let matches: boolean;
        if (prefix.endsWith('*/')) {
          const base = prefix.slice(0, -2);
          const rest = file.startsWith(base) ? file.slice(base.length) : '';
          matches = rest.includes('/');
          name = `${base}${rest.split('/')[0]}/`;
        } else {
          matches = prefix.endsWith('/') ? file.startsWith(prefix) : file === prefix;
        }
        if (matches && (!best || prefix.length > best.length)) best = { layer, module: name, length: prefix.length };
      }
    }
  });
  return best && { layer: best.layer, module: best.module };
}

function* sources(dir: string): Generator<string> {
  if (!existsSync(dir)) return;
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) yield* sources(path);
    else if (entry.name.endsWith('.ts') && !entry.name.endsWith('.d.ts')) yield path;
  }
}

/** The file a relative specifier names (from the root), or undefined for a package or a file that is no source (package.json). */
function resolveSource(from: string, specifier: string): string | undefined {
  if (!specifier.startsWith('.')) return undefined;
  const base = resolve(ROOT, dirname(from), specifier);
  for (const candidate of [`${base}.ts`, join(base, 'index.ts')]) {
    if (existsSync(candidate) && statSync(candidate).isFile()) return relative(ROOT, candidate);
  }
  return undefined;
}

/** Every file's imports of other sources: file -> imported files. */
export function importGraph(): Map<string, string[]> {
  const graph = new Map<string, string[]>();
  for (const dir of SCANNED) {
    for (const path of sources(join(ROOT, dir))) {
      const file = relative(ROOT, path);
      // preProcessFile lists import/export declarations (type-only too), require() and import()
      const { importedFiles } = ts.preProcessFile(readFileSync(path, 'utf8'), true, true);
      const targets = importedFiles.map((i) => resolveSource(file, i.fileName)).filter((t): t is string => t !== undefined);
      graph.set(file, [...new Set(targets)]);
    }
  }
  return graph;
}

/** The imports that break the layering, as "from -> to (why)". */
export function backwardImports(graph: Map<string, string[]>): { from: string; to: string; why: string }[] {
  const found: { from: string; to: string; why: string }[] = [];
  for (const [from, targets] of graph) {
    const a = placeOf(from)!;
    for (const to of targets) {
      const b = placeOf(to)!;
      if (a.module === b.module || b.layer < a.layer) continue;
      const why =
        b.layer > a.layer
          ? `${a.module} (${LAYERS[a.layer].name}) imports ${b.module} of a higher layer (${LAYERS[b.layer].name})`
          : `${a.module} imports ${b.module}, another module of its own layer (${LAYERS[a.layer].name})`;
      found.push({ from, to, why });
    }
  }
  return found;
}

/** The import edges that close a cycle between files: for each cycle, the edges inside it. */
export function cycles(graph: Map<string, string[]>): string[][] {
  // Tarjan's strongly connected components
  const index = new Map<string, number>();
  const low = new Map<string, number>();
  const stack: string[] = [];
  const onStack = new Set<string>();
  const components: string[][] = [];
  let next = 0;
  const visit = (v: string): void => {
    index.set(v, next);
    low.set(v, next++);
    stack.push(v);
    onStack.add(v);
    for (const w of graph.get(v) ?? []) {
      if (!index.has(w)) {
        visit(w);
        low.set(v, Math.min(low.get(v)!, low.get(w)!));
      } else if (onStack.has(w)) low.set(v, Math.min(low.get(v)!, index.get(w)!));
    }
    if (low.get(v) === index.get(v)) {
      const component: string[] = [];
      let w: string;
      do {
        w = stack.pop()!;
        onStack.delete(w);
        component.push(w);
      } while (w !== v);
      if (component.length > 1) components.push(component);
    }
  };
  for (const v of graph.keys()) if (!index.has(v)) visit(v);
  return components.map((c) => c.sort());
}

describe('layers hold (docs/development.md, ## Layers)', () => {
  const graph = importGraph();

  it('every source file belongs to a module of a layer', () => {
    expect(
      [...graph.keys()].filter((f) => !placeOf(f)),
      'add the folder to LAYERS in test/hygiene/layers.test.ts and to docs/development.md',
    ).to.deep.equal([]);
  });

  it('no module imports from a higher layer or from another module of its own layer', () => {
    const found = backwardImports(graph);
    const excepted = (f: { from: string; to: string }) => EXCEPTIONS.some(([from, to]) => from === f.from && to === f.to);
    expect(
      found.filter((f) => !excepted(f)).map((f) => `${f.from} -> ${f.to}: ${f.why}`),
      'move the code to the layer where it belongs, or pass what it needs in from above',
    ).to.deep.equal([]);
    expect(
      EXCEPTIONS.filter(([from, to]) => !found.some((f) => f.from === from && f.to === to)).map(([from, to]) => `${from} -> ${to}`),
      'exceptions that match nothing any more: delete them',
    ).to.deep.equal([]);
  });

  it('no two files import each other, directly or round a loop', () => {
    const isExcepted = (from: string, to: string) => CYCLE_EXCEPTIONS.some(([f, t]) => f === from && t === to);
    // the cycles left once the excepted edges are cut: each must be broken
    const cut = new Map([...graph].map(([from, targets]) => [from, targets.filter((to) => !isExcepted(from, to))]));
    expect(
      cycles(cut).map((c) => c.join(' <-> ')),
      'break the cycle: move what both need below both, or pass it in',
    ).to.deep.equal([]);
    const components = cycles(graph);
    expect(
      CYCLE_EXCEPTIONS.filter(([from, to]) => !(graph.get(from)?.includes(to) && components.some((c) => c.includes(from) && c.includes(to)))).map(
        ([from, to]) => `${from} -> ${to}`,
      ),
      'cycle exceptions that close no cycle any more: delete them',
    ).to.deep.equal([]);
  });
});
