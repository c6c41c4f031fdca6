import { expect } from 'chai';
import fc from 'fast-check';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { builtinCodecs } from '../../src/codecs';
import type { OfframpType } from '../../src/connectors/connector';
import { createLogger } from '../../src/core/logger';
import type { EddyEvent } from '../../src/core/event';
import { builtinPreprocessors } from '../../src/processors';
import { runProcessors, type ProcessorError } from '../../src/processors/processor';
import { Runtime } from '../../src/runtime/runtime';
import { FUZZ_SEED, fuzzInput, mutated, outcome, randomBytes } from '../codecs/fuzz-support';
import { codec, eddyValue, unsafeBigInt } from '../codecs/support';
import { avroOrder, codecSpec, protoOrder } from '../codecs/schema-support';
import { eventually } from '../helpers/runtime';
import { post, pre } from './support';

/**
 * Random and mutated bytes through a real onramp (issue 11, item 6): a file
 * onramp with each codec, and with each preprocessor. Each case's bytes are
 * also run through the same codec or chain directly, which says exactly
 * which values must reach `out` and which errors `err`; the runtime must
 * deliver exactly those, and keep running. Bounded: a fixed seed, a few
 * dozen frames per case.
 */

interface Delivered {
  port: 'out' | 'err';
  event: EddyEvent;
}

/** An offramp type that keeps every event it is sent, with the port it was bound to. */
function keeper(delivered: Delivered[]): OfframpType<{ port: 'out' | 'err' }> {
  return {
    name: 'keep',
    defaultCodec: 'json',
    autoAck: true,
    configSchema: {
      type: 'object',
      additionalProperties: false,
      required: ['port'],
      properties: { port: { enum: ['out', 'err'], description: 'which onramp port it is bound to' } },
    },
    create: (config) => ({ send: (_payloads, event) => void delivered.push({ port: config.port, event }) }),
  };
}

/** Artefact and instance ids may hold letters only: case 0 is `a`, 26 is `ba`. */
const letters = (n: number): string => (n >= 26 ? letters(Math.floor(n / 26) - 1) : '') + String.fromCharCode(97 + (n % 26));

interface Rig {
  /** runs one file through an onramp and returns what reached `out` and `err` once `expected` events have arrived */
  feed(onramp: Record<string, unknown>, content: Buffer, expected: number): Promise<{ out: unknown[]; err: Record<string, unknown>[] }>;
  runtime: Runtime;
  stop(): Promise<void>;
}

