import { expect } from 'chai';
import { gzipSync } from 'node:zlib';
import { identity } from 'rxjs';
import { stringify } from 'yaml';
import { createLogger } from '../../src/core/logger';
import { Runtime } from '../../src/runtime/runtime';
import { JSON_HEADERS, onramp, repositoryState, send, startApi, YAML_HEADERS, type Api } from './helpers';

/** Twelve levels of nine: 9^6 = 531,441 leaves from a few hundred bytes. */
const BILLION_LAUGHS = [
  'a: &a [lol, lol, lol, lol, lol, lol, lol, lol, lol]',
  'b: &b [*a, *a, *a, *a, *a, *a, *a, *a, *a]',
  'c: &c [*b, *b, *b, *b, *b, *b, *b, *b, *b]',
  'd: &d [*c, *c, *c, *c, *c, *c, *c, *c, *c]',
  'e: &e [*d, *d, *d, *d, *d, *d, *d, *d, *d]',
  'f: &f [*e, *e, *e, *e, *e, *e, *e, *e, *e]',
  'g: [*f, *f, *f, *f, *f, *f, *f, *f, *f]',
].join('\n');

function blockYaml(depth: number): string {
  const lines: string[] = [];
  for (let i = 0; i < depth; i++) lines.push(`${'  '.repeat(i)}k:`);
  return `${lines.join('\n')} leaf\n`;
}

