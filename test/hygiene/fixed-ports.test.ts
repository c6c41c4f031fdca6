import { expect } from 'chai';
import { readdirSync, readFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { EXAMPLE_PORTS, SERVICE_PORTS } from '../helpers/examples';
import { ROOT } from '../helpers/readme';

/**
 * Tests bind ephemeral ports, never fixed ones: other work runs on this
 * machine (another eddy on 9898, an OpenTelemetry agent on 4317, a second
 * test run). This reads the test sources for a literal port where a port is
 * bound or reached, and for the fixed ports the README and the examples are
 * written with; the exceptions below say why each is no binding.
 */

/** A literal port (group 1) in a place that binds or reaches it. */
const BOUND = [
  /\bport['"]?\s*[:=]\s*([1-9]\d*)\b/g, // port: 8180, dst_port: 12201, port = 4317
  /\.(?:listen|bind|start)\(\s*([1-9]\d*)\b/g, // server.listen(8181), StandIn.start(8140)
  /\b(?:connect|createConnection)\(\s*([1-9]\d*)\b/g, // connect(14242, ...)
  /--api-port['"],\s*['"]([1-9]\d*)/g, // ['--api-port', '9898']
  /\b(?:127\.0\.0\.1|localhost)[: ]([1-9]\d*)\b/g, // http://127.0.0.1:9898/, nc 127.0.0.1 14242
];

/** The README's ports (the API's default, the quick start's onramp) and the examples'. */
const FIXED = [9898, 8181, ...Object.values(EXAMPLE_PORTS).flatMap((ports) => Object.keys(ports).map(Number))];

/** Ports no test needs to own: the shared servers of scripts/services, and 1, where nothing listens (a refused connection). */
const REACHABLE = new Set([...SERVICE_PORTS, 1]);

/** Lines that name a port but bind nothing: [file, text on the line, why]. An entry that no longer matches fails too. */
const EXCEPTIONS: [string, string, string][] = [
  ['test/api/security.test.ts', 'port: 9898', "parseRunArgs' default, parsed only"],
  ['test/cli/server-run.test.ts', 'port: 9898', "parseRunArgs' default, parsed only"],
  ['test/cli/server-run.test.ts', "'--api-port', '1234'", 'parsed only'],
  ['test/cli/server-run.test.ts', 'port: 1234', 'parsed only'],
  ['test/cli/status.test.ts', 'http://127.0.0.1:9898', "the console's default API URL, parsed only"],
  ['test/observe/tap-cli.test.ts', 'http://127.0.0.1:9898', "eddy tap's default API URL, parsed only"],
  ['test/docs/observe.test.ts', "replaceAll('127.0.0.1:9898'", "docs/observe.md's port, replaced by the test's own"],
  ['test/docs/rest-api.test.ts', "substituted(line, '127.0.0.1:9898'", "docs/rest-api.md's port, replaced by the test's own"],
  ['test/connectors/rest/e2e.test.ts', "replace('127.0.0.1:8180/'", "examples/README.md's port, replaced by the test's own"],
  ['test/docs/quick-start.test.ts', 'const API_PORT = 9898', "the README's port: replaced by the test's own, and held while it runs"],
  ['test/docs/quick-start.test.ts', 'const ONRAMP_PORT = 8181', "the README's port: replaced by the test's own, and held while it runs"],
  ['test/connectors/rest/onramp.test.ts', 'port: 9000', "a request URL's port, parsed into the event's meta"],
  ['test/connectors/pubsub/e2e.test.ts', "connect(9, '192.0.2.1')", 'TEST-NET-1: reached nowhere'],
  ['test/workers/placement.test.ts', 'port: 14243', 'published to decide the placement, never activated'],
  ['test/processors/config.test.ts', '8180-byte chunks', 'a chunk size, no port'],
  ['test/processors/config.test.ts', 'Buffer.alloc(8181)', 'a message size, no port'],
  ['test/processors/config.test.ts', '12 + 8180', 'a chunk size, no port'],
];

/** Files that are the list of fixed ports: the examples' table, and this test. */
const TABLES = ['test/helpers/examples.ts', 'test/hygiene/fixed-ports.test.ts'];

function* sources(dir: string): Generator<string> {
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) yield* sources(path);
    else if (entry.name.endsWith('.ts')) yield path;
  }
}

describe('no test binds a fixed port', () => {
  it('the test sources name no literal port where one is bound or reached, and none of the fixed ports of the README and the examples', () => {
    const found: string[] = [];
    const used = new Set<number>();
    for (const path of [...sources(join(ROOT, 'test')), ...sources(join(ROOT, 'marble-tests'))]) {
      const file = relative(ROOT, path);
      if (TABLES.includes(file)) continue;
      readFileSync(path, 'utf8')
        .split('\n')
        .forEach((line, i) => {
          const text = line.trim();
          if (text.startsWith('//') || text.startsWith('*') || text.startsWith('/*')) return; // a comment binds nothing
          if (text.includes('exampleCopy(')) return; // the example's fixed port, mapped to the test's own
          const bound = BOUND.flatMap((re) => [...line.matchAll(re)].map((m) => Number(m[1]))).filter((port) => !REACHABLE.has(port));
          const fixed = FIXED.filter((port) => new RegExp(`\\b${port}\\b`).test(line));
          if (bound.length === 0 && fixed.length === 0) return;
          const exception = EXCEPTIONS.findIndex(([f, on]) => f === file && line.includes(on));
          if (exception >= 0) used.add(exception);
          else found.push(`${file}:${i + 1}: ${text}`);
        });
    }
    expect(found, 'bind port 0 (or a free port) instead, or add an exception saying why the line binds nothing').to.deep.equal([]);
    expect(
      EXCEPTIONS.filter((_e, i) => !used.has(i)).map(([f, on]) => `${f}: ${on}`),
      'exceptions that match nothing any more',
    ).to.deep.equal([]);
  });
});
