import { expect } from 'chai';
import { parse as parseYaml } from 'yaml';
import { asyncScheduler, type SchedulerLike } from 'rxjs';
import type { EddyEvent } from '../../../src/core/event';
import { Runtime } from '../../../src/runtime/runtime';
import { eventually } from '../../helpers/runtime';
import { probeOnramp, range, registriesWith, type ProbeLog } from '../../integration/delivery/helpers';
import { freePort, recordingLogger, targetServer, type TargetServer } from './helpers';

interface OfframpFlow {
  runtime: Runtime;
  log: ProbeLog;
  /** what the linked offramp emitted on out and err */
  out: EddyEvent[];
  err: EddyEvent[];
  /** the breaker of the probe onramp: false while triggered */
  gateOpen(): boolean;
  stop(): Promise<void>;
}

interface OfframpFlowSpec {
  count: number;
  offramp: Record<string, unknown>;
  nodes?: { id: string; type: string; config?: Record<string, unknown> }[];
  scheduler?: SchedulerLike;
}

/** probe onramp (`{id: n}` events, transactional) -> pipeline -> rest offramp; a linked offramp's out and err recorded. */
async function startOfframpFlow(spec: OfframpFlowSpec): Promise<OfframpFlow> {
  const log: ProbeLog = { read: 0, acks: [], fails: [] };
  const runtime = new Runtime({ registries: registriesWith([probeOnramp(log)], []), logger: recordingLogger(), scheduler: spec.scheduler });
  await runtime.start();
  const nodes = spec.nodes ?? [{ id: 'pass', type: 'passthrough' }];
  const links: Record<string, string[]> = { in: [nodes[0].id] };
  nodes.forEach((n, i) => (links[n.id] = [i + 1 < nodes.length ? nodes[i + 1].id : 'out']));
  const passthrough = (id: string) => ({
    id,
    interface: { inputs: ['in'], outputs: ['out'] },
    nodes: [{ id: 'pass', type: 'passthrough' }],
    links: { in: ['pass'], pass: ['out'] },
  });
  runtime.publish('onramp', { id: 'src', type: 'probe', config: { count: spec.count } });
  runtime.publish('pipeline', { id: 'p', interface: { inputs: ['in'], outputs: ['out'] }, nodes, links });
  runtime.publish('pipeline', passthrough('replies'));
  runtime.publish('pipeline', passthrough('errors'));
  runtime.publish('offramp', { id: 'dst', type: 'rest', ...spec.offramp });
  const bindingLinks: Record<string, string[]> = {
    '/onramp/src/{instance}/out': ['/pipeline/p/{instance}/in'],
    '/pipeline/p/{instance}/out': ['/offramp/dst/{instance}/in'],
  };
  if (spec.offramp.linked === true) {
    bindingLinks['/offramp/dst/{instance}/out'] = ['/pipeline/replies/{instance}/in'];
    bindingLinks['/offramp/dst/{instance}/err'] = ['/pipeline/errors/{instance}/in'];
  }
  runtime.publish('binding', { id: 'flow', links: bindingLinks });
  const out: EddyEvent[] = [];
  const err: EddyEvent[] = [];
  await runtime.activate('binding', 'flow', 'main', {});
  if (spec.offramp.linked === true) {
    runtime
      .pipeline('/pipeline/replies/main')!
      .output('out')
      .subscribe((e) => out.push(e));
    runtime
      .pipeline('/pipeline/errors/main')!
      .output('out')
      .subscribe((e) => err.push(e));
  }
  return {
    runtime,
    log,
    out,
    err,
    gateOpen: () => runtime.onramp('/onramp/src/main')!.runtime.breaker.isOpen,
    stop: () => runtime.shutdown(),
  };
}

/** The async scheduler, keeping the delay of every action scheduled on it. */
function delaysSeen(): { scheduler: SchedulerLike; delays: number[] } {
  const delays: number[] = [];
  const scheduler: SchedulerLike = {
    now: () => asyncScheduler.now(),
    // eslint-disable-next-line @typescript-eslint/no-explicit-any -- RxJS's SchedulerLike.schedule is generic over its state; this fake takes any
    schedule: (work: any, delay?: number, state?: any) => {
      delays.push(delay ?? 0);
      return asyncScheduler.schedule(work, delay, state);
    },
  };
  return { scheduler, delays };
}

const idsOf = (server: TargetServer) => server.received.map((r) => (JSON.parse(r.body) as { id: number }).id).sort((a, b) => a - b);
const sleep = (ms: number) => new Promise<void>((r) => setTimeout(r, ms));

