import { expect } from 'chai';
import { join } from 'node:path';
import { runEddy } from '../../helpers/cli';
import { eventually } from '../../helpers/runtime';
import { Client } from './helpers';

const EXAMPLE = join(__dirname, '../../../../examples/ws.yaml');

describe('examples/ws.yaml', () => {
  it('runs as a WebSocket echo service that also prints each message to stdout', async () => {
    let done = false;
    const run = runEddy(['server', 'run', '-f', EXAMPLE, '--no-api'], { timeoutMs: 15000, signalWhen: () => done });
    const clients: Client[] = [];
    try {
      // the server is up once a client can connect
      let client: Client | undefined;
      await eventually(
        async () => {
          client = await Client.open('ws://127.0.0.1:8139/').catch(() => undefined);
          return client !== undefined;
        },
        10000,
        'the example to listen on 127.0.0.1:8139',
      );
      clients.push(client!);
      const other = await Client.open('ws://127.0.0.1:8139/');
      clients.push(other);
      await client!.send('{"hello":"world"}');
      await other.send(Buffer.from('{"from":"other"}'));
      await eventually(() => client!.received.length === 1 && other.received.length === 1, 5000, 'the echoes');
      expect(client!.received).to.deep.equal([{ text: '{"hello":"world"}', binary: false }]);
      expect(other.received).to.deep.equal([{ text: '{"from":"other"}', binary: true }]);
    } finally {
      await Promise.all(clients.map((c) => c.close()));
      done = true;
    }
    const result = await run;
    expect(result.code, result.stderr).to.equal(0);
    expect(result.stdout.split('\n').filter(Boolean).sort()).to.deep.equal(['{"from":"other"}', '{"hello":"world"}']);
  });
});
