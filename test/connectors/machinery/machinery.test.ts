import { expect } from 'chai';
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Writable } from 'node:stream';
import { VirtualTimeScheduler, type SchedulerAction, type SchedulerLike } from 'rxjs';
import { BufferedWriter } from '../../../src/connectors/_shared/buffered-writer';
import { Alarm, Waiters } from '../../../src/connectors/_shared/waiters';
import { createLogger } from '../../../src/core/logger';
import { Runtime } from '../../../src/runtime/runtime';
import { call, eventually, startRuntime, type Started } from '../../helpers/runtime';
import { runEddy } from '../../helpers/cli';

const PASS = {
  id: 'relay',
  interface: { inputs: ['in'], outputs: ['out'] },
  nodes: [{ id: 'pass', type: 'passthrough' }],
  links: { in: ['pass'], pass: ['out'] },
};
const COPY = {
  id: 'copy',
  links: {
    '/onramp/reader/{instance}/out': ['/pipeline/relay/{instance}/in'],
    '/pipeline/relay/{instance}/out': ['/offramp/writer/{instance}/in'],
  },
};

describe('connector machinery: publish-time checks of linked transports', () => {
  let runtime: Runtime;
  beforeEach(() => (runtime = new Runtime({ logger: createLogger('silent') })));

  it('refuses linked: true on a type that cannot be linked, naming the field', () => {
    expect(() => runtime.publish('onramp', { id: 'tick', type: 'metronome', linked: true, config: { interval: 10 } })).to.throw(
      /linked: the metronome onramp cannot be a linked transport/,
    );
    expect(() => runtime.publish('offramp', { id: 'out', type: 'stdout', linked: true })).to.throw(/linked: the stdout offramp cannot be a linked transport/);
  });

  it('refuses postprocessors on an onramp and preprocessors on an offramp that are not linked', () => {
    expect(() => runtime.publish('onramp', { id: 'r', type: 'file', postprocessors: ['gzip'], config: { source: 'x' } })).to.throw(
      /postprocessors: only a linked onramp has postprocessors/,
    );
    expect(() => runtime.publish('offramp', { id: 'w', type: 'file', preprocessors: ['lines'], config: { file: 'x' } })).to.throw(
      /preprocessors: only a linked offramp has preprocessors/,
    );
  });
});

describe('connector machinery: one line splitter', () => {
  let rt: Started;
  let dir: string;
  beforeEach(async () => {
    rt = await startRuntime();
    dir = mkdtempSync(join(tmpdir(), 'eddy-framing-'));
  });
  afterEach(() => rt.stop());

  for (const preprocessors of [undefined, ['lines'], ['lines', 'remove-empty']]) {
    it(`gives a file's lines as events with preprocessors ${JSON.stringify(preprocessors)}`, async () => {
      const source = join(dir, 'in.json');
      const target = join(dir, 'out.json');
      writeFileSync(source, '{"n":1}\n{"n":2}\r\n{"n":3}');
      const reader = { id: 'reader', type: 'file', config: { source }, ...(preprocessors ? { preprocessors } : {}) };
      for (const [kind, body] of [
        ['onramp', reader],
        ['pipeline', PASS],
        ['offramp', { id: 'writer', type: 'file', config: { file: target } }],
        ['binding', COPY],
      ] as const) {
        expect((await call(rt.base, 'POST', `/${kind}`, { body })).status, kind).to.equal(201);
      }
      expect((await call(rt.base, 'POST', '/binding/copy/one')).status).to.equal(201);
      const lines = () => readFileSync(target, 'utf8').split('\n').filter(Boolean);
      await eventually(() => lines().length >= 3, 5000, 'three lines');
      expect(lines()).to.deep.equal(['{"n":1}', '{"n":2}', '{"n":3}']);
      // bytes are counted where they are read and where they are encoded
      expect(rt.runtime.onramp('/onramp/reader/one')!.runtime.counters.bytes).to.equal(24);
      expect(rt.runtime.offramp('/offramp/writer/one')!.counters.bytes).to.equal(21);
    });
  }
});

