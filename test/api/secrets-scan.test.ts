/**
 * docs/security.md "Secrets", end to end: a server started from a config
 * file whose secrets come from the environment (${NAME}) runs flows that
 * use them; every API answer about them, the live tap and every log line
 * are scanned: none holds a secret.
 */
import { expect } from 'chai';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { spawn, type ChildProcess } from 'node:child_process';
import { EDDY } from '../helpers/cli';
import { call, eventually } from '../helpers/runtime';

const SECRETS = { REST_PASSWORD: 'S3cret-rest-4711', NATS_TOKEN: 'S3cret-nats-4712', PG_PASSWORD: 'S3cret-pg-4713', AMQP_PASSWORD: 'S3cret-amqp-4714' };

describe('secrets never shown: API answers, tap and logs of a run whose config holds them', function () {
  this.timeout(60000);
  let dir: string;
  let sink: Server;
  let child: ChildProcess | undefined;
  let logs = '';
  const authorizations: string[] = [];

  before(async () => {
    dir = mkdtempSync(join(tmpdir(), 'eddy-secrets-'));
    sink = createServer((req, res) => {
      authorizations.push(req.headers.authorization ?? '');
      req.resume();
      req.on('end', () => res.writeHead(200).end());
    });
    await new Promise<void>((r) => sink.listen(0, '127.0.0.1', r));
  });
  after(() => {
    child?.kill('SIGKILL');
    sink.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it('uses them, and no answer, tap line or log line holds one', async () => {
    const port = (sink.address() as AddressInfo).port;
    const config = join(dir, 'flows.yaml');
    writeFileSync(
      config,
      `onramp:
  - id: ticks
    type: metronome
    config: { interval: 50 }
offramp:
  - id: hook
    type: rest
    config: { endpoint: { scheme: http, host: 127.0.0.1, port: ${port}, username: eddy, password: "\${REST_PASSWORD}" } }
  - id: bus
    type: nats
    config: { hosts: ["127.0.0.1:1"], subject: s, options: { token: "\${NATS_TOKEN}" } }
  - id: queue
    type: amqp
    config: { amqp_addr: "amqp://eddy:\${AMQP_PASSWORD}@127.0.0.1:1/%2f", exchange: x, routing_key: k }
pipeline:
  - id: enrich
    interface: { inputs: [in], outputs: [out] }
    nodes:
      - id: owners
        type: enrich::lookup
        config:
          table: { key: k, postgres: { host: 127.0.0.1, port: 1, user: eddy, password: "\${PG_PASSWORD}", dbname: d, query: "select 1 as k" } }
          key: event.id
          into: owner
          on_miss: pass
    links: { in: [owners], owners: [out] }
binding:
  - id: posted
    links:
      "/onramp/ticks/{instance}/out": ["/pipeline/system::passthrough/{instance}/in"]
      "/pipeline/system::passthrough/{instance}/out": ["/offramp/hook/{instance}/in"]
mapping:
  /binding/posted/main: {}
`,
    );
    child = spawn(process.execPath, [EDDY, 'server', 'run', '-f', config, '--api-port', '0'], {
      env: { ...process.env, ...SECRETS, EDDY_LOG: 'debug' },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    child.stdout!.on('data', (d) => (logs += String(d)));
    child.stderr!.on('data', (d) => (logs += String(d)));
    await eventually(() => /Listening at: http:\/\/127\.0\.0\.1:\d+/.test(logs), 30000, 'the API to listen');
    const base = /Listening at: (http:\/\/127\.0\.0\.1:\d+)/.exec(logs)![1];
    // the secret is used: the rest sink sees the basic authentication it makes
    await eventually(() => authorizations.length >= 2, 20000, 'the rest offramp to post with its credentials');
    expect(authorizations[0]).to.equal(`Basic ${Buffer.from(`eddy:${SECRETS.REST_PASSWORD}`).toString('base64')}`);
    // the flows that fail to connect (nats, amqp, postgres on port 1) log their errors
    const activations = ['/offramp/bus/main', '/offramp/queue/main', '/pipeline/enrich/main'];
    const answers: string[] = [];
    for (const path of activations) answers.push((await call(base, 'POST', path, { body: {} })).text);
    for (const path of [
      '/onramp',
      '/offramp',
      '/pipeline',
      '/binding',
      '/offramp/hook',
      '/offramp/bus',
      '/offramp/queue',
      '/pipeline/enrich',
      '/binding/posted',
      '/binding/posted/main',
      '/offramp/hook/main',
      '/status',
      '/metrics',
      '/health',
      '/openapi.json',
    ]) {
      answers.push((await call(base, 'GET', path)).text);
    }
    // the tap of the rest offramp's input: what it sends
    const tap = await fetch(`${base}/tap/offramp/hook/main/in`);
    const reader = tap.body!.getReader();
    let tapped = '';
    while ((tapped.match(/\n/g) ?? []).length < 3) tapped += new TextDecoder().decode((await reader.read()).value);
    await reader.cancel();
    answers.push(tapped);
    expect(answers.join('\n')).to.contain('"password":"***"').and.contain('"token":"***"').and.contain('amqp://eddy:***@127.0.0.1:1/%2f');
    for (const secret of Object.values(SECRETS)) {
      expect(answers.join('\n'), 'API answers and tap').not.to.contain(secret);
      expect(logs, 'logs').not.to.contain(secret);
    }
  });
});
