import { peer } from '../../helpers/peers';
import { expect } from 'chai';
import { execFile } from 'node:child_process';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { parseWrk } from '../../../bench/rest-echo';

describe('rest echo benchmark', () => {
  let server: Server | undefined;
  afterEach(async () => {
    server?.closeAllConnections();
    if (server) await new Promise((r) => server!.close(r));
    server = undefined;
  });

  it("reads requests/s, the request count, percentiles and errors from a real wrk run's output", async () => {
    let answered = 0;
    server = createServer((req, res) => {
      req.resume();
      req.on('end', () => {
        // every fifth answer is an error, which the parser must count
        res.writeHead(++answered % 5 === 0 ? 500 : 200, { 'content-length': '2' });
        res.end('{}');
      });
    });
    await new Promise<void>((resolve) => server!.listen(0, '127.0.0.1', resolve));
    const { port } = server.address() as AddressInfo;
    const out = await new Promise<string>((resolve, reject) =>
      execFile(peer('wrk'), ['-t1', '-c2', '-d1s', '--latency', `http://127.0.0.1:${port}/`], (err, stdout) =>
        err ? reject(new Error(err.message)) : resolve(stdout),
      ),
    );
    const result = parseWrk(out);
    expect(result.requests).to.be.greaterThan(0);
    expect(result.requests).to.be.at.most(answered);
    expect(result.requestsPerSecond).to.be.greaterThan(0);
    expect(result.p50).to.be.a('number').and.at.most(result.p99);
    expect(result.errors).to.be.closeTo(Math.floor(result.requests / 5), 2);
  });
});
