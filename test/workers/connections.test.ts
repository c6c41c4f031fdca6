/**
 * Long-lived tcp connections under `--workers 2` (src/workers/balancer.ts):
 * the primary hands each connection to the worker that holds the fewest, so
 * a worker killed and restarted takes the connections that come next until
 * it holds as many as the survivor (round-robin gave it only every other
 * one). Which worker carried a line is told by the collector: each worker's
 * tcp offramp is one connection to it, and the restarted worker's is a new one.
 */
import { expect } from 'chai';
import { connect, type Socket } from 'node:net';
import { eventually } from '../helpers/runtime';
import { freePort } from '../connectors/net-helpers';
import { created } from '../runtime/persistence-server';
import { collector, flow, health, killAll, runningPid, startWorkers, workerPids, workersRunning, type Collector } from './helpers';

/** A client of the tcp onramp that stays connected; `closed` once the server side went away. */
interface Client {
  name: string;
  socket: Socket;
  closed: boolean;
}

function open(port: number, name: string, line: string): Promise<Client> {
  return new Promise((resolve, reject) => {
    const client: Client = { name, socket: connect(port, '127.0.0.1'), closed: false };
    client.socket.once('connect', () => {
      client.socket.write(`${JSON.stringify({ client: name, line })}\n`);
      resolve(client);
    });
    client.socket.once('error', reject);
    client.socket.once('close', () => (client.closed = true));
  });
}

/** The index of the collector connection (one per worker's offramp) each of `lines` arrived on. */
function carriers(sink: Collector, line: string): Map<string, number> {
  const found = new Map<string, number>();
  sink.connections.forEach((lines, i) => {
    for (const l of lines) {
      const event = JSON.parse(l) as { client: string; line: string };
      if (event.line === line) found.set(event.client, i);
    }
  });
  return found;
}

describe('eddy server run --workers 2: tcp connections after a worker restart', function () {
  this.timeout(180000);
  let sink: Collector | undefined;
  const clients: Client[] = [];
  afterEach(async () => {
    for (const c of clients.splice(0)) c.socket.destroy();
    await killAll();
    await sink?.close();
    sink = undefined;
  });

  it('hands the restarted worker the reconnecting clients: the worker with fewer connections gets the next one', async () => {
    sink = await collector();
    const port = await freePort();
    const server = await startWorkers();
    await created(server.base, '/onramp', { id: 'in', type: 'tcp', preprocessors: ['lines'], config: { host: '127.0.0.1', port } });
    await created(server.base, '/offramp', { id: 'out', type: 'tcp', postprocessors: ['lines'], config: { host: '127.0.0.1', port: sink.port } });
    await created(server.base, '/binding', flow('conns', 'in', 'out'));
    await created(server.base, '/binding/conns/main');
    expect(await workersRunning(server.base, '/onramp/in/main')).to.deep.equal([0, 1]);

    const names = ['a', 'b', 'c', 'd', 'e', 'f', 'g', 'h'];
    for (const name of names) clients.push(await open(port, name, 'first'));
    await eventually(() => carriers(sink!, 'first').size === names.length, 30000, 'every first line at the collector');
    const before = carriers(sink, 'first');
    // evenly spread: four connections on each worker
    const perCarrier = (found: Map<string, number>) => [...found.values()].reduce((n, i) => n.set(i, (n.get(i) ?? 0) + 1), new Map<number, number>());
    expect([...perCarrier(before).values()]).to.deep.equal([4, 4]);

    const [, second] = await workerPids(server.base);
    process.kill(second, 'SIGKILL');
    // the clients it held are cut off (their events in flight are lost with it: a tcp client cannot be asked again)
    await eventually(() => clients.filter((c) => c.closed).length === 4, 30000, "the killed worker's clients to be cut off");
    await eventually(
      async () => {
        const pid = await runningPid(server.base, 1);
        return pid !== undefined && pid !== second;
      },
      60000,
      'worker 1 to run again',
    );
    await eventually(async () => (await workersRunning(server.base, '/onramp/in/main')).join() === '0,1', 30000, 'the onramp to run on both workers again');
    await eventually(async () => (await health(server.base)).status === 200, 30000, 'GET /health to answer 200 again');

    // the cut-off clients connect again: the survivor holds four, the restarted worker none, so it takes all four
    const cut = clients.filter((c) => c.closed);
    for (const c of cut) clients.push(await open(port, c.name, 'again'));
    await eventually(() => carriers(sink!, 'again').size === cut.length, 30000, 'every reconnected client at the collector');
    const again = carriers(sink, 'again');
    const survivorCarrier = before.get(clients.find((c) => !c.closed && before.has(c.name))!.name)!;
    const restartedCarriers = new Set(again.values());
    expect([...restartedCarriers], 'one carrier: the restarted worker').to.have.length(1);
    const [restarted] = restartedCarriers;
    expect(restarted, 'not the survivor').to.not.equal(survivorCarrier);
    expect(new Set(before.values()).has(restarted), "not the killed worker's old connection: a new one").to.equal(false);

    // and the next new client goes round again once both hold four
    for (const name of ['i', 'j']) clients.push(await open(port, name, 'later'));
    await eventually(() => carriers(sink!, 'later').size === 2, 30000, 'the later clients at the collector');
    expect(new Set(carriers(sink, 'later').values())).to.deep.equal(new Set([survivorCarrier, restarted]));
  });
});