async function startRig(): Promise<Rig> {
  const dir = mkdtempSync(join(tmpdir(), 'eddy-onramp-fuzz-'));
  const delivered: Delivered[] = [];
  const runtime = new Runtime({ logger: createLogger('silent') }).registerOfframp(keeper(delivered));
  await runtime.start();
  runtime.publish('pipeline', {
    id: 'p',
    interface: { inputs: ['in'], outputs: ['out'] },
    nodes: [{ id: 'pass', type: 'passthrough' }],
    links: { in: ['pass'], pass: ['out'] },
  });
  runtime.publish('offramp', { id: 'outs', type: 'keep', config: { port: 'out' } });
  runtime.publish('offramp', { id: 'errs', type: 'keep', config: { port: 'err' } });
  let cases = 0;
  return {
    runtime,
    async feed(onramp, content, expected) {
      const id = `case${letters(cases++)}`;
      const file = join(dir, `${id}.bin`);
      writeFileSync(file, content);
      // err_required: the file is read only once the err port is wired
      runtime.publish('onramp', { id, type: 'file', config: { source: file }, err_required: true, ...onramp });
      runtime.publish('binding', {
        id,
        links: {
          [`/onramp/${id}/{instance}/out`]: ['/pipeline/p/{instance}/in'],
          '/pipeline/p/{instance}/out': ['/offramp/outs/{instance}/in'],
          [`/onramp/${id}/{instance}/err`]: ['/pipeline/p/{instance}errors/in'],
          '/pipeline/p/{instance}errors/out': ['/offramp/errs/{instance}/in'],
        },
      });
      await runtime.activate('binding', id, id);
      const mine = () => delivered.filter((d) => d.event.originUri.endsWith(`/${id}.bin`));
      // on a mismatch, fall through after the wait so the comparison below shows what arrived
      await eventually(() => mine().length >= expected, 5000, `${expected} events from ${id}`).catch(() => undefined);
      await runtime.deactivate('binding', id, id);
      return {
        out: mine()
          .filter((d) => d.port === 'out')
          .map((d) => d.event.data),
        err: mine()
          .filter((d) => d.port === 'err')
          .map((d) => d.event.data as Record<string, unknown>),
      };
    },
    async stop() {
      await runtime.shutdown();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

const lengthPrefixed = (frames: Buffer[]) => Buffer.concat(frames.flatMap((f) => post('length-prefixed').process(f, { ingestNs: 0n })));

/** Codecs whose values carry the ingest time (influx without a timestamp, syslog 3164's year): their values are compared by count. */
const USES_INGEST_TIME = new Set(['influx', 'syslog']);

/** Valid frames of a codec, for mutating: values of eddy's model where the codec carries them, text otherwise. */
function codecSamples(name: string): fc.Arbitrary<Buffer> {
  const c = codec(name);
  if (['json', 'yaml', 'msgpack'].includes(name)) return eddyValue(unsafeBigInt(-(2n ** 63n), 2n ** 64n - 1n)).map((v) => c.encode(v));
  if (name === 'avro') return avroOrder().map((v) => c.encode(v));
  if (name === 'protobuf') return protoOrder().map((v) => c.encode(v));
  const lines: Record<string, string[]> = {
    influx: ['m,t=a v=1i,f=1.5,s="x" 1465839830100400200', 'm v=18446744073709551615u', '# comment'],
    statsd: ['a:1|c', 'b:-1.5|g|@0.5', 'c:9007199254740993|ms'],
    syslog: ['<34>1 2003-10-11T22:14:15.003Z host app - ID47 - msg', '<13>Feb  5 17:32:18 10.0.0.99 Use the BFG!'],
  };
  if (name === 'binflux') return fc.constant(c.encode({ measurement: 'm', tags: { t: 'a' }, fields: { v: 1n, f: 1.5, s: 'x', b: true }, timestamp: 5n }));
  return fc.constantFrom(...(lines[name] ?? ['text', 'héllo', '']).map((l) => Buffer.from(l, 'utf8')));
}

describe('fuzzing through a real onramp: file onramp -> passthrough -> out / err', () => {
  let rig: Rig;
  before(async () => (rig = await startRig()));
  after(() => rig.stop());

  for (const type of builtinCodecs) {
    it(`codec ${type.name}: every decodable frame reaches out, every other one err with its message, in order`, async () => {
      const frames = fc.sample(fuzzInput(codecSamples(type.name)), { seed: FUZZ_SEED, numRuns: 40 });
      const now = BigInt(Date.now()) * 1_000_000n;
      const direct = frames.map((f) => outcome(() => codec(type.name).decode(f, now)));
      const values = direct.filter((o): o is { value: unknown } => 'value' in o && o.value !== undefined).map((o) => o.value);
      const errors = direct.filter((o): o is { error: unknown } => 'error' in o).map((o) => (o.error as Error).message);
      expect(values.length + errors.length, 'the sample exercises both ports').to.be.greaterThan(0);

      const got = await rig.feed({ codec: codecSpec(type.name), preprocessors: ['length-prefixed'] }, lengthPrefixed(frames), values.length + errors.length);
      expect(got.err.map((e) => e.error)).to.deep.equal(errors);
      if (USES_INGEST_TIME.has(type.name)) expect(got.out).to.have.length(values.length);
      else expect(got.out).to.deep.equal(values);
      expect(rig.runtime.health().status, 'the runtime is still healthy').to.not.equal('unhealthy');
    });
  }

  it('a chain whose first processor fails at the end of the file still delivers what the later ones flush', async () => {
    // one length-prefixed blob "a\nb" split into lines, then 3 stray bytes: length-prefixed fails at the end,
    // and the line "b" that lines still holds must come out all the same
    const content = Buffer.concat([lengthPrefixed([Buffer.from('a\nb')]), Buffer.from('xyz')]);
    const got = await rig.feed({ codec: 'string', preprocessors: ['length-prefixed', 'lines'] }, content, 3);
    expect(got.out).to.deep.equal(['a', 'b']);
    expect(got.err.map((e) => e.error)).to.deep.equal(['length-prefixed: stream ended inside a frame (3 bytes left)']);
  });

  it('a bad frame in the middle of a chain costs only itself: the frames around it go on through the rest of the chain', async () => {
    const content = Buffer.from('aGk=\n***\nYm9v\n!!\nZW5k');
    const got = await rig.feed({ codec: 'string', preprocessors: ['lines', 'base64'] }, content, 4);
    expect(got.out).to.deep.equal(['hi', 'boo', 'end']);
    expect(got.err.map((e) => e.error)).to.deep.equal(['base64: not standard base64: "***" (and 1 more error in the same read)']);
  });

  for (const type of builtinPreprocessors) {
    it(`preprocessor ${type.name}: its good frames reach out, its errors err, and the chain is flushed at the end of the file`, async () => {
      // valid input of the processor's format, mutated, or random: a few chunks' worth in one file
      const valid =
        type.name === 'length-prefixed' || type.name === 'textual-length-prefix' || type.name === 'base64' || type.name === 'gzip'
          ? fc.constantFrom(...['a', 'hello\nworld', ''].map((s) => post(type.name).process(Buffer.from(s), { ingestNs: 0n })[0]))
          : fc.constantFrom(Buffer.from('a\nb|c\0d\re\n\n'));
      const content = Buffer.concat(fc.sample(fc.oneof(randomBytes(), valid, mutated(valid)), { seed: FUZZ_SEED, numRuns: 12 }));
      // the chain the runtime builds: the file's own framing first, unless this processor splits by itself
      const specs = type.splits ? [type.name] : ['lines', type.name];
      const chain = specs.map((name) => pre(name));
      const expectedFrames: Buffer[] = [];
      let expectedErrors = 0;
      for (const finish of [false, true]) {
        const result = outcome(() => runProcessors(chain, finish ? [] : [content], { ingestNs: BigInt(Date.now()) * 1_000_000n }, finish));
        if ('error' in result) expectedErrors++;
        expectedFrames.push(...('error' in result ? ((result.error as ProcessorError).frames ?? []) : (result.value as Buffer[])));
      }

      const got = await rig.feed({ codec: 'binary', preprocessors: [type.name] }, content, expectedFrames.length + expectedErrors);
      expect(got.out.map((b) => (b as Buffer).toString('hex'))).to.deep.equal(expectedFrames.map((b) => b.toString('hex')));
      expect(got.err).to.have.length(expectedErrors);
      for (const e of got.err)
        expect(e.error)
          .to.be.a('string')
          .and.satisfy((m: string) => specs.some((name) => m.startsWith(name)));
    });
  }
});