describe('REST API input limits', () => {
  let api: Api;
  before(async () => (api = await startApi()));
  after(() => api.stop());

  /** The server still serves: a publish right after works, and is undone. */
  async function stillServes(): Promise<void> {
    const ok = await send(api.port, 'POST', '/onramp', { headers: JSON_HEADERS, body: onramp('after') });
    expect(ok.status, ok.text).to.equal(201);
    expect((await send(api.port, 'DELETE', '/onramp/after')).status).to.equal(200);
  }

  const refused: [string, Record<string, string>, () => string, number, RegExp][] = [
    // today: 500 "Maximum call stack size exceeded"
    [
      'a JSON body 100,000 levels deep',
      JSON_HEADERS,
      () => `${'['.repeat(100_000)}${']'.repeat(100_000)}`,
      400,
      /^body: nested deeper than 64 levels at line 1, column 65 \(the API's limit, --api-max-depth\)$/,
    ],
    [
      'a JSON object nesting inside strings and keys',
      JSON_HEADERS,
      () => `${'{"a[":'.repeat(70)}1${'}'.repeat(70)}`,
      400,
      /^body: nested deeper than 64 levels at line 1, column 385 /,
    ],
    // today: seconds of frozen event loop, or the process aborts
    [
      'a flow-style YAML body 200,000 levels deep',
      YAML_HEADERS,
      () => `${'['.repeat(200_000)}${']'.repeat(200_000)}`,
      400,
      /^body: nested deeper than 64 levels at line 1, column 65 /,
    ],
    ['a block-style YAML body nested by indentation', YAML_HEADERS, () => blockYaml(100), 400, /^body: nested deeper than 64 levels at line 65, column 129 /],
    [
      'a block-style YAML body of compact sequences (- - - x)',
      YAML_HEADERS,
      () => `${'- '.repeat(300_000)}x\n`,
      400,
      /^body: nested deeper than 64 levels at line 1, column 129 /,
    ],
    [
      'a YAML body nesting sequences under keys at the same indent',
      YAML_HEADERS,
      () => Array.from({ length: 40 }, (_, i) => `${'  '.repeat(i)}k:\n${'  '.repeat(i)}- `).join('\n') + 'x\n',
      400,
      /^body: nested deeper than 64 levels at line 65, /,
    ],
    [
      'a YAML body nested through an alias',
      YAML_HEADERS,
      () => `a: &a ${'['.repeat(40)}${']'.repeat(40)}\nb: ${'['.repeat(30)}*a${']'.repeat(30)}\n`,
      400,
      /^body: nested deeper than 64 levels once YAML aliases are expanded$/,
    ],
    ['a billion laughs', YAML_HEADERS, () => BILLION_LAUGHS, 400, /^body: YAML aliases expand too much \(more than 100 alias uses\)/],
    [
      'a YAML collection that contains itself',
      YAML_HEADERS,
      () => 'id: x\ntype: metronome\nconfig: &c { again: *c }\n',
      400,
      /^body: YAML aliases form a cycle/,
    ],
    [
      'a body of 2 MB',
      JSON_HEADERS,
      () => JSON.stringify({ id: 'x', type: 'metronome', description: 'x'.repeat(2_000_000) }),
      413,
      /^body: larger than 1048576 bytes, the API's limit \(--api-max-body\)$/,
    ],
  ];
  for (const [what, headers, body, status, message] of refused) {
    it(`refuses ${what} with ${status} and a precise message, and serves the next request`, async () => {
      const before = await repositoryState(api.port);
      const reply = await send(api.port, 'POST', '/onramp', { headers, body: body() });
      expect(reply.status, reply.text).to.equal(status);
      expect((reply.body as { error: string }).error).to.match(message);
      expect(await repositoryState(api.port)).to.deep.equal(before);
      await stillServes();
    });
  }

  it('counts the body size after Content-Encoding: a gzip bomb is 413', async () => {
    const bomb = gzipSync(Buffer.alloc(20_000_000, 32)); // 20 MB of spaces, about 20 kB compressed
    const reply = await send(api.port, 'POST', '/onramp', { headers: { ...JSON_HEADERS, 'content-encoding': 'gzip' }, body: bomb });
    expect(reply.status).to.equal(413);
    await stillServes();
  });

  it('lets a document exactly at the depth limit through, in JSON and in YAML', async () => {
    // an operator that takes any config, so that only the depth limit can refuse it
    const runtime = new Runtime({ logger: createLogger('silent') }).registerOperator({ name: 'test::anything', create: () => identity });
    const open = await startApi({}, runtime);
    try {
      // pipeline, nodes, node: 3 levels, then the config's own
      const pipeline = (id: string, levels: number) => ({
        id,
        interface: { inputs: ['in'], outputs: ['out'] },
        nodes: [{ id: 'n', type: 'test::anything', config: nested(levels) }],
        links: { in: ['n'], n: ['out'] },
      });
      const nested = (levels: number): unknown => (levels === 0 ? 1 : { a: nested(levels - 1) });
      for (const [headers, write] of [
        [JSON_HEADERS, JSON.stringify],
        [YAML_HEADERS, (v: unknown) => stringify(v)],
      ] as const) {
        const atLimit = await send(open.port, 'POST', '/pipeline', { headers, body: write(pipeline('deep', 61)) });
        expect(atLimit.status, atLimit.text).to.equal(201);
        expect((await send(open.port, 'DELETE', '/pipeline/deep')).status).to.equal(200);
        const over = await send(open.port, 'POST', '/pipeline', { headers, body: write(pipeline('deep', 62)) });
        expect(over.status).to.equal(400);
        expect((over.body as { error: string }).error).to.match(/^body: nested deeper than 64 levels at line/);
      }
    } finally {
      await open.stop();
    }
  });

  it('refuses a YAML document whose aliases expand it beyond four times the body limit', async () => {
    const small = await startApi({ maxBodyBytes: 10_000 });
    try {
      const big = `a: &a "${'x'.repeat(5_000)}"\nb: [${Array(10).fill('*a').join(', ')}]\n`;
      const reply = await send(small.port, 'POST', '/onramp', { headers: YAML_HEADERS, body: big });
      expect(reply.status).to.equal(400);
      expect((reply.body as { error: string }).error).to.equal('body: the YAML document expands (through aliases) to more than 40000 bytes as JSON');
    } finally {
      await small.stop();
    }
  });

  it('takes its limits from the options: body size and depth', async () => {
    const strict = await startApi({ maxBodyBytes: 200, maxDepth: 2 });
    try {
      const large = await send(strict.port, 'POST', '/onramp', {
        headers: JSON_HEADERS,
        body: JSON.stringify({ id: 'x', type: 'metronome', description: 'x'.repeat(200) }),
      });
      expect(large.status).to.equal(413);
      expect((large.body as { error: string }).error).to.equal("body: larger than 200 bytes, the API's limit (--api-max-body)");
      const deep = await send(strict.port, 'POST', '/onramp', { headers: YAML_HEADERS, body: 'id: x\ntype: metronome\nconfig:\n  a: [1]\n' });
      expect(deep.status).to.equal(400);
      expect((deep.body as { error: string }).error).to.equal("body: nested deeper than 2 levels at line 4, column 6 (the API's limit, --api-max-depth)");
      const ok = await send(strict.port, 'POST', '/onramp', { headers: YAML_HEADERS, body: 'id: x\ntype: metronome\nconfig: {interval: 5}\n' });
      expect(ok.status, ok.text).to.equal(201);
    } finally {
      await strict.stop();
    }
  });

  it('abandons a YAML document that takes longer than its budget to parse, and keeps serving (YAML too)', async () => {
    const hasty = await startApi({ yamlParseTimeoutMs: 1 });
    try {
      // 400,000 null entries: seconds of work for the yaml library, far beyond 1 ms
      const reply = await send(hasty.port, 'POST', '/onramp', { headers: YAML_HEADERS, body: '-\n'.repeat(400_000) });
      expect(reply.status).to.equal(400);
      expect((reply.body as { error: string }).error).to.equal('body: the YAML document took more than 1 ms to parse; send it as JSON or make it smaller');
      const json = await send(hasty.port, 'POST', '/onramp', { headers: JSON_HEADERS, body: onramp('tick') });
      expect(json.status).to.equal(201);
    } finally {
      await hasty.stop();
    }
    // the parser thread was replaced: YAML is parsed again
    const yaml = await send(api.port, 'POST', '/onramp', { headers: YAML_HEADERS, body: 'id: again\ntype: metronome\nconfig: {interval: 5}\n' });
    expect(yaml.status, yaml.text).to.equal(201);
    expect((await send(api.port, 'DELETE', '/onramp/again')).status).to.equal(200);
  });

  it('serves other requests while a slow YAML document is being parsed', async () => {
    const patient = await startApi({ yamlParseTimeoutMs: 3000 });
    try {
      const order: string[] = [];
      const slow = send(patient.port, 'POST', '/onramp', { headers: YAML_HEADERS, body: '-\n'.repeat(400_000) }).then((reply) => {
        order.push('yaml');
        return reply;
      });
      // the event loop is free: these are answered while the parser thread works
      for (let i = 0; i < 3; i++) {
        expect((await send(patient.port, 'GET', '/version')).status).to.equal(200);
        order.push('version');
      }
      const publish = await send(patient.port, 'POST', '/onramp', { headers: JSON_HEADERS, body: onramp('meanwhile') });
      expect(publish.status).to.equal(201);
      order.push('json');
      const reply = await slow;
      expect(reply.status).to.equal(400);
      expect(order).to.deep.equal(['version', 'version', 'version', 'json', 'yaml']);
    } finally {
      await patient.stop();
    }
  });

  it('refuses limits that are not safe or not numbers', async () => {
    const { createApi } = await import('../../src/api/server');
    expect(() => createApi(api.runtime, { maxDepth: 10_000 })).to.throw('maxDepth: at most 256 (deeper YAML is not safe to parse)');
    expect(() => createApi(api.runtime, { maxBodyBytes: 0 })).to.throw('maxBodyBytes: must be a positive integer, not 0');
    expect(() => createApi(api.runtime, { allowOrigins: ['evil.com'] })).to.throw("allowOrigins: 'evil.com' is not an origin like http://host:port");
  });
});
