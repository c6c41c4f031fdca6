import { createServer, type RequestListener, type Server } from 'node:http';

/**
 * Binds the API's port at once and builds its handler (the express app) on
 * the first request. Loading express and its ~140 modules is most of what
 * the API adds to start-up (bench/README.md, "Start-up"): deferred, the
 * flows of `eddy server run -f` start without waiting for it, and the first
 * API request pays it once (~0.1-0.2 s). A port that cannot be bound still
 * fails `eddy server run` at start, as before.
 */
export function listenLazily(buildHandler: () => RequestListener, host: string, port: number): Promise<Server> {
  let handler: RequestListener | undefined;
  const server = createServer((req, res) => (handler ??= buildHandler())(req, res));
  return new Promise((resolve, reject) => {
    server.listen(port, host);
    server.once('listening', () => resolve(server));
    server.once('error', (err) => reject(new Error(`API cannot listen on ${host}:${port}: ${err.message}`)));
  });
}
