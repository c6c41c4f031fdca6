import { expect } from 'chai';
import fc from 'fast-check';
import { builtinCodecs } from '../../src/codecs';
import type { Codec } from '../../src/codecs/codec';
import { FUZZ_SEED, fuzzInput, fuzzRuns, outcome } from './fuzz-support';
import { codec, eddyValue, INGEST_NS, text, unsafeBigInt } from './support';
import { avroOrder, protoOrder } from './schema-support';

/**
 * Every codec's decode fed random and mutated bytes (issue 11, item 6): it
 * returns a value or throws an Error with a message (the onramp machinery
 * turns that into an `err` event), never anything else; what it returns
 * encodes again with the same codec; and a bad frame leaves the codec
 * decoding the next good one as before. Bounded: a fixed seed and count.
 */

const RUNS = 200;

const name = text({ minLength: 1, maxLength: 8 }).filter((s) => !/[\n\r]/.test(s));
const influxPoint = fc.record({
  measurement: name.filter((s) => !/^[#\t]/.test(s)),
  tags: fc.dictionary(name, name, { maxKeys: 3 }),
  fields: fc.dictionary(
    name,
    fc.oneof(fc.double({ noNaN: true, noDefaultInfinity: true }), fc.bigInt({ min: -(2n ** 63n), max: 2n ** 63n - 1n }), text({ maxLength: 8 }), fc.boolean()),
    { minKeys: 1, maxKeys: 4 },
  ),
  timestamp: fc.bigInt({ min: 0n, max: 2n ** 63n - 1n }),
});
const statsdLine = fc
  .tuple(
    name.filter((s) => !/[:|]/.test(s)),
    fc.oneof(fc.integer(), fc.double({ noNaN: true, noDefaultInfinity: true })),
    fc.constantFrom('c', 'g', 'ms', 'h', 's'),
    fc.option(fc.double({ min: 0, max: 1, noNaN: true })),
  )
  .map(([metric, value, type, rate]) => `${metric}:${value}|${type}${rate === null ? '' : `|@${rate}`}`);
const syslogLines = fc.constantFrom(
  "<34>1 2003-10-11T22:14:15.003Z mymachine.example.com su - ID47 - 'su root' failed for lonvick on /dev/pts/8",
  '<165>1 2003-10-11T22:14:15.003Z host evntslog - ID47 [exampleSDID@32473 iut="3" eventSource="App\\]x"][examplePriority@32473 class="high"] msg',
  "<34>Oct 11 22:14:15 mymachine su: 'su root' failed for lonvick on /dev/pts/8",
  '<13>Feb  5 17:32:18 10.0.0.99 Use the BFG!',
);

/** Valid frames of each codec, to mutate. */
function samples(name: string, c: Codec): fc.Arbitrary<Buffer> {
  const encoded = (values: fc.Arbitrary<unknown>) => values.map((v) => c.encode(v));
  const utf8 = (lines: fc.Arbitrary<string>) => lines.map((l) => Buffer.from(l, 'utf8'));
  switch (name) {
    case 'json':
    case 'yaml':
      return encoded(eddyValue(unsafeBigInt(-(2n ** 70n), 2n ** 70n)));
    case 'msgpack':
      return encoded(eddyValue(unsafeBigInt(-(2n ** 63n), 2n ** 64n - 1n)));
    case 'influx':
    case 'binflux':
      return encoded(influxPoint);
    case 'statsd':
      return utf8(statsdLine);
    case 'syslog':
      return utf8(syslogLines);
    case 'avro':
      return encoded(avroOrder());
    case 'protobuf':
      return encoded(protoOrder());
    default:
      return utf8(text({ maxLength: 50 }));
  }
}

/** A frame each codec decodes, and what it decodes to, to check after a bad frame. */
const known: Record<string, { frame: string; value: unknown }> = {
  json: { frame: '{"a":[1,9007199254740993]}', value: { a: [1, 9007199254740993n] } },
  yaml: { frame: 'a: [1, 9007199254740993]\n', value: { a: [1, 9007199254740993n] } },
  msgpack: { frame: '81a161c3', value: { a: true } },
  string: { frame: 'héllo', value: 'héllo' },
  binary: { frame: 'raw', value: Buffer.from('raw') },
  null: { frame: 'x', value: null },
  influx: { frame: 'm,t=1 v=2i 3', value: { measurement: 'm', tags: { t: '1' }, fields: { v: 2n }, timestamp: 3n } },
  statsd: { frame: 'a:1|c', value: { metric: 'a', type: 'c', value: 1 } },
  syslog: { frame: '<13>1 2003-10-11T22:14:15.003Z h a p m - x', value: undefined },
  binflux: { frame: '', value: undefined },
  avro: { frame: '', value: undefined },
  protobuf: { frame: '', value: undefined },
};

function knownFrame(name: string, c: Codec): { frame: Buffer; value: unknown } {
  if (name === 'msgpack') return { frame: Buffer.from(known.msgpack.frame, 'hex'), value: known.msgpack.value };
  if (name === 'avro' || name === 'protobuf') {
    const value = fc.sample<unknown>(name === 'avro' ? avroOrder() : protoOrder(), { seed: FUZZ_SEED, numRuns: 1 })[0];
    return { frame: c.encode(value), value };
  }
  if (name === 'binflux') {
    const value = { measurement: 'm', tags: { t: '1' }, fields: { v: 2n }, timestamp: 3n };
    return { frame: c.encode(value), value };
  }
  const frame = Buffer.from(known[name].frame, 'utf8');
  return { frame, value: known[name].value ?? c.decode(frame, INGEST_NS) };
}

describe('codec fuzzing: random and mutated bytes through decode', () => {
  it('covers every builtin codec', () => {
    expect(builtinCodecs.map((t) => t.name).sort()).to.deep.equal(Object.keys(known).sort());
  });

  for (const type of builtinCodecs) {
    it(`${type.name}: a value or an Error, never anything else; what decodes encodes again; the next good frame still decodes; no process warnings`, async () => {
      // a library warning (yaml's on an unknown directive) goes to stderr once per bad frame: none may be raised
      const warnings: string[] = [];
      const onWarning = (warning: Error) => void warnings.push(warning.message);
      process.on('warning', onWarning);
      try {
        const c = codec(type.name);
        const good = knownFrame(type.name, c);
        fc.assert(
          fc.property(fuzzInput(samples(type.name, c)), (bytes) => {
            const result = outcome(() => c.decode(bytes, INGEST_NS));
            if ('error' in result) {
              expect(result.error, 'thrown').to.be.an.instanceOf(Error);
              expect((result.error as Error).message, 'message')
                .to.be.a('string')
                .and.not.equal('');
            } else if (result.value !== undefined) {
              const encoded = outcome(() => c.encode(result.value));
              if ('error' in encoded) throw new Error(`decoded ${bytes.toString('hex')} but cannot encode it again: ${(encoded.error as Error).message}`);
            }
            expect(c.decode(good.frame, INGEST_NS), 'the known frame after it').to.deep.equal(good.value);
          }),
          { seed: FUZZ_SEED, numRuns: fuzzRuns(RUNS) },
        );
        outcome(() => c.decode(Buffer.from('%bogus directive\n---\nx: 1\n'), INGEST_NS)); // yaml's warning case, for every codec
        await new Promise((resolve) => setImmediate(resolve)); // warnings are emitted on the next tick
      } finally {
        process.off('warning', onWarning);
      }
      expect(warnings).to.deep.equal([]);
    });
  }
});
