import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { basename, join } from 'node:path';
import { ROOT } from './readme';
import { freePort } from '../connectors/net-helpers';

export const EXAMPLES = join(ROOT, 'examples');

/**
 * The fixed ports the examples under examples/ are written with: they are
 * user documentation and keep ports a reader can type (and `npm start -- -f`
 * runs them as written). A test never runs them on these ports, where
 * another program (or a second test run) may already listen: it runs a copy
 * with each one replaced (`exampleCopy`). test/examples/examples.test.ts
 * checks that this table names every port an example listens on or sends to.
 */
export const EXAMPLE_PORTS: Readonly<Record<string, Readonly<Record<number, 'tcp' | 'udp'>>>> = {
  'chat.yaml': { 8140: 'tcp' }, // the Discord stand-in's API
  'logvendor.yaml': { 8089: 'tcp' }, // the Log API endpoint
  'otel.yaml': { 4317: 'tcp' }, // OTLP/gRPC: the standard port, which a local agent or collector may hold
  'rest.yaml': { 8180: 'tcp' },
  'tcp.yaml': { 14242: 'tcp' }, // the onramp's port and the offramp's target
  'udp.yaml': { 12201: 'udp' }, // the onramp's port and the offramp's destination
  'ws.yaml': { 8139: 'tcp' },
};

/**
 * The shared servers of scripts/services (test/helpers/services.ts), which
 * the examples and the tests talk to where they are: postgres, rabbitmq,
 * nats, kafka, elastic, the Pub/Sub fake.
 */
export const SERVICE_PORTS: readonly number[] = [5432, 5672, 4222, 9092, 9200, 8085];

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
  const documented = Object.keys(EXAMPLE_PORTS[name] ?? {}).sort();
  const given = Object.keys(ports).sort();
  if (documented.join() !== given.join())
    throw new Error(`examples/${name}: its fixed ports are [${documented.join(', ')}], the test maps [${given.join(', ')}]`);
  let text = readFileSync(join(EXAMPLES, name), 'utf8');
  for (const [from, to] of Object.entries(ports)) {
    const literal = new RegExp(`\\b${from}\\b`, 'g');
    if (!text.match(literal)) throw new Error(`examples/${name} no longer holds port ${from}`);
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

/** `exampleCopy` with each fixed port of the example replaced by a free one (of its protocol); returns the copy and the ports it got. */
export async function exampleOnFreePorts(name: string): Promise<{ file: string; ports: Record<number, number> }> {
  const ports: Record<number, number> = {};
  for (const [port, protocol] of Object.entries(EXAMPLE_PORTS[name] ?? {})) ports[Number(port)] = await freePort(protocol);
  return { file: exampleCopy(name, ports), ports };
}
