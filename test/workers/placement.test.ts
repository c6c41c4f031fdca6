import { expect } from 'chai';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { Registries } from '../../src/runtime/registries';
import { Runtime } from '../../src/runtime/runtime';
import { placementOf } from '../../src/workers/placement';
import type { Placement } from '../../src/connectors/connector';
import { ROOT } from '../helpers/readme';
import { createLogger } from '../../src/core/logger';

/** The placement table of docs/workers.md: type → [onramp cell, offramp cell]. */
function placementTable(): Map<string, [string, string]> {
  const page = readFileSync(join(ROOT, 'docs', 'workers.md'), 'utf8');
  const section = page.slice(page.indexOf('\n## Placement\n')).split(/\n## /)[1];
  const rows = section.split('\n').filter((l) => /^\| [a-z]+ \|/.test(l));
  return new Map(rows.map((r) => r.split('|').map((c) => c.trim())).map((c) => [c[1], [c[2], c[3]]]));
}

/** What a table cell must say for a declared placement: a function depends on the config, so the cell names both. */
function expectedCell(declared: Placement | ((c: never) => Placement) | undefined): (cell: string) => boolean {
  if (typeof declared === 'function') return (cell) => cell.startsWith('every worker') && cell.includes('one');
  if (declared === 'every-worker') return (cell) => cell === 'every worker';
  return (cell) => cell === 'one';
}

describe('placement under --workers', function () {
  this.timeout(20000);
  const registries = Registries.withBuiltins();

  it("the docs/workers.md table states each connector type's placement as its type declares it", () => {
    const table = placementTable();
    const types = new Set([...registries.onramps.names(), ...registries.offramps.names()]);
    expect([...table.keys()].sort()).to.deep.equal([...types].sort());
    for (const [name, [onramp, offramp]] of table) {
      if (registries.onramps.has(name)) expect(expectedCell(registries.onramps.get(name).placement)(onramp), `${name} onramp: '${onramp}'`).to.equal(true);
      else expect(onramp, name).to.equal('');
      if (registries.offramps.has(name)) expect(expectedCell(registries.offramps.get(name).placement)(offramp), `${name} offramp: '${offramp}'`).to.equal(true);
      else expect(offramp, name).to.equal('');
    }
  });

  describe('of an activation', () => {
    const runtime = new Runtime({ logger: createLogger('silent') });
    const { repository } = runtime;
    after(() => runtime.shutdown());
    before(async () => {
      await runtime.start();
      repository.publish('onramp', { id: 'net', type: 'tcp', config: { host: '127.0.0.1', port: 0 } });
      repository.publish('onramp', { id: 'lines', type: 'file', config: { source: 'x.json' } });
      repository.publish('onramp', { id: 'group', type: 'nats', config: { hosts: ['127.0.0.1:4222'], subject: 's', queue: 'q' } });
      repository.publish('onramp', { id: 'plain', type: 'nats', config: { hosts: ['127.0.0.1:4222'], subject: 's' } });
      repository.publish('offramp', { id: 'send', type: 'tcp', config: { host: '127.0.0.1', port: 14243 } });
      repository.publish('offramp', { id: 'write', type: 'file', config: { file: 'out.json' } });
      const wal = (dir?: string) => ({ type: 'qos::wal', config: { read_count: 1, max_elements: 10, ...(dir ? { dir } : {}) } });
      repository.publish('pipeline', {
        id: 'durable',
        interface: { inputs: ['in'], outputs: ['out'] },
        nodes: [{ id: 'w', ...wal('/tmp/wal') }],
        links: { in: ['w'], w: ['out'] },
      });
      repository.publish('pipeline', {
        id: 'scratch',
        interface: { inputs: ['in'], outputs: ['out'] },
        nodes: [{ id: 'w', ...wal() }],
        links: { in: ['w'], w: ['out'] },
      });
    });
    const binding = (onramp: string, pipeline: string, offramp: string) => ({
      id: 'b',
      links: { [`/onramp/${onramp}/main/out`]: [`/pipeline/${pipeline}/main/in`], [`/pipeline/${pipeline}/main/out`]: [`/offramp/${offramp}/main/in`] },
    });
    const of = (onramp: string, pipeline: string, offramp: string) => placementOf('binding', binding(onramp, pipeline, offramp), repository, registries);

    it('runs on every worker when every part shards', () => {
      expect(of('net', 'system::passthrough', 'send')).to.deep.equal({ placement: 'every-worker' });
      expect(of('group', 'scratch', 'send')).to.deep.equal({ placement: 'every-worker' });
    });

    it('runs on one worker when a source cannot shard, a sink cannot be shared or a WAL keeps a directory, and says which part', () => {
      expect(of('lines', 'system::passthrough', 'send')).to.deep.equal({ placement: 'one-worker', reason: "onramp 'lines' (file) runs on one worker" });
      expect(of('plain', 'system::passthrough', 'send')).to.deep.equal({ placement: 'one-worker', reason: "onramp 'plain' (nats) runs on one worker" });
      expect(of('net', 'system::passthrough', 'write')).to.deep.equal({ placement: 'one-worker', reason: "offramp 'write' (file) runs on one worker" });
      expect(of('net', 'durable', 'send')).to.deep.equal({
        placement: 'one-worker',
        reason: "pipeline 'durable' keeps a write-ahead log in one directory (node 'w')",
      });
    });

    it('places a directly activated ramp by its own type', () => {
      expect(placementOf('onramp', repository.get('onramp', 'net'), repository, registries).placement).to.equal('every-worker');
      expect(placementOf('offramp', repository.get('offramp', 'write'), repository, registries).placement).to.equal('one-worker');
    });
  });
});
