import { expect } from 'chai';
import { connect as netConnect, createServer, type Socket } from 'node:net';
import { connect as tlsConnect } from 'node:tls';
import { VirtualTimeScheduler } from 'rxjs';
import { Backoff } from '../../../src/connectors/_shared/backoff';
import { NO_JITTER } from '../../../src/core/jitter';
import { PeerWatch, connectProbe, type PeerWatchContext, type Probe } from '../../../src/connectors/_shared/peer-watch';
import { freePort, recordingLogger } from '../net-helpers';

/** A probe the test answers: `answer` resolves it, `fail` rejects it; `cancelled` once the watch cancelled it. */
interface ScriptedProbe extends Probe {
  peer: string;
  /** the virtual time it started at */
  at: number;
  cancelled: boolean;
  answer(): void;
  fail(): void;
}

/** A watch in virtual time (back-off 100 ms doubling to 5 s), with its breaker counts, log lines and every probe it started. */
function setUp() {
  const scheduler = new VirtualTimeScheduler();
  const logger = recordingLogger();
  const counts = { triggers: 0, restores: 0 };
  const probes: ScriptedProbe[] = [];
  const ctx: PeerWatchContext = {
    url: '/offramp/out/main',
    logger,
    scheduler,
    trigger: () => {
      counts.triggers++;
    },
    restore: () => {
      counts.restores++;
    },
  };
  const watch = new PeerWatch<string>(ctx, {
    backoff: new Backoff(100, 5000, NO_JITTER),
    probe: (peer) => {
      let answer!: () => void;
      let fail!: () => void;
      const done = new Promise<void>((resolve, reject) => ((answer = resolve), (fail = () => reject(new Error('refused')))));
      const probe: ScriptedProbe = { peer, at: scheduler.now(), cancelled: false, done, answer, fail, cancel: () => void (probe.cancelled = true) };
      probes.push(probe);
      return probe;
    },
    paused: (peer) => `${peer}; paused`,
    resumed: (peer) => `${peer} answers; resumed`,
  });
  /** runs the scheduled waits (each ends in a probe, which waits for the test), then lets the probe's outcome be seen */
  const run = () => scheduler.flush();
  return { scheduler, logger, counts, probes, watch, run };
}

/** Lets the promise callbacks of a settled probe run. */
const settled = () => new Promise<void>((resolve) => setImmediate(resolve));

