import { expect } from 'chai';
import { exampleCopy } from '../../helpers/examples';
import { eventually } from '../../helpers/runtime';
import { runExample } from '../example-runner';
import { Client } from './helpers';

describe('examples/ws.yaml', () => {
  it('runs as a WebSocket echo service that also prints each message to stdout', async function () {
    this.timeout(20000);
    // the example's port 8139 becomes 0: the onramp logs the port it bound
    const eddy = runExample(exampleCopy('ws.yaml', { 8139: 0 }));
    const clients: Client[] = [];
    let code: number | null;
    try {
      const [, port] = await eddy.logged(/Onramp \S*\/onramp\/ws\/main: listening on ws:\/\/127\.0\.0\.1:(\d+)\//);
      const client = await Client.open(`ws://127.0.0.1:${port}/`);
      clients.push(client);
      const other = await Client.open(`ws://127.0.0.1:${port}/`);
      clients.push(other);
      await client.send('{"hello":"world"}');
      await other.send(Buffer.from('{"from":"other"}'));
      await eventually(() => client.received.length === 1 && other.received.length === 1, 5000, 'the echoes');
      expect(client.received).to.deep.equal([{ text: '{"hello":"world"}', binary: false }]);
      expect(other.received).to.deep.equal([{ text: '{"from":"other"}', binary: true }]);
    } finally {
      await Promise.all(clients.map((c) => c.close()));
      code = await eddy.stop();
    }
    expect(code, eddy.stderr()).to.equal(0);
    expect(eddy.stdout().split('\n').filter(Boolean).sort()).to.deep.equal(['{"from":"other"}', '{"hello":"world"}']);
  });
});