describe('rest offramp', () => {
  let flow: OfframpFlow | undefined;
  let server: TargetServer | undefined;
  afterEach(async () => {
    await flow?.stop();
    await server?.close();
    flow = server = undefined;
  });

  it('POSTs each event to the endpoint with the configured headers and acks it on a 2xx answer', async () => {
    server = await targetServer();
    flow = await startOfframpFlow({
      count: 20,
      offramp: { config: { endpoint: `http://127.0.0.1:${server.port}/in?src=eddy`, headers: { 'x-team': 'ops' } } },
    });
    await eventually(() => flow!.log.acks.length === 20, 5000, '20 acks');
    expect(flow.log.acks.sort((a, b) => a - b)).to.deep.equal(range(1, 20));
    expect(flow.log.fails).to.deep.equal([]);
    expect(idsOf(server)).to.deep.equal(range(1, 20));
    const first = server.received[0];
    expect(first.method).to.equal('POST');
    expect(first.url).to.equal('/in?src=eddy');
    expect(first.headers['x-team']).to.equal('ops');
    expect(first.headers['content-type']).to.equal('application/json');
  });

  it('fails events answered 4xx or 5xx and acks 3xx', async () => {
    server = await targetServer((req, res) => {
      const { id } = JSON.parse(req.body) as { id: number };
      res.writeHead(id % 3 === 0 ? 500 : id % 3 === 1 ? 404 : 304);
      res.end();
    });
    flow = await startOfframpFlow({ count: 12, offramp: { config: { endpoint: `http://127.0.0.1:${server.port}/` } } });
    await eventually(() => flow!.log.acks.length + flow!.log.fails.length === 12, 5000, '12 outcomes');
    expect(flow.log.acks.sort((a, b) => a - b)).to.deep.equal([2, 5, 8, 11]);
    expect(flow.log.fails.sort((a, b) => a - b)).to.deep.equal([1, 3, 4, 6, 7, 9, 10, 12]);
  });

  it('never has more than concurrency requests in flight at the server, and delivers every event', async () => {
    server = await targetServer(async (_req, res) => {
      await sleep(5); // pacing only: requests overlap, so the limit is reached (the test asserts it was)
      res.writeHead(200);
      res.end();
    });
    flow = await startOfframpFlow({ count: 80, offramp: { config: { endpoint: `http://127.0.0.1:${server.port}/`, concurrency: 3 } } });
    await eventually(() => flow!.log.acks.length === 80, 8000, '80 acks');
    expect(server.maxInFlight).to.equal(3);
    expect(idsOf(server)).to.deep.equal(range(1, 80));
    expect(flow.log.fails).to.deep.equal([]);
  });

  it('connection refused: triggers the breaker, fails what it could not send, and restores once the server is up', async () => {
    const port = await freePort();
    const { scheduler, delays } = delaysSeen();
    flow = await startOfframpFlow({ count: 60, offramp: { config: { endpoint: `http://127.0.0.1:${port}/` } }, scheduler });
    // every change of the breaker, with how much the source had read when it happened
    const changes: [boolean, number][] = [];
    const watch = flow.runtime.onramp('/onramp/src/main')!.runtime.breaker.changes.subscribe((open) => changes.push([open, flow!.log.read]));
    await eventually(() => !flow!.gateOpen() && flow!.log.fails.length > 0, 5000, 'the breaker triggered');
    expect(flow.log.read).to.be.below(60);
    const triggered = changes.findIndex(([open]) => !open);
    // the offramp's probes back off from 100 ms, doubling, each delay jittered up to that (core/jitter.ts): a second probe
    // scheduled (within 200 ms) means the first has found the port closed
    await eventually(() => delays.filter((d) => d > 0 && d <= 200).length >= 2, 5000, 'a probe failed');
    const beforeServer = changes.slice(triggered);
    server = await targetServer(undefined, port);
    await eventually(() => flow!.gateOpen(), 8000, 'the breaker restored');
    watch.unsubscribe();
    // a failed probe restored nothing: the breaker stayed triggered while the server was down
    expect(
      beforeServer.map(([open]) => open),
      'changes while the server was down',
    ).to.deep.equal([false]);
    // the source reads only while the breaker is open: nothing between the trigger and the restore
    const restored = changes.findIndex(([open], i) => i > triggered && open);
    expect(changes[restored][1], 'the onramp stopped reading').to.equal(changes[triggered][1]);
    await eventually(() => flow!.log.acks.length + flow!.log.fails.length === 60, 5000, 'an outcome for all 60 events');
    // nothing dropped: every event was either delivered (and acked) or failed back to its source
    expect(idsOf(server)).to.deep.equal(flow.log.acks.sort((a, b) => a - b));
    expect([...flow.log.acks, ...flow.log.fails].sort((a, b) => a - b)).to.deep.equal(range(1, 60));
    expect(flow.log.acks).to.include(60);
  });

  it('encodes the body with the codec the Content-Type picks (codec_map over the builtin map)', async () => {
    server = await targetServer();
    flow = await startOfframpFlow({
      count: 2,
      offramp: { config: { endpoint: `http://127.0.0.1:${server.port}/`, headers: { 'Content-Type': 'application/yaml' } } },
    });
    await eventually(() => server!.received.length === 2, 5000, '2 requests');
    expect(server.received.map((r) => parseYaml(r.body)).sort((a, b) => a.id - b.id)).to.deep.equal([{ id: 1 }, { id: 2 }]);
    expect(server.received[0].headers['content-type']).to.equal('application/yaml');
    await flow.stop();
    server.received.length = 0;
    flow = await startOfframpFlow({
      count: 1,
      offramp: {
        codec_map: { 'application/x-lines': 'string' },
        config: { endpoint: `http://127.0.0.1:${server.port}/`, headers: { 'content-type': 'application/x-lines' } },
      },
      nodes: [{ id: 'text', type: 'runtime::cel', config: { set: { id: '"one"' } } }],
    });
    await eventually(() => server!.received.length === 1, 5000, '1 request');
    expect(server.received[0].body).to.equal('{"id":"one"}'); // string codec: a record as compact JSON
  });

  it('$endpoint (struct form) and $request (method, headers) override the config per event; userinfo becomes basic auth', async () => {
    server = await targetServer();
    flow = await startOfframpFlow({
      count: 1,
      offramp: { config: { endpoint: 'http://127.0.0.1:1/never', headers: { 'x-keep': 'yes', 'x-over': 'config' } } },
      nodes: [
        {
          id: 'route',
          type: 'runtime::cel',
          config: {
            meta: {
              endpoint: `{"scheme": "http", "username": "ann", "password": "pw", "host": "127.0.0.1", "port": ${server.port}, "path": "/override", "query": "a=1"}`,
              request: '{"method": "put", "headers": {"X-Over": ["m1", "m2"], "content-type": "application/yaml"}}',
            },
          },
        },
      ],
    });
    await eventually(() => server!.received.length === 1 && flow!.log.acks.length === 1, 5000, 'the request and its ack');
    const [r] = server.received;
    expect(r.method).to.equal('PUT');
    expect(r.url).to.equal('/override?a=1');
    expect(r.headers['x-keep']).to.equal('yes');
    expect(r.headers['x-over']).to.equal('m1, m2');
    expect(r.headers.authorization).to.equal(`Basic ${Buffer.from('ann:pw').toString('base64')}`);
    expect(parseYaml(r.body)).to.deep.equal({ id: 1 });
  });

  it('linked: responses on out, decoded by their Content-Type, with $response and $correlation; failures on err', async () => {
    server = await targetServer((req, res) => {
      const { id } = JSON.parse(req.body) as { id: number };
      if (id === 2) {
        res.writeHead(503, { 'content-type': 'text/plain' });
        res.end('busy');
        return;
      }
      res.writeHead(200, { 'content-type': 'application/yaml', 'x-seen': id });
      res.end(`echo: ${id}\n`);
    });
    flow = await startOfframpFlow({
      count: 3,
      offramp: { linked: true, config: { endpoint: `http://127.0.0.1:${server.port}/` } },
      nodes: [{ id: 'tag', type: 'runtime::cel', config: { meta: { correlation: '"c" + string(event.id)' } } }],
    });
    await eventually(() => flow!.out.length === 2 && flow!.err.length === 1, 5000, '2 replies and 1 error');
    const out = flow.out.sort((a, b) => (a.data as { echo: number }).echo - (b.data as { echo: number }).echo);
    expect(out.map((e) => e.data)).to.deep.equal([{ echo: 1 }, { echo: 3 }]);
    expect(out[0].meta.correlation).to.equal('c1');
    const response = out[0].meta.response as { status: number; headers: Record<string, string[]> };
    expect(response.status).to.equal(200);
    expect(response.headers['content-type']).to.deep.equal(['application/yaml']);
    expect(response.headers['x-seen']).to.deep.equal(['1']);
    const [e] = flow.err;
    expect(e.data).to.have.keys(['error', 'event_id']);
    expect((e.data as { error: string }).error).to.match(/answered 503/);
    expect((e.data as { event_id: string }).event_id).to.match(/^\d+:2$/);
    expect(e.meta.correlation).to.equal('c2');
    expect(e.meta.error).to.equal((e.data as { error: string }).error);
    expect((e.meta.response as { status: number }).status).to.equal(503);
    await eventually(() => flow!.log.acks.length === 2 && flow!.log.fails.length === 1, 3000, 'acks and fails');
    expect(flow.log.fails).to.deep.equal([2]);
  });

  it('linked: a network error goes to err without $response; a batch is rejected (err and fail)', async () => {
    const port = await freePort();
    flow = await startOfframpFlow({ count: 1, offramp: { linked: true, config: { endpoint: `http://127.0.0.1:${port}/` } } });
    await eventually(() => flow!.err.length === 1, 5000, 'the err event');
    expect(flow.err[0].meta).to.not.have.property('response');
    expect((flow.err[0].data as { error: string }).error).to.match(/ECONNREFUSED/);
    expect(flow.log.fails).to.deep.equal([1]);
    await flow.stop();

    server = await targetServer();
    flow = await startOfframpFlow({
      count: 2,
      offramp: { linked: true, config: { endpoint: `http://127.0.0.1:${server.port}/` } },
      nodes: [{ id: 'batch', type: 'generic::batch', config: { count: 2 } }],
    });
    await eventually(() => flow!.err.length === 1 && flow!.log.fails.length === 2, 5000, 'the batch rejected');
    expect((flow.err[0].data as { error: string }).error).to.match(/batch/);
    expect(server.received).to.deep.equal([]);
    expect(flow.out).to.deep.equal([]);
  });

  it('linked: an event whose $deadline has passed is not sent: it fails, with an err event naming it; a $deadline that is not a number fails too', async () => {
    server = await targetServer();
    flow = await startOfframpFlow({
      count: 4,
      offramp: { linked: true, config: { endpoint: `http://127.0.0.1:${server.port}/` } },
      // 1 and 3 are due in the far future, 2 was due at the epoch, 4's is not a time
      nodes: [{ id: 'due', type: 'runtime::cel', config: { meta: { deadline: 'event.id == 2 ? 0 : (event.id == 4 ? "soon" : 99999999999999)' } } }],
    });
    await eventually(() => flow!.log.acks.length === 2 && flow!.log.fails.length === 2, 5000, '2 acks and 2 fails');
    expect(flow.log.fails.sort()).to.deep.equal([2, 4]);
    expect(server.received.map((r) => JSON.parse(r.body).id).sort()).to.deep.equal([1, 3]);
    const errors = flow.err.map((e) => (e.data as { error: string }).error);
    expect(errors).to.have.length(2);
    expect(
      errors.find((e) => e.includes('$deadline had passed')),
      'the expired one',
    ).to.match(/not sent: .*when it reached the offramp; its caller was already answered/);
    expect(
      errors.find((e) => e.includes('$deadline must be')),
      'the bad one',
    ).to.match(/"soon"/);
    expect(flow.runtime.offramp('/offramp/dst/main')!.counters.error).to.equal(2);
  });

  it('unlinked: $deadline is not looked at (nobody waits for the answer), so every event is sent', async () => {
    server = await targetServer();
    flow = await startOfframpFlow({
      count: 2,
      offramp: { config: { endpoint: `http://127.0.0.1:${server.port}/` } },
      nodes: [{ id: 'due', type: 'runtime::cel', config: { meta: { deadline: '0' } } }],
    });
    await eventually(() => flow!.log.acks.length === 2, 5000, '2 acks');
    expect(server.received).to.have.length(2);
  });

  it('a bad $endpoint fails the event and sends nothing', async () => {
    server = await targetServer();
    flow = await startOfframpFlow({
      count: 1,
      offramp: { linked: true, config: { endpoint: `http://127.0.0.1:${server.port}/` } },
      nodes: [{ id: 'bad', type: 'runtime::cel', config: { meta: { endpoint: '"ftp://example.com/"' } } }],
    });
    await eventually(() => flow!.log.fails.length === 1 && flow!.err.length === 1, 5000, 'the fail');
    expect((flow.err[0].data as { error: string }).error).to.match(/\$endpoint: the scheme must be http or https/);
    expect(server.received).to.deep.equal([]);
  });

  it('refuses config it cannot honour: unknown keys at publish, client-set headers at activation', async () => {
    const runtime = new Runtime({ logger: recordingLogger() });
    await runtime.start();
    try {
      expect(() => runtime.publish('offramp', { id: 'x', type: 'rest', config: { endpoint: 'http://127.0.0.1:1/', retries: 3 } })).to.throw(
        /retries|additional/,
      );
      expect(() => runtime.publish('offramp', { id: 'y', type: 'rest', config: {} })).to.throw(/endpoint/);
      runtime.publish('offramp', { id: 'z', type: 'rest', config: { endpoint: 'http://127.0.0.1:1/', headers: { 'Content-Length': '5' } } });
      runtime.publish('binding', { id: 'b', links: { '/pipeline/system::passthrough/{instance}/out': ['/offramp/z/{instance}/in'] } });
      const activation = await runtime.activate('binding', 'b', 'main', {}).then(
        () => 'activated',
        (err: unknown) => (err as Error).message,
      );
      expect(activation).to.match(/offramp 'z' \(rest\) cannot start: headers: Content-Length is set by the HTTP client/);
    } finally {
      await runtime.shutdown();
    }
  });
});
