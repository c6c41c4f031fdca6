/**
 * eddy processes (bin/eddy with a config file) relaying one topic into
 * another with commit on ack, killed with SIGKILL while they work: nothing
 * may be lost; what is delivered twice is counted and reported.
 */
import { expect } from 'chai';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { eventually } from '../../helpers/runtime';
import { requireService } from '../../helpers/services';
import { Peer, brokerOf, relayConfig, spawnEddy, tail, unique, type EddyChild } from './helpers';

/** The payloads 0..count-1, numbered from `from`. */
const numbered = (from: number, count: number) => Array.from({ length: count }, (_, i) => JSON.stringify({ n: from + i, pad: 'x'.repeat(64) }));

function report(what: string, delivered: string[], expected: string[]): number {
  const duplicates = delivered.length - new Set(delivered).size;
  console.log(`      ${what}: ${expected.length} events, ${delivered.length} delivered, ${duplicates} duplicates, none lost`);
  return duplicates;
}

describe('kafka: eddy processes killed while they relay (at least once, commit on ack)', function () {
  this.timeout(90000);
  let broker: string;
  let peer: Peer;
  let dir: string;
  const children: EddyChild[] = [];
  const closers: (() => Promise<void>)[] = [];

  before(async function () {
    broker = brokerOf(await requireService(this, 'kafka'));
    peer = new Peer(broker);
    dir = mkdtempSync(join(tmpdir(), 'eddy-kafka-'));
  });
  after(async () => {
    await peer?.close();
    if (dir) rmSync(dir, { recursive: true, force: true });
  });
  afterEach(async () => {
    await Promise.all(children.splice(0).map((c) => c.kill('SIGKILL')));
    for (const close of closers.splice(0)) await close();
  });

  it('loses nothing when the consumer is killed with SIGKILL in the middle and started again', async () => {
    const input = unique('kill-in');
    const output = unique('kill-out');
    const group = unique('kill');
    await peer.createTopic(input, 2);
    await peer.createTopic(output);
    const sent = numbered(0, 10000);
    const produce = (values: string[]) =>
      peer.produce(
        input,
        values.map((value) => ({ value })),
      );
    // half before the kill, half after: the relay cannot be done when the first process dies, however fast it ran
    await produce(sent.slice(0, 5000));
    const out = await tail(peer, output);
    closers.push(out.close);
    const config = relayConfig(dir, broker, group, input, output);

    const first = spawnEddy(config);
    children.push(first);
    await eventually(() => out.values.length >= 1000, 30000, 'the first process relaying');
    await first.kill('SIGKILL');
    const atKill = new Set(out.values).size;
    expect(atKill, 'killed before it had relayed everything').to.be.below(sent.length);
    await produce(sent.slice(5000));

    const second = spawnEddy(config);
    children.push(second);
    await eventually(() => new Set(out.values).size === sent.length, 60000, `all ${sent.length} events in ${output}`);
    expect(new Set(out.values)).to.deep.equal(new Set(sent));
    report(`killed after ${atKill}`, out.values, sent);
    // and the second one committed everything, so a third would start at the end
    await eventually(async () => Object.values(await peer.committed(group, input)).reduce((a, b) => a + b, 0) === sent.length, 30000, 'everything committed');
  });

  it('scales out: two processes with one config share a 4-partition topic; when one dies its partitions move and nothing is lost', async () => {
    const input = unique('scale-in');
    const output = unique('scale-out');
    const group = unique('scale');
    await peer.createTopic(input, 4);
    await peer.createTopic(output);
    const out = await tail(peer, output);
    closers.push(out.close);
    const config = relayConfig(dir, broker, group, input, output);
    const all = [0, 1, 2, 3].map((p) => `${input}/${p}`);

    const a = spawnEddy(config);
    const b = spawnEddy(config);
    children.push(a, b);
    // one group, two members: two partitions each
    await eventually(
      () => a.assigned().length === 2 && b.assigned().length === 2 && new Set([...a.assigned(), ...b.assigned()]).size === 4,
      30000,
      'the partitions shared two and two',
    );
    expect([...a.assigned(), ...b.assigned()].sort()).to.deep.equal(all);

    const before = numbered(0, 2000);
    await peer.produce(
      input,
      before.map((value, i) => ({ value, partition: i % 4 })),
    );
    await eventually(() => new Set(out.values).size >= before.length / 2, 30000, 'both relaying');

    await a.kill('SIGKILL');
    const after = numbered(before.length, 2000);
    await peer.produce(
      input,
      after.map((value, i) => ({ value, partition: i % 4 })),
    );
    // the group notices the dead member after its session timeout; the survivor then owns all four partitions
    await eventually(() => b.assigned().length === 4, 30000, 'the survivor assigned all four partitions');
    expect(b.assigned()).to.deep.equal(all);
    const expected = [...before, ...after];
    await eventually(() => new Set(out.values).size === expected.length, 30000, `all ${expected.length} events in ${output}`);
    expect(new Set(out.values)).to.deep.equal(new Set(expected));
    report('one of two killed', out.values, expected);
  });
});
