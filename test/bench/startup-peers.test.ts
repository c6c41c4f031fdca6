import { expect } from 'chai';
import { caCertsNote, childEnv, measureStartup, startupTable, startupTargets, quantile } from '../../bench/startup';
import { SKIP_MESSAGE, main as peers, parseOutputSent, parseTremorReport, tremorConfig, benthosConfig } from '../../bench/peers';
import { parse as parseYaml } from 'yaml';

describe('bench/startup', () => {
  it('starts node and eddy once each and prints a row for each, read from the first event line', async () => {
    const rows = await measureStartup(startupTargets(undefined, {}), 1);
    expect(rows.map((r) => r.name)).to.deep.equal(['node -e (floor)', 'eddy --no-api', 'eddy (API on)']);
    expect(caCertsNote(rows)).to.equal(undefined);
    for (const row of rows) {
      expect(row.samples, row.name).to.have.length(1);
      expect(row.samples[0].wallMs, row.name).to.be.greaterThan(0);
    }
    const table = startupTable(rows).split('\n');
    expect(table[0]).to.match(/^start\s+wall median ms\s+wall p90 ms\s+CPU-s median/);
    expect(table.slice(2).map((line) => line.split(/\s{2,}/)[0])).to.deep.equal(rows.map((r) => r.name));
  });

  it('starts every child without NODE_EXTRA_CA_CERTS; only the extra floor row has it, when this process has it', () => {
    const saved = process.env.NODE_EXTRA_CA_CERTS;
    process.env.NODE_EXTRA_CA_CERTS = '/certs.pem';
    try {
      expect(childEnv()).to.not.have.property('NODE_EXTRA_CA_CERTS');
      expect(childEnv().PATH).to.equal(process.env.PATH);
      const targets = startupTargets('eddy', process.env);
      expect(targets.map((t) => [t.name, t.env])).to.deep.equal([
        ['node -e (floor)', undefined],
        ['eddy --no-api', undefined],
        ['eddy (API on)', undefined],
        ['node -e (floor) with NODE_EXTRA_CA_CERTS', { NODE_EXTRA_CA_CERTS: '/certs.pem' }],
      ]);
      expect(targets[3].args).to.deep.equal(targets[0].args);
      expect(childEnv(targets[3].env).NODE_EXTRA_CA_CERTS).to.equal('/certs.pem');
    } finally {
      if (saved === undefined) delete process.env.NODE_EXTRA_CA_CERTS;
      else process.env.NODE_EXTRA_CA_CERTS = saved;
    }
  });

  it('says what NODE_EXTRA_CA_CERTS costs: the medians of its floor row over the plain floor', () => {
    const row = (name: string, wallMs: number, cpuSeconds: number) => ({ name, command: 'node -e', samples: [{ wallMs, cpuSeconds }] });
    const rows = [row('node -e (floor)', 60, 0.05), row('eddy --no-api', 200, 0.2), row('node -e (floor) with NODE_EXTRA_CA_CERTS', 210, 0.19)];
    expect(caCertsNote(rows)).to.equal(
      "NODE_EXTRA_CA_CERTS is set here: removed from every child's environment (it is this machine's, not eddy's); it costs each node start 150 ms and 0.14 CPU-s (median, last row against the floor)",
    );
  });

  it('takes quantiles by nearest rank, ignoring what was not measured', () => {
    expect(quantile([5, 1, undefined, 3, 2, 4], 0.5)).to.equal(3);
    expect(quantile([5, 1, 3, 2, 4], 0.9)).to.equal(5);
    expect(quantile([undefined], 0.5)).to.equal(undefined);
  });
});

describe('bench/peers', () => {
  const saved = { tremor: process.env.TREMOR_BIN, benthos: process.env.BENTHOS_BIN };
  afterEach(() => {
    for (const [name, value] of [
      ['TREMOR_BIN', saved.tremor],
      ['BENTHOS_BIN', saved.benthos],
    ] as const) {
      if (value === undefined) Reflect.deleteProperty(process.env, name);
      else process.env[name] = value;
    }
  });

  it('is skipped with a message naming the variables when no peer binary is given', async () => {
    delete process.env.TREMOR_BIN;
    delete process.env.BENTHOS_BIN;
    const result = await peers();
    expect(result.skipped).to.equal(SKIP_MESSAGE);
    expect(result.skipped).to.match(/TREMOR_BIN=.*BENTHOS_BIN=/);
    expect(result.rows).to.deep.equal([]);
  });

  it("reads Tremor's blackhole report: events/s and the p99 row of its histogram", () => {
    const out = [
      '       Value   Percentile   TotalCount 1/(1-Percentile)',
      '',
      '       12799 0.00000          1           1.00',
      '       55551 0.98000     271201          50.00',
      '      401407 0.99000     300000         100.00',
      '     6946815 1.00000     995376            inf',
      '#[Mean    =    285758.86, StdDeviation   =    701828.62]',
      '',
      '',
      'Throughput   (data): 275.1 MB/s',
      'Throughput (events): 445.2k events/s',
    ].join('\n');
    expect(parseTremorReport(out, 10)).to.deep.equal({ eps: 445200, events: 4452000, p99Ns: 401407 });
    expect(() => parseTremorReport('tremor version: 0.11', 10)).to.throw('no "Total count" nor "Throughput (events)"');
  });

  it("reads Tremor 0.11.12's report: no event rate, so its Total count over the measured seconds", () => {
    // the tail of what tremor 0.11.12 printed for group-by-count here (stop_after_secs 12)
    const out = [
      '     Value Percentile TotalCount 1/(1-Percentile)',
      '',
      '       29439 0.00000          2           1.00',
      '     7307263 0.99219     115112         128.00',
      '    50069503 1.00000     116009            inf',
      '#[Mean       =    968242.89, StdDeviation   =   1652867.13]',
      '#[Max        =     50069503, Total count    =       116009]',
      '#[Buckets    =           30, SubBuckets     =         3968]',
      '',
      '',
      'Throughput: 58.3 MB/s',
    ].join('\n');
    expect(parseTremorReport(out, 12)).to.deep.equal({ eps: 116009 / 12, events: 116009, p99Ns: 7307263 });
  });

  it("sums Benthos' output_sent counter over its label sets", () => {
    const metrics = { 'output_sent{label="",path="root.output"}': 1500000, 'output_sent_batch{path="root.output"}': 3, 'input_received{path="root.input"}': 9 };
    expect(parseOutputSent(JSON.stringify(metrics))).to.equal(1.5e6);
    expect(parseOutputSent(JSON.stringify({ 'input_received{path="root.input"}': 9 }))).to.equal(undefined);
  });

  it("writes each peer's config in its own format", () => {
    const tremor = parseYaml(tremorConfig('json', '/data.json.xz')) as Record<string, Record<string, unknown>[]>;
    expect(tremor.onramp[0]).to.deep.include({ type: 'blaster', codec: 'json', config: { source: '/data.json.xz' } });
    expect(tremor.offramp[0].config).to.have.keys('warmup_secs', 'stop_after_secs', 'significant_figures');
    const benthos = parseYaml(benthosConfig('json', '/lines.json', 4195, 3)) as {
      input: { sequence: { inputs: unknown[] } };
      output: unknown;
      pipeline: { processors: unknown[] };
    };
    expect(benthos.input.sequence.inputs).to.have.length(3);
    expect(benthos.output).to.deep.equal({ drop: {} });
    expect(benthos.pipeline.processors).to.deep.equal([{ mapping: 'root = this' }]);
  });
});
