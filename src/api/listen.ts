import { createServer, type RequestListener, type Server } from 'node:http';
import type { Server as TlsServer } from 'node:https';
import type { CertificateWatch, Log, ServerTlsConfig } from '../net/tls';

/*
 * node:https and the certificate code are required only when the API serves
 * TLS: a plain API does not load them at start-up (node:tls and node:https
 * take 2-3 ms).
 */
/* eslint-disable @typescript-eslint/no-require-imports -- loaded on first use: a plain start must not load the TLS code */
const certificates = () => require('../net/tls') as typeof import('../net/tls');
const httpsServer = () => require('../net/http-server') as typeof import('../net/http-server');
/* eslint-enable @typescript-eslint/no-require-imports -- the lazy requires end here */

/** The flag that sets each field of the API's TLS (a 400 names a config field, a start error the flag). */
export const apiTlsFlag = (field: string): string => `--api-tls-${field.replace(/_/g, '-')}`;

/**
 * Binds the API's port at once and builds its handler (the express app) on
 * the first request. Loading express and its ~140 modules is most of what
 * the API adds to start-up (bench/README.md, "Start-up"): deferred, the
 * flows of `eddy server run -f` start without waiting for it, and the first
 * API request pays it once (~0.1-0.2 s). A port that cannot be bound still
 * fails `eddy server run` at start, as before. With `tls` it serves HTTPS
 * (an https.Server is an http.Server to the rest of the code); a certificate
 * file that cannot be read fails the start, naming its flag.
 */
export function listenLazily(buildHandler: () => RequestListener, host: string, port: number, tls?: ServerTlsConfig): Promise<Server> {
  let handler: RequestListener | undefined;
  const serve: RequestListener = (req, res) => (handler ??= buildHandler())(req, res);
  let server: Server;
  try {
    if (tls === undefined) server = createServer(serve);
    // an http:// request (curl, eddy status without https) is told to use https:// rather than answered with nothing
    else server = httpsServer().httpServer(tls, { field: apiTlsFlag }, serve);
  } catch (err) {
    return Promise.reject(err instanceof Error ? err : new Error(String(err)));
  }
  return new Promise((resolve, reject) => {
    server.listen(port, host);
    server.once('listening', () => resolve(server));
    server.once('error', (err) => reject(new Error(`API cannot listen on ${host}:${port}: ${err.message}`)));
  });
}

/** The API's certificate reloaded when its files change (a server from `listenLazily` with `tls`); stop the watch at exit. */
export function watchCertificates(server: Server, tls: ServerTlsConfig, log: Log): CertificateWatch {
  return certificates().reloadOnChange(server as unknown as TlsServer, tls, log, 'API', apiTlsFlag);
}
