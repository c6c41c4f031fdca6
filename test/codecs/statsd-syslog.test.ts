import { expect } from 'chai';
import fc from 'fast-check';
import { BIGINT_BOUNDARIES, codec, INGEST_NS, NUMBER_BOUNDARIES } from './support';

const statsd = codec('statsd');
const syslog = codec('syslog');
const dec = (c: typeof statsd, s: string, ingest = INGEST_NS) => c.decode(Buffer.from(s, 'utf8'), ingest);

describe('statsd codec', () => {
  it('decodes each type, gauge actions and sample rates in the documented key order', () => {
    expect(dec(statsd, 'page.views:1|c')).to.deep.equal({ metric: 'page.views', type: 'c', value: 1 });
    expect(dec(statsd, 'load:+2.5|g|@0.1')).to.deep.equal({ metric: 'load', action: 'add', type: 'g', sample_rate: 0.1, value: 2.5 });
    const sub = dec(statsd, 'load:-3|g') as object;
    expect(sub).to.deep.equal({ metric: 'load', action: 'sub', type: 'g', value: 3 });
    expect(Object.keys(sub)).to.deep.equal(['metric', 'action', 'type', 'value']);
    expect(dec(statsd, 't:320|ms|@0.5')).to.deep.equal({ metric: 't', type: 'ms', sample_rate: 0.5, value: 320 });
    expect(dec(statsd, 'u:18446744073709551615|s')).to.deep.equal({ metric: 'u', type: 's', value: 18446744073709551615n });
  });

  it('decode(encode(m)) equals m over the metric model', () => {
    const metric = fc
      .record(
        {
          metric: fc.string({ minLength: 1, maxLength: 10 }).filter((s) => !/[:|\r\n]/.test(s)),
          type: fc.constantFrom('c', 'ms', 'h', 's', 'g'),
          sample_rate: fc.double({ min: 0, max: 1, noNaN: true }),
          value: fc.oneof(
            fc.double({ noNaN: true, noDefaultInfinity: true, min: 0 }),
            fc.integer({ min: 0 }),
            fc.constantFrom<number | bigint>(...NUMBER_BOUNDARIES.filter((n) => n > 0), ...BIGINT_BOUNDARIES.filter((k) => k > 0n)),
          ),
          action: fc.constantFrom('add', 'sub'),
        },
        { requiredKeys: ['metric', 'type', 'value'] },
      )
      .map((m) => {
        const { action, sample_rate: rate, ...rest } = m;
        return {
          metric: rest.metric,
          ...(m.type === 'g' && action ? { action } : {}),
          type: rest.type,
          ...(rate !== undefined ? { sample_rate: rate } : {}),
          value: rest.value,
        };
      })
      .filter((m) => !Object.is(m.value, -0) && !Object.is(m.sample_rate, -0));
    fc.assert(
      fc.property(metric, (m) => {
        expect(statsd.decode(statsd.encode(m), INGEST_NS)).to.deep.equal(m);
      }),
    );
  });

  it('throws on malformed lines and unrepresentable values', () => {
    for (const line of ['novalue', 'a:1', 'a:1|x', 'a:b|c', 'a:1|c|0.5', 'a:1|c|@x', ':1|c']) expect(() => dec(statsd, line), line).to.throw(/statsd/);
    expect(() => statsd.encode({ metric: 'g', type: 'g', value: -1 })).to.throw(/negative/);
  });

  it('refuses on decode what it could not encode again (found by fuzzing): a float beyond the doubles, a name with | or a line break', () => {
    expect(() => dec(statsd, 'a:1e400|c')).to.throw('statsd: value "1e400" is out of range');
    expect(() => dec(statsd, 'a:-1e400|ms')).to.throw('statsd: value "-1e400" is out of range');
    expect(() => dec(statsd, 'a:1|c|@1e999')).to.throw('statsd: sample rate "@1e999" is out of range');
    expect(() => dec(statsd, '|:0|c')).to.throw('statsd: bad metric name "|"');
    expect(() => dec(statsd, '\nx:0|c')).to.throw('statsd: bad metric name "\\nx"');
    expect(dec(statsd, 'a:1e300|c')).to.deep.equal({ metric: 'a', type: 'c', value: 1e300 });
  });
});

