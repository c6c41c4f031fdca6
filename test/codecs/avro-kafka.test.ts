import { expect } from 'chai';
import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { resolve } from 'node:path';
import { call, startRuntime, type Started } from '../helpers/runtime';
import { requireService, skipWithout } from '../helpers/services';
import { Peer, brokerOf, unique } from '../connectors/kafka/helpers';
import { codec } from './support';

const FIXTURES = resolve(__dirname, '../../../test/fixtures/registry');
const PYTHON = resolve(process.env.EDDY_PYTHON_PEERS ?? '/var/cache/eddy-peers/python', 'bin/python');

/** Runs the Python peer (Confluent's client) to its end; resolves with what it printed. */
function peer(args: string[], input = ''): Promise<string> {
  return new Promise((done, fail) => {
    const child = spawn(PYTHON, [resolve(FIXTURES, 'avro_peer.py'), ...args], { stdio: ['pipe', 'pipe', 'pipe'] });
    let out = '';
    let err = '';
    child.stdout.on('data', (d: Buffer) => (out += d.toString()));
    child.stderr.on('data', (d: Buffer) => (err += d.toString()));
    child.on('error', fail);
    child.on('close', (code) => (code === 0 ? done(out) : fail(new Error(`avro_peer.py ${args[0]} exited ${code}: ${err}`))));
    child.stdin.end(input);
  });
}

const json = codec('json');

describe('avro with a schema registry end to end: Confluent client -> kafka -> eddy (avro decode, pipeline, avro encode) -> kafka -> Confluent client', function () {
  this.timeout(120000);
  let broker: string;
  let registry: string;
  let rt: Started | undefined;
  let kafka: Peer;

  before(async function () {
    broker = brokerOf(await requireService(this, 'kafka'));
    const { host, port } = await requireService(this, 'registry');
    registry = `http://${host}:${port}/apis/ccompat/v7`;
    if (!existsSync(PYTHON)) skipWithout(this, 'registry', `the Python peer ${PYTHON} is missing`, 'install it with scripts/install-peers');
    kafka = new Peer(broker);
  });
  after(async () => {
    await rt?.stop();
    await kafka?.close();
  });

  it('every record comes back as the Confluent client wrote it, 64-bit ids, decimals and timestamps exact', async () => {
    const input = unique('avro-in');
    const output = unique('avro-out');
    await kafka.createTopic(input);
    await kafka.createTopic(output);
    const ids = [0, -1, 2 ** 53, 2n ** 53n + 1n, 2n ** 63n - 1n, -(2n ** 63n), 1700000000123456789n, 42];
    const records = ids.map((id, i) => ({
      id,
      who: `customer ${i} ✓`,
      amount: i / 3,
      price: `${i % 2 === 0 ? '' : '-'}${i * 1234}.${String(i * 7)
        .padStart(2, '0')
        .slice(-2)}`,
      at: 1700000000000 + i,
      tags: Array.from({ length: i % 3 }, (_, k) => `t${k}`),
      note: i % 2 === 0 ? null : `note ${i}`,
    }));
    const lines = records.map((r) => json.encode(r).toString()).join('\n');
    await peer(['produce', broker, registry, input, resolve(FIXTURES, 'payment.avsc')], lines);

    rt = await startRuntime();
    const avroIn = { name: 'avro', config: { registry: { url: registry, topic: input } } };
    const avroOut = {
      name: 'avro',
      config: { schema_file: resolve(FIXTURES, 'payment.avsc'), registry: { url: registry, topic: output, auto_register: true } },
    };
    const publish = async (kind: string, body: unknown) => expect((await call(rt!.base, 'POST', `/${kind}`, { body })).status, kind).to.equal(201);
    await publish('onramp', {
      id: 'payments',
      type: 'kafka',
      codec: avroIn,
      config: { group_id: unique('avro'), topics: [input], brokers: [broker], rdkafka_options: { 'auto.offset.reset': 'earliest' } },
    });
    await publish('offramp', { id: 'relay', type: 'kafka', codec: avroOut, config: { topic: output, brokers: [broker] } });
    await publish('binding', {
      id: 'copy',
      links: {
        '/onramp/payments/{instance}/out': ['/pipeline/system::passthrough/{instance}/in'],
        '/pipeline/system::passthrough/{instance}/out': ['/offramp/relay/{instance}/in'],
      },
    });
    expect((await call(rt.base, 'POST', '/binding/copy/one')).status).to.equal(201);

    const read = await peer(['consume', broker, registry, output, String(records.length)]);
    const got = read
      .trim()
      .split('\n')
      .map((line) => json.decode(Buffer.from(line), 0n));
    expect(got).to.deep.equal(records);
    // and eddy wrote the id the registry holds for the schema under <topic>-value
    const [message] = await kafka.readTopic(output, 1);
    const latest = (await (await fetch(`${registry}/subjects/${output}-value/versions/latest`)).json()) as { id: number };
    expect(message.value![0]).to.equal(0);
    expect(message.value!.readUInt32BE(1)).to.equal(latest.id);
  });
});