describe('connector machinery: a source that cannot be opened fails its activation', () => {
  let rt: Started;
  let dir: string;
  beforeEach(async () => {
    rt = await startRuntime();
    dir = mkdtempSync(join(tmpdir(), 'eddy-open-'));
  });
  afterEach(() => rt.stop());

  it('answers 400 naming the onramp and the cause, and leaves no instance behind', async () => {
    const missing = join(dir, 'missing.json');
    for (const [kind, body] of [
      ['onramp', { id: 'reader', type: 'file', config: { source: missing } }],
      ['pipeline', PASS],
      ['offramp', { id: 'writer', type: 'file', config: { file: join(dir, 'out.json') } }],
      ['binding', COPY],
    ] as const) {
      expect((await call(rt.base, 'POST', `/${kind}`, { body })).status, kind).to.equal(201);
    }
    const res = await call(rt.base, 'POST', '/binding/copy/one');
    expect(res.status).to.equal(400);
    expect((res.body as { error: string }).error).to.match(/onramp 'reader' \(file\) cannot start: .*ENOENT/);
    for (const kind of ['binding', 'onramp', 'pipeline', 'offramp']) {
      const id = kind === 'binding' ? 'copy' : kind === 'onramp' ? 'reader' : kind === 'pipeline' ? 'relay' : 'writer';
      expect(((await call(rt.base, 'GET', `/${kind}/${id}`)).body as { instances: string[] }).instances, kind).to.deep.equal([]);
    }
  });

  it('makes `server run -f` exit with status 1 and the cause', async () => {
    const config = join(dir, 'flow.yaml');
    writeFileSync(
      config,
      `onramp: [{ id: reader, type: file, config: { source: "${join(dir, 'missing.json')}" } }]
offramp: [{ id: writer, type: stdout }]
binding:
  - id: copy
    links:
      "/onramp/reader/{instance}/out": ["/pipeline/system::passthrough/{instance}/in"]
      "/pipeline/system::passthrough/{instance}/out": ["/offramp/writer/{instance}/in"]
mapping:
  /binding/copy/one: {}
`,
    );
    const run = await runEddy(['server', 'run', '-f', config, '--no-api']);
    expect(run.code).to.equal(1);
    expect(run.stderr).to.match(/onramp 'reader' \(file\) cannot start: .*ENOENT/);
  });
});

describe('connector machinery: a shared process stream tells every offramp on it', () => {
  it('tells each watcher when the stream is full and again when it drained', async () => {
    const pending: (() => void)[] = [];
    const slow = new Writable({ highWaterMark: 4, write: (_chunk, _enc, done) => void pending.push(done) });
    const writer = new BufferedWriter(slow);
    const seen: string[] = [];
    writer.watch({ full: () => seen.push('a full'), drained: () => seen.push('a drained') });
    void writer.write(Buffer.from('0123456789')); // settles once the stream takes it, which this test holds back
    writer.flush();
    // a watcher added while the stream is full is told at once
    writer.watch({ full: () => seen.push('b full'), drained: () => seen.push('b drained') });
    expect(seen).to.deep.equal(['a full', 'b full']);
    pending.shift()!();
    await eventually(() => seen.length === 4, 2000, 'drain');
    expect(seen).to.deep.equal(['a full', 'b full', 'a drained', 'b drained']);
  });
});

describe('connector machinery: request waiters', () => {
  it('answers a waiter once, under any of its keys, and forgets it', () => {
    const waiters = new Waiters<string>(1000, new VirtualTimeScheduler());
    const got: string[] = [];
    waiters.wait(
      ['1:1', '1:2'],
      'conn',
      (r) => got.push(r),
      (end) => got.push(end),
    );
    expect(waiters.size).to.equal(1);
    expect(waiters.answer(['1:2'], 'first')).to.equal(true);
    expect(waiters.answer(['1:1'], 'second')).to.equal(false);
    expect(got).to.deep.equal(['first']);
    expect(waiters.size).to.equal(0);
  });

  it('a reply answers the request it belongs to, not the one that has waited longest: several wait, replies come in another order', () => {
    const waiters = new Waiters<string>(1000, new VirtualTimeScheduler());
    const got: Record<string, string> = {};
    for (const n of [1, 2, 3])
      waiters.wait(
        [`1:${n}`],
        'conn',
        (reply) => (got[n] = reply),
        (end) => (got[n] = end),
      );
    expect(waiters.answer(['1:3'], 'for 3')).to.equal(true);
    expect(waiters.answer(['1:1'], 'for 1')).to.equal(true);
    expect(waiters.answer(['1:2'], 'for 2')).to.equal(true);
    expect(got).to.deep.equal({ 1: 'for 1', 2: 'for 2', 3: 'for 3' });
  });

  it('times a waiter out at the deadline it is given, not before', () => {
    const scheduler = new VirtualTimeScheduler();
    const waiters = new Waiters<string>(1000, scheduler);
    const ended: [string, number][] = [];
    waiters.wait(
      ['1:1'],
      'a',
      () => undefined,
      (end) => ended.push([`a ${end}`, scheduler.now()]),
      250,
    );
    waiters.wait(
      ['1:2'],
      'b',
      () => undefined,
      (end) => ended.push([`b ${end}`, scheduler.now()]),
    );
    scheduler.flush();
    expect(ended).to.deep.equal([
      ['a timeout', 250],
      ['b timeout', 1000],
    ]);
  });

  it('an Alarm never runs before the clock reaches its time, even on a scheduler whose timers fire early', () => {
    const clock = new VirtualTimeScheduler();
    // a timer set for d ms fires after only 90% of it, as a Node timer counting from a stale loop time can
    const early: SchedulerLike = {
      now: () => clock.now(),
      schedule: <T>(work: (this: SchedulerAction<T>, state?: T) => void, delay = 0, state?: T) => clock.schedule(work, Math.ceil(delay * 0.9), state),
    };
    const ran: number[] = [];
    new Alarm(early, 100, () => ran.push(clock.now()));
    clock.flush();
    expect(ran).to.deep.equal([100]);
  });

  it('times a waiter out once, and drops the waiters of a closed connection', () => {
    const scheduler = new VirtualTimeScheduler();
    const waiters = new Waiters<string>(1000, scheduler);
    const got: string[] = [];
    waiters.wait(
      ['1:1'],
      'a',
      (r) => got.push(r),
      (end) => got.push(`a ${end}`),
    );
    waiters.wait(
      ['1:2'],
      'b',
      (r) => got.push(r),
      (end) => got.push(`b ${end}`),
    );
    waiters.dropGroup('b');
    scheduler.flush();
    expect(got).to.deep.equal(['b dropped', 'a timeout']);
    expect(waiters.answer(['1:1'], 'late')).to.equal(false);
    expect(waiters.size).to.equal(0);
  });
});

