import { isIPv6, type AddressInfo, type Server } from 'node:net';
import type { BoundListener } from '../connector';

/**
 * Binds a listening server (net, http, or the http server under a
 * WebSocket server) and resolves with the port it got; a port in use or an
 * address that cannot be bound rejects naming both, so the activation fails
 * with that cause.
 */
export function listen(server: Server, host: string, port: number): Promise<number> {
  return new Promise((resolve, reject) => {
    const failed = (err: Error) => reject(new Error(`cannot listen on ${host}:${port}: ${err.message}`));
    server.once('error', failed);
    server.listen(port, host, () => {
      server.off('error', failed);
      resolve((server.address() as AddressInfo).port);
    });
  });
}

/** `listen` for `OnrampContext.listenForConnections` in one process: the server binds the port itself. */
export async function listenHere(server: Server, host: string, port: number): Promise<BoundListener> {
  const bound = await listen(server, host, port);
  return {
    port: bound,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}

/** An address as it stands before `:port` in a URI: IPv6 in brackets. */
export function uriHost(ip: string | undefined): string {
  if (ip === undefined) return 'unknown';
  return isIPv6(ip) ? `[${ip}]` : ip;
}
