import { expect } from 'chai';
import type { NatsConnection } from '@nats-io/nats-core';
import { jetstream, jetstreamManager, StorageType, type JetStreamManager } from '@nats-io/jetstream';
import type { EddyEvent } from '../../../src/core/event';
import { createLogger } from '../../../src/core/logger';
import type { OfframpType } from '../../../src/connectors/connector';
import type { OperatorType } from '../../../src/pipeline/operator';
import { map } from 'rxjs';
import { Runtime } from '../../../src/runtime/runtime';
import { eventually } from '../../helpers/runtime';
import { requireService } from '../../helpers/services';
import { passthrough } from '../net-helpers';
import { Collector, client, monitorBase, serviceHost, unique, waitForSubscribers } from './helpers';

const text = (s: string) => new TextEncoder().encode(s);

/** Publishes the artefacts and activates `binding` as instance `main`. */
async function run(runtime: Runtime, artefacts: [string, Record<string, unknown>][], binding: string): Promise<void> {
  await runtime.start();
  for (const [kind, artefact] of artefacts) runtime.publish(kind as 'onramp', artefact);
  await runtime.activate('binding', binding, 'main');
}

describe('nats through a runtime (against the nats service)', function () {
  this.timeout(30000);
  let nc: NatsConnection;
  let runtime: Runtime | undefined;

  before(async function () {
    await requireService(this, 'nats');
    nc = await client();
  });
  after(async () => nc?.close());
  afterEach(async () => {
    await runtime?.shutdown();
    runtime = undefined;
  });

  describe('JetStream: an offramp that fails an event', () => {
    let jsm: JetStreamManager;
    let stream: string;
    let subject: string;
    before(async () => (jsm = await jetstreamManager(nc)));
    beforeEach(async () => {
      stream = unique('EDDY_TEST');
      subject = unique('eddy.test.nak');
      await jsm.streams.add({ name: stream, subjects: [subject], storage: StorageType.Memory });
    });
    afterEach(async () => {
      await runtime?.shutdown();
      runtime = undefined;
      await jsm.streams.delete(stream).catch(() => undefined);
    });

    it("naks the event's message: the server delivers it again at once (not after ack_wait), and once delivered it is acked", async () => {
      const durable = unique('d');
      const js = jetstream(nc);
      for (let i = 0; i < 3; i++) await js.publish(subject, text(JSON.stringify({ i })));
      // every send the sink saw: i and how often the server had delivered its message
      const seen: { i: number; delivered: number }[] = [];
      const sink: OfframpType<Record<string, never>> = {
        name: 'refuse-once',
        defaultCodec: 'json',
        autoAck: true,
        configSchema: { type: 'object', additionalProperties: false, properties: {} },
        create: () => ({
          send(_payloads, event: EddyEvent) {
            const { i } = event.data as { i: number };
            const { delivered } = (event.meta.nats as { jetstream: { delivered: number } }).jetstream;
            seen.push({ i, delivered });
            if (i === 1 && delivered === 1) throw new Error('refused by the test');
          },
        }),
      };
      runtime = new Runtime({ logger: createLogger('silent') }).registerOfframp(sink);
      await run(
        runtime,
        [
          // ack_wait of ten minutes: a redelivery within the test comes from the nak, not from the server giving up on an ack
          ['onramp', { id: 'in', type: 'nats', config: { hosts: [serviceHost()], subject, jetstream: { stream, durable, ack_wait_ms: 600_000 } } }],
          ['pipeline', passthrough('p')],
          ['offramp', { id: 'out', type: 'refuse-once' }],
          [
            'binding',
            { id: 'b', links: { '/onramp/in/{instance}/out': ['/pipeline/p/{instance}/in'], '/pipeline/p/{instance}/out': ['/offramp/out/{instance}/in'] } },
          ],
        ],
        'b',
      );
      await eventually(() => seen.some((s) => s.i === 1 && s.delivered === 2), 20000, 'message 1 delivered again');
      // every message ends up acked: the ack floor passes a message only once it is acked
      await eventually(async () => (await jsm.consumers.info(stream, durable)).ack_floor.stream_seq === 3, 20000, 'all three acked');
      expect((await jsm.consumers.info(stream, durable)).num_ack_pending).to.equal(0);
      expect(seen.filter((s) => s.i === 1)).to.deep.equal([
        { i: 1, delivered: 1 },
        { i: 1, delivered: 2 },
      ]);
      expect(seen.filter((s) => s.i !== 1)).to.deep.equal([
        { i: 0, delivered: 1 },
        { i: 2, delivered: 1 },
      ]);
    });
  });

  describe('an event written out as the frame it came in as, unless something touched it', () => {
    it('relays untouched frames byte for byte, encodes afresh what another codec writes or an operator changed', async () => {
      const [inA, inB, inC] = [unique('eddy.lazy.in'), unique('eddy.lazy.in'), unique('eddy.lazy.in')];
      const [asJson, asString, changed, stamped] = [
        unique('eddy.lazy.json'),
        unique('eddy.lazy.string'),
        unique('eddy.lazy.changed'),
        unique('eddy.lazy.stamped'),
      ];
      const collectors = Object.fromEntries([asJson, asString, changed, stamped].map((s) => [s, new Collector(nc, s)]));
      await nc.flush();
      const nats = (subject: string) => ({ hosts: [serviceHost()], subject });
      // an embedder's operator that changes the value in place and forwards the same event object
      const stamp: OperatorType = {
        name: 'test::stamp',
        create: () =>
          map((event: EddyEvent) => {
            (event.data as Record<string, unknown>).stamped = true;
            return event;
          }),
      };
      runtime = new Runtime({ logger: createLogger('silent') }).registerOperator(stamp);
      await run(
        runtime,
        [
          ['onramp', { id: 'a', type: 'nats', config: nats(inA) }],
          ['onramp', { id: 'b', type: 'nats', config: nats(inB) }],
          ['onramp', { id: 'c', type: 'nats', config: nats(inC) }],
          ['pipeline', passthrough('relay')],
          [
            'pipeline',
            {
              id: 'stamp',
              interface: { inputs: ['in'], outputs: ['out'] },
              nodes: [{ id: 'stamp', type: 'test::stamp' }],
              links: { in: ['stamp'], stamp: ['out'] },
            },
          ],
          [
            'pipeline',
            {
              id: 'touch',
              interface: { inputs: ['in'], outputs: ['out'] },
              nodes: [{ id: 'cel', type: 'runtime::cel', config: { set: { seen: 'event.a + 1' } } }],
              links: { in: ['cel'], cel: ['out'] },
            },
          ],
          ['offramp', { id: 'json', type: 'nats', config: nats(asJson) }],
          ['offramp', { id: 'string', type: 'nats', codec: 'string', config: nats(asString) }],
          ['offramp', { id: 'changed', type: 'nats', config: nats(changed) }],
          ['offramp', { id: 'stamped', type: 'nats', config: nats(stamped) }],
          [
            'binding',
            {
              id: 'lazy',
              links: {
                '/onramp/a/{instance}/out': ['/pipeline/relay/{instance}/in'],
                '/pipeline/relay/{instance}/out': ['/offramp/json/{instance}/in', '/offramp/string/{instance}/in'],
                '/onramp/b/{instance}/out': ['/pipeline/touch/{instance}/in'],
                '/pipeline/touch/{instance}/out': ['/offramp/changed/{instance}/in'],
                '/onramp/c/{instance}/out': ['/pipeline/stamp/{instance}/in'],
                '/pipeline/stamp/{instance}/out': ['/offramp/stamped/{instance}/in'],
              },
            },
          ],
        ],
        'lazy',
      );
      await waitForSubscribers(monitorBase(), inA, 1);
      await waitForSubscribers(monitorBase(), inB, 1);
      await waitForSubscribers(monitorBase(), inC, 1);

      const canonical = '{"a":1,"big":12345678901234567890,"text":"é€😀"}';
      for (const frame of [canonical, '"just text"', '{"a": 2}']) nc.publish(inA, text(frame));
      nc.publish(inB, text('{"a":1}'));
      nc.publish(inC, text('{"a":1}'));
      const got = (subject: string, count: number) => eventually(() => collectors[subject].msgs.length === count, 10000, `${count} on ${subject}`);
      await Promise.all([got(asJson, 3), got(asString, 3), got(changed, 1), got(stamped, 1)]);

      // json -> json, nothing read: the frame itself, and a frame not in the codec's own form re-encoded compact
      expect(collectors[asJson].texts).to.deep.equal([canonical, '"just text"', '{"a":2}']);
      // json -> string: the string codec writes a string's text, not the JSON frame it came in as
      expect(collectors[asString].texts[1]).to.equal('just text');
      // runtime::cel set a field: the changed value goes out, not the frame
      expect(collectors[changed].texts).to.deep.equal(['{"a":1,"seen":2}']);
      // one changed the value in place, on the very event the onramp made: the value it now holds goes out
      expect(collectors[stamped].texts).to.deep.equal(['{"a":1,"stamped":true}']);
    });
  });
});