describe('PeerWatch: breaker and back-off probe of a lost peer (virtual time)', () => {
  it('triggers once however many sends fail, probes on the back-off, restores once on the first answer', async () => {
    const { logger, counts, probes, watch, run } = setUp();
    for (let i = 0; i < 5; i++) watch.lost('http://peer:1');
    expect(counts).to.deep.equal({ triggers: 1, restores: 0 });
    expect(watch.down).to.equal('http://peer:1');
    for (let i = 0; i < 8; i++) {
      run();
      probes[i].fail();
      await settled();
      watch.lost('http://peer:1'); // sends still failing change nothing
    }
    run();
    expect(probes.map((p) => p.peer)).to.deep.equal(Array(9).fill('http://peer:1'));
    const gaps = probes.map((p, i) => p.at - (i === 0 ? 0 : probes[i - 1].at));
    expect(gaps, 'waits before each probe').to.deep.equal([100, 200, 400, 800, 1600, 3200, 5000, 5000, 5000]);
    expect(counts, 'failed probes restore nothing').to.deep.equal({ triggers: 1, restores: 0 });
    probes[8].answer();
    await settled();
    watch.reached(); // a send answered as well: already restored
    expect(counts).to.deep.equal({ triggers: 1, restores: 1 });
    expect(watch.down).to.equal(undefined);
    expect(logger.lines).to.deep.equal([
      'warn Offramp /offramp/out/main: http://peer:1; paused',
      'info Offramp /offramp/out/main: http://peer:1 answers; resumed',
    ]);
    run();
    expect(probes, 'no probe once restored').to.have.length(9);
  });

  it('a new outage triggers again and starts the back-off from the bottom', async () => {
    const { scheduler, counts, probes, watch, run } = setUp();
    watch.lost('a');
    for (let i = 0; i < 3; i++) {
      run();
      probes[i].fail();
      await settled();
    }
    run();
    probes[3].answer();
    await settled();
    const restoredAt = scheduler.now();
    watch.lost('b');
    run();
    expect(counts).to.deep.equal({ triggers: 2, restores: 1 });
    expect(probes[4].peer).to.equal('b');
    expect(probes[4].at - restoredAt, 'the first wait of the new outage').to.equal(100);
  });

  it('a send that gets through restores at once and cancels the probe in flight; its late answer counts for nothing', async () => {
    const { counts, probes, watch, run } = setUp();
    watch.lost('a');
    run();
    watch.reached();
    expect(probes[0].cancelled).to.equal(true);
    watch.lost('a');
    probes[0].answer(); // the old probe: the new outage stands
    await settled();
    expect(counts).to.deep.equal({ triggers: 2, restores: 1 });
    expect(watch.down).to.equal('a');
  });

  it('no probe after close: a wait pending is cancelled, a probe in flight is cancelled and its outcome ignored', async () => {
    const pending = setUp();
    pending.watch.lost('a');
    pending.watch.close();
    pending.run();
    expect(pending.probes, 'closed during the wait').to.have.length(0);

    const inFlight = setUp();
    inFlight.watch.lost('a');
    inFlight.run();
    inFlight.watch.close();
    expect(inFlight.probes[0].cancelled).to.equal(true);
    inFlight.probes[0].fail();
    await settled();
    inFlight.run();
    expect(inFlight.probes, 'closed during a probe that then failed').to.have.length(1);
    expect(inFlight.counts).to.deep.equal({ triggers: 1, restores: 0 });

    const answered = setUp();
    answered.watch.lost('a');
    answered.run();
    answered.watch.close();
    answered.probes[0].answer();
    await settled();
    answered.watch.lost('b');
    expect(answered.counts, 'closed: no restore, no new trigger').to.deep.equal({ triggers: 1, restores: 0 });
  });

  it('holdFor: paused for the time asked without probing, then restored; a loss meanwhile does not add a trigger', () => {
    const { scheduler, logger, counts, probes, watch, run } = setUp();
    watch.holdFor('429: waiting 3 s', 3000);
    watch.lost('a');
    expect(counts).to.deep.equal({ triggers: 1, restores: 0 });
    run();
    expect(scheduler.now()).to.equal(3000);
    expect(counts).to.deep.equal({ triggers: 1, restores: 1 });
    expect(probes).to.have.length(0);
    expect(logger.lines).to.deep.equal([
      'warn Offramp /offramp/out/main: 429: waiting 3 s; paused',
      'info Offramp /offramp/out/main: 429: waiting 3 s answers; resumed',
    ]);
  });
});

describe('connectProbe (real sockets)', () => {
  it('resolves when the peer accepts the connection, and closes it', async () => {
    const server = createServer();
    // the server sees the probe's connection end: the probe closed it
    const closed = new Promise<void>((resolve) => server.once('connection', (socket) => socket.resume().once('close', resolve)));
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const { port } = server.address() as { port: number };
    try {
      await connectProbe(() => netConnect({ host: '127.0.0.1', port }), 'connect', 5000).done;
      await closed;
    } finally {
      await new Promise<void>((resolve) => server.close(() => resolve()));
    }
  });

  it('rejects when the port is closed', async () => {
    const port = await freePort();
    const outcome = await connectProbe(() => netConnect({ host: '127.0.0.1', port }), 'connect', 5000).done.then(
      () => 'answered',
      (err: unknown) => (err as NodeJS.ErrnoException).code,
    );
    expect(outcome).to.equal('ECONNREFUSED');
  });

  it('rejects when the peer does not get ready within the timeout (TCP accepted, no TLS handshake)', async () => {
    const held: Socket[] = [];
    const server = createServer((socket) => held.push(socket));
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const { port } = server.address() as { port: number };
    try {
      const outcome = await connectProbe(() => tlsConnect({ host: '127.0.0.1', port }), 'secureConnect', 100).done.then(
        () => 'answered',
        (err: unknown) => (err as Error).message,
      );
      expect(outcome).to.equal('no connection within 100 ms');
    } finally {
      for (const socket of held) socket.destroy();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    }
  });
});