describe('instance changes are serialised', () => {
  let rt: Started;
  beforeEach(async () => (rt = await startRuntime()));
  afterEach(() => rt.stop());

  it('answers 20 parallel activations of one binding instance with one 201 and 409s, and wires the flow once', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'eddy-race-'));
    const source = join(dir, 'in.json');
    const target = join(dir, 'out.json');
    writeFileSync(source, '{"n":1}\n{"n":2}\n');
    for (const [kind, body] of [
      ['onramp', { id: 'reader', type: 'file', config: { source } }],
      ['pipeline', PASS],
      ['offramp', { id: 'writer', type: 'file', config: { file: target } }],
      ['binding', COPY],
    ] as const) {
      expect((await call(rt.base, 'POST', `/${kind}`, { body })).status, kind).to.equal(201);
    }
    const statuses = await Promise.all(Array.from({ length: 20 }, () => call(rt.base, 'POST', '/binding/copy/one').then((r) => r.status)));
    expect(statuses.filter((s) => s === 201)).to.have.length(1);
    expect(statuses.filter((s) => s === 409)).to.have.length(19);
    const lines = () => readFileSync(target, 'utf8').split('\n').filter(Boolean);
    await eventually(() => lines().length >= 2, 5000, 'both events');
    // wait for the file onramp to finish, then nothing more may arrive
    await eventually(() => rt.runtime.offramp('/offramp/writer/one')!.counters.in >= 2, 5000, 'the offramp saw both');
    expect(rt.runtime.onramp('/onramp/reader/one')!.runtime.counters.out).to.equal(2);
  });
});

describe('a sink that is down before its sources connect', () => {
  it('holds the breaker of an onramp linked after it, and lets it go when the sink restores', async () => {
    const runtime = new Runtime({ logger: createLogger('silent') });
    let restore: () => void = () => undefined;
    runtime.registerOfframp({
      name: 'down',
      defaultCodec: 'json',
      autoAck: true,
      configSchema: { type: 'object', additionalProperties: false, properties: {} },
      create(_config, ctx) {
        ctx.trigger(); // disconnected from the start
        restore = ctx.restore;
        return { send: () => undefined };
      },
    });
    await runtime.start();
    try {
      runtime.publish('onramp', { id: 'tick', type: 'metronome', config: { interval: 60000 } });
      runtime.publish('pipeline', PASS);
      runtime.publish('offramp', { id: 'sink', type: 'down' });
      runtime.publish('binding', {
        id: 'flow',
        links: { '/onramp/tick/{instance}/out': ['/pipeline/relay/{instance}/in'], '/pipeline/relay/{instance}/out': ['/offramp/sink/{instance}/in'] },
      });
      await runtime.activate('binding', 'flow', 'one');
      const breaker = runtime.onramp('/onramp/tick/one')!.runtime.breaker;
      expect(breaker.holders()).to.deep.equal(['/offramp/sink/one']);
      restore();
      expect(breaker.isOpen).to.equal(true);
    } finally {
      await runtime.shutdown();
    }
  });
});

describe('connector machinery: a buffered writer whose stream broke', () => {
  it('writes a line and its newline as one flush, and once the stream broke fails every later write with its error, once', async () => {
    const written: string[] = [];
    let fail = false;
    const stream = new Writable({ write: (chunk, _enc, done) => (fail ? done(new Error('EIO')) : (written.push(String(chunk)), done())) });
    const broke: string[] = [];
    const writer = new BufferedWriter(stream, undefined, (err) => broke.push(err.message));
    await writer.write(Buffer.from('a'), Buffer.from('\n'));
    expect(written).to.deep.equal(['a\n']);
    fail = true;
    await writer.write(Buffer.from('b'), Buffer.from('\n')).then(
      () => expect.fail('the write failed'),
      (err: unknown) => expect((err as Error).message).to.equal('EIO'),
    );
    await eventually(() => broke.length === 1, 2000, 'the error heard');
    // one promise for a line's parts: it is rejected, and it is the one the caller holds
    await writer.write(Buffer.from('c'), Buffer.from('\n')).then(
      () => expect.fail('a write after the break failed'),
      (err: unknown) => expect((err as Error).message).to.equal('EIO'),
    );
    expect(broke).to.deep.equal(['EIO']);
  });
});
