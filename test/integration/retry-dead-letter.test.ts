import { expect } from 'chai';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { runEddy } from '../helpers/cli';
import { docBlock } from '../helpers/readme';

/**
 * docs/delivery.md "Retries and dead letters", run as written against a
 * real HTTP server: event 1 is answered 503 twice, then 200 (delivered
 * once, on the third send); event 2 is answered 400 (not retried) and
 * lands in the dead-letter file with its reason.
 */
describe('retries and dead letters: docs/delivery.md, run as written', function () {
  this.timeout(30000);
  let dir: string;
  let server: Server;
  const requests: { n: number; status: number }[] = [];

  before(async () => {
    dir = mkdtempSync(join(tmpdir(), 'eddy-dlq-'));
    const seen = new Map<number, number>();
    server = createServer((req, res) => {
      let body = '';
      req.on('data', (d: Buffer | string) => (body += d.toString()));
      req.on('end', () => {
        const n = (JSON.parse(body) as { n: number }).n;
        const tries = (seen.get(n) ?? 0) + 1;
        seen.set(n, tries);
        const status = n === 2 ? 400 : tries <= 2 ? 503 : 200;
        requests.push({ n, status });
        res.writeHead(status).end();
      });
    });
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  });
  after(() => {
    server.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it('delivers the event answered 503 twice once, and writes the one answered 400 to the dead letters with its reason', async () => {
    const port = (server.address() as AddressInfo).port;
    const dead = join(dir, 'dead-letters.json');
    const yaml = docBlock('docs/delivery.md', '## Retries and dead letters', 'yaml')
      .replace(/http:\/\/127\.0\.0\.1:\d+/, `http://127.0.0.1:${port}`)
      .replace('/tmp/dead-letters.json', dead)
      .replace('/tmp/events.json', join(dir, 'events.json'));
    writeFileSync(join(dir, 'events.json'), '{"n":1}\n{"n":2}\n');
    const config = join(dir, 'flow.yaml');
    writeFileSync(config, yaml);
    // without the API, eddy exits by itself once the file is read and every send settled (a retry's timer keeps it
    // running until then): no signal to race with that exit
    const run = await runEddy(['server', 'run', '-f', config, '--no-api'], { timeoutMs: 20000 });
    expect(run.code, run.stderr).to.equal(0);
    expect(requests.filter((r) => r.n === 1).map((r) => r.status)).to.deep.equal([503, 503, 200]);
    expect(requests.filter((r) => r.n === 2).map((r) => r.status)).to.deep.equal([400]);
    const letters = readFileSync(dead, 'utf8')
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l) as unknown);
    expect(letters).to.deep.equal([{ n: 2, error: { type: 'send', message: `POST http://127.0.0.1:${port}/events answered 400`, status: 400, attempt: 1 } }]);
    // up to 100 ms: the delay is drawn with full jitter (core/jitter.ts)
    const retrying = /send failed \(attempt 1 of 4\), retrying in (\d+) ms/.exec(run.stderr);
    expect(retrying, run.stderr).to.not.equal(null);
    expect(Number(retrying![1])).to.be.within(1, 100);
  });
});