describe('syslog codec', () => {
  it('decodes the RFC 5424 examples (section 6.5)', () => {
    expect(dec(syslog, "<34>1 2003-10-11T22:14:15.003Z mymachine.example.com su - ID47 - \uFEFF'su root' failed for lonvick on /dev/pts/8")).to.deep.equal({
      hostname: 'mymachine.example.com',
      severity: 'crit',
      facility: 'auth',
      timestamp: 1065910455003000000n,
      protocol: 'RFC5424',
      protocol_version: 1,
      appname: 'su',
      msgid: 'ID47',
      structured_data: null,
      msg: "'su root' failed for lonvick on /dev/pts/8",
    });
    expect(dec(syslog, "<165>1 2003-08-24T05:14:15.000003-07:00 192.0.2.1 myproc 8710 - - %% It's time to make the do-nuts.")).to.deep.equal({
      hostname: '192.0.2.1',
      severity: 'notice',
      facility: 'local4',
      timestamp: 1061727255000003000n,
      protocol: 'RFC5424',
      protocol_version: 1,
      appname: 'myproc',
      structured_data: null,
      procid: '8710',
      msg: "%% It's time to make the do-nuts.",
    });
    const sd = dec(
      syslog,
      '<165>1 2003-10-11T22:14:15.003Z host evntslog - ID47 [exampleSDID@32473 iut="3" eventSource="App\\]x\\"y"][examplePriority@32473 class="high"]',
    ) as Record<string, unknown>;
    expect(sd.structured_data).to.deep.equal({ 'exampleSDID@32473': [{ iut: '3' }, { eventSource: 'App]x"y' }], 'examplePriority@32473': [{ class: 'high' }] });
    expect(sd.msg).to.equal('');
  });

  it('decodes RFC 3164 messages, taking the year from the ingest time', () => {
    const jan2024 = BigInt(Date.UTC(2024, 0, 2)) * 1_000_000n;
    expect(dec(syslog, "<34>Oct 11 22:14:15 mymachine su: 'su root' failed for lonvick on /dev/pts/8", jan2024)).to.deep.equal({
      hostname: 'mymachine',
      severity: 'crit',
      facility: 'auth',
      timestamp: BigInt(Date.UTC(2023, 9, 11, 22, 14, 15)) * 1_000_000n,
      protocol: 'RFC3164',
      appname: 'su',
      structured_data: null,
      msg: "'su root' failed for lonvick on /dev/pts/8",
    });
    expect(dec(syslog, '<13>Feb  5 17:32:18 10.0.0.99 Use the BFG!', jan2024)).to.include({
      hostname: '10.0.0.99',
      msg: 'Use the BFG!',
      timestamp: BigInt(Date.UTC(2023, 1, 5, 17, 32, 18)) * 1_000_000n,
    }); // February 2024 would be in the future
    expect(dec(syslog, '<30>Jun  1 00:00:00 host cron[42]: job done', jan2024)).to.include({ appname: 'cron', procid: '42', msg: 'job done' });
  });

  it('encodes what it decodes, structured_data null included, to the same text', () => {
    for (const line of [
      "<34>1 2003-10-11T22:14:15.003Z mymachine.example.com su - ID47 - 'su root' failed",
      '<165>1 2003-10-11T22:14:15.003Z host evntslog - ID47 [a@1 x="1" y="q\\"\\]\\\\"] msg',
      '<34>Oct 11 22:14:15 mymachine su[12]: hello',
    ]) {
      expect(syslog.encode(dec(syslog, line)).toString('utf8')).to.equal(line);
    }
  });

  it('decode(encode(m)) equals m for RFC 5424 messages of the model', () => {
    const field = fc.string({ minLength: 1, maxLength: 8, unit: fc.constantFrom(...'abcXYZ09._-@:/'.split('')) }).filter((s) => s !== '-');
    const message = fc.record({
      hostname: field,
      severity: fc.constantFrom('emerg', 'err', 'info', 'debug'),
      facility: fc.constantFrom('kern', 'local7', 'user'),
      timestamp: fc.bigInt({ min: 0n, max: 253402300799999999n }).map((ns) => (ns / 1000n) * 1000n),
      protocol: fc.constant('RFC5424' as const),
      protocol_version: fc.integer({ min: 1, max: 999 }),
      appname: field,
      msgid: field,
      structured_data: fc.option(
        fc.dictionary(
          field.filter((s) => !/[=\]"]/.test(s)),
          fc.array(
            fc.dictionary(
              field.filter((s) => !/[=\]"]/.test(s)),
              fc.string(),
              { minKeys: 1, maxKeys: 1 },
            ),
            { maxLength: 3 },
          ),
          { minKeys: 1, maxKeys: 2 },
        ),
      ),
      procid: field,
      msg: fc.string({ minLength: 1 }).filter((s) => !/^\uFEFF|[\r\n\0]$/.test(s)),
    });
    fc.assert(
      fc.property(message, (m) => {
        expect(syslog.decode(syslog.encode(m), INGEST_NS)).to.deep.equal(m);
      }),
    );
  });

  it('throws on a bad priority, header or structured data', () => {
    for (const line of ['<192>1 - - - - - -', '<34>1 2003-13-99Tx - - - - -', '<34>1 - - - - [unterminated', '<34>1 - h'])
      expect(() => dec(syslog, line), line).to.throw(/syslog/);
  });

  it('refuses RFC 5424 header fields the encoder could not write back (found by fuzzing: a NUL in the hostname)', () => {
    expect(() => dec(syslog, '<34>1 - host\0name app - - -')).to.throw('syslog: RFC 5424 hostname must be printable ASCII');
    expect(() => dec(syslog, '<34>1 - host äpp - - -')).to.throw('syslog: RFC 5424 appname must be printable ASCII');
    expect(() => dec(syslog, '<34>1 - h a - - [\u00efd n="v"]')).to.throw('syslog: bad structured-data name at 11');
  });

  it('keeps an RFC 3164 word that is not printable ASCII in the message rather than as hostname or tag', () => {
    const value = dec(syslog, '<13>Feb  5 17:32:18 h\u00f4te app: hi', 1_700_000_000_000_000_000n) as Record<string, unknown>;
    expect(value.hostname).to.equal(undefined);
    expect(value.msg).to.equal('h\u00f4te app: hi');
    expect(() => syslog.encode(value)).not.to.throw();
  });
});
