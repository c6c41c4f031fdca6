import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { basename, join } from 'node:path';
import { ROOT } from './readme';

export const EXAMPLES = join(ROOT, 'examples');

/**
 * The fixed ports the examples under examples/ are written with: they are
 * user documentation and keep ports a reader can type (and `npm start -- -f`
 * runs them as written). A test never runs them on these ports, where
 * another program (or a second test run) may already listen: it runs a copy
 * with each one replaced (`exampleCopy`). test/examples/examples.test.ts
 * checks that this table names every port an example listens on or sends to.
 */
export const EXAMPLE_PORTS: Readonly<Record<string, readonly number[]>> = {
  'chat.yaml': [8140], // the Discord stand-in's API
  'logvendor.yaml': [8089], // the Log API endpoint
  'otel.yaml': [4317], // OTLP/gRPC, the standard port a local agent may hold
  'rest.yaml': [8180],
  'tcp.yaml': [14242],
  'udp.yaml': [12201],
  'ws.yaml': [8139],
};

let dir: string | undefined;

/**
 * A copy of `examples/<name>` with every occurrence of each port in
 * `ports` (as a whole number, in the config and its comments alike)
 * replaced by the port it maps to: a free one of the test's own, or 0 where
 * the connector picks one and logs it. Every port of the example's
 * EXAMPLE_PORTS entry must be mapped, and each must occur, so an example
 * that changes its ports fails here instead of running on a fixed one.
 * Returns the copy's path; the copies are removed when the process exits.
 */
export function exampleCopy(name: string, ports: Record<number, number | string>): string {
  const documented = [...(EXAMPLE_PORTS[name] ?? [])].sort();
  const given = Object.keys(ports).map(Number).sort();
  if (documented.join() !== given.join()) throw new Error(`examples/${name}: its fixed ports are [${documented.join(', ')}], the test maps [${given.join(', ')}]`);
  let text = readFileSync(join(EXAMPLES, name), 'utf8');
  for (const [from, to] of Object.entries(ports)) {
    const literal = new RegExp(`\\b${from}\\b`, 'g');
    if (!literal.test(text)) throw new Error(`examples/${name} no longer holds port ${from}`);
    text = text.replace(literal, String(to));
  }
  if (dir === undefined) {
    const made = (dir = mkdtempSync(join(tmpdir(), 'eddy-examples-')));
    process.once('exit', () => rmSync(made, { recursive: true, force: true }));
  }
  const file = join(dir, `${process.hrtime.bigint()}-${basename(name)}`);
  writeFileSync(file, text);
  return file;
}
