import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { createServer as createHttpServer, type IncomingMessage, type ServerResponse, type Server as HttpServer } from 'node:http';
import { createServer as createHttpsServer, type Server as HttpsServer } from 'node:https';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { gunzipSync } from 'node:zlib';

/**
 * The test side of the logvendor offramp tests: a local stand-in for the
 * Log API (node:https with a certificate made at test time by Debian's
 * openssl) that keeps every request, checks what a real Log API checks
 * (the key header, the JSON body, gzip when the request says so) and
 * answers as a test tells it.
 */

/** A self-signed certificate for 127.0.0.1 and localhost (it is its own CA) in a temporary directory. */
export interface TestCert {
  dir: string;
  /** the certificate, PEM: the server's and the CA file for the offramp */
  certFile: string;
  cert: string;
  key: string;
  remove(): void;
}

export function makeCert(): TestCert {
  const dir = mkdtempSync(join(tmpdir(), 'eddy-logvendor-tls-'));
  const keyFile = join(dir, 'key.pem');
  const certFile = join(dir, 'cert.pem');
  execFileSync(
    'openssl',
    [
      'req',
      '-x509',
      '-newkey',
      'ec',
      '-pkeyopt',
      'ec_paramgen_curve:prime256v1',
      '-nodes',
      '-keyout',
      keyFile,
      '-out',
      certFile,
      '-days',
      '2',
      '-subj',
      '/CN=eddy logvendor test',
      '-addext',
      'subjectAltName=IP:127.0.0.1,DNS:localhost',
      '-addext',
      'basicConstraints=critical,CA:TRUE',
    ],
    { stdio: 'ignore' },
  );
  return {
    dir,
    certFile,
    cert: readFileSync(certFile, 'utf8'),
    key: readFileSync(keyFile, 'utf8'),
    remove: () => rmSync(dir, { recursive: true, force: true }),
  };
}

/** One request as the stand-in saw it. */
export interface LogRequest {
  method: string;
  path: string;
  headers: IncomingMessage['headers'];
  /** the body as sent (compressed when it was) */
  raw: Buffer;
  /** the body parsed as JSON after gunzip when Content-Encoding was gzip; undefined when it was not JSON */
  json: unknown;
  /** why the stand-in found it malformed, if it did */
  problem?: string;
}

/** What the stand-in answers a request with: a status, and headers. */
export type Answer = (req: LogRequest) => { status: number; headers?: Record<string, string>; body?: string };

/** The Log API's own answer to a good request. */
export const ACCEPTED: Answer = () => ({ status: 202, body: '{"requestId":"eddy-test"}' });

export interface LogServer {
  port: number;
  url: string;
  requests: LogRequest[];
  /** the log entries of every request that was accepted (2xx), in order */
  entries(): unknown[];
  answer: Answer;
  close(): Promise<void>;
}

/**
 * The stand-in: HTTPS with `cert` (plain HTTP without), on `port` (0: an
 * ephemeral one). It checks what the real API would refuse: a missing key
 * (401), a body that is not JSON or not gzip as declared (400); everything
 * else is answered by `answer` (202 by default).
 */
export async function logServer(cert: TestCert | undefined, port = 0): Promise<LogServer> {
  const requests: LogRequest[] = [];
  const accepted: LogRequest[] = [];
  const state = { answer: ACCEPTED };
  const handle = (req: IncomingMessage, res: ServerResponse) => {
    const chunks: Buffer[] = [];
    req.on('data', (d: Buffer) => chunks.push(d));
    req.on('end', () => {
      const raw = Buffer.concat(chunks);
      const entry: LogRequest = { method: req.method ?? '', path: req.url ?? '', headers: req.headers, raw, json: undefined };
      let status: number;
      let headers: Record<string, string> = {};
      let body = '';
      try {
        const text = req.headers['content-encoding'] === 'gzip' ? gunzipSync(raw) : raw;
        entry.json = JSON.parse(text.toString('utf8'));
      } catch (err) {
        entry.problem = `not ${req.headers['content-encoding'] === 'gzip' ? 'gzip-compressed ' : ''}JSON: ${(err as Error).message}`;
      }
      requests.push(entry);
      if (!req.headers['x-license-key'] && !req.headers['api-key']) [status, body] = [401, '{"error":"no key"}'];
      else if (entry.problem) [status, body] = [400, JSON.stringify({ error: entry.problem })];
      else ({ status, headers = {}, body = '' } = state.answer(entry));
      if (status >= 200 && status < 300) accepted.push(entry);
      res.writeHead(status, { 'content-type': 'application/json', ...headers });
      res.end(body);
    });
  };
  const server: HttpServer | HttpsServer = cert ? createHttpsServer({ cert: cert.cert, key: cert.key }, handle) : createHttpServer(handle);
  await new Promise<void>((resolve) => server.listen(port, '127.0.0.1', resolve));
  const bound = (server.address() as AddressInfo).port;
  return {
    port: bound,
    url: `${cert ? 'https' : 'http'}://127.0.0.1:${bound}/log/v1`,
    requests,
    entries: () => accepted.flatMap((r) => ((r.json as { logs?: unknown[] }[]) ?? []).flatMap((block) => block.logs ?? [])),
    get answer() {
      return state.answer;
    },
    set answer(a: Answer) {
      state.answer = a;
    },
    close: async () => {
      server.closeAllConnections();
      await new Promise((r) => server.close(r));
    },
  };
}
