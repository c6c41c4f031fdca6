import type { Socket } from 'node:net';
import type { Server as TlsServer } from 'node:tls';

/** The first byte of every TLS record a client starts with (a handshake record: its ClientHello). */
const TLS_HANDSHAKE_RECORD = 0x16;

/** An HTTP/1 request line's start: a method token and its space (`GET `, `POST `, `PROPFIND `). */
const REQUEST_LINE = /^([A-Z]{3,16}) (\S*)/;
const HOST_HEADER = /\r\nhost:[ \t]*([^\r\n]*)/i;
/** What is echoed back of a Host header or a target: printable ASCII that makes a URL, nothing a terminal could take for a control. */
const SAFE_HOST = /^[A-Za-z0-9.\-:[\]]+$/;
const SAFE_TARGET = /^\/[\x21-\x7e]*$/;

/**
 * How long a connection may stay silent before its first byte: Node's own
 * TLS handshake timeout (`handshakeTimeout`, 120 s), which starts only after
 * the first byte now.
 */
const FIRST_BYTE_TIMEOUT_MS = 120_000;
/** How long the 400 waits for the client to close after it was sent (a client that keeps the socket open is cut off). */
const LINGER_MS = 5_000;

/**
 * Makes a TLS server that speaks HTTP (https.Server: the API, the rest and
 * ws onramps, the OTLP/HTTP receiver) answer a plaintext HTTP request with
 * `400 Bad Request` and `this port speaks HTTPS: use https://…`, where it
 * used to end the connection without a word (the client saw an empty reply).
 *
 * It looks at the first bytes of each connection before the TLS handshake
 * sees them: a TLS client starts with a handshake record (0x16); a request
 * line (`GET / HTTP/1.1`) gets the 400 and the connection is closed; anything
 * else goes on to the handshake, which fails as before. The server's own
 * `connection` listeners (the handshake) are taken off and run once the
 * first bytes were put back on the socket: a TLS socket made from a socket
 * with buffered bytes reads them first (node's `initRead`).
 *
 * `scheme`: what a client should use instead (`https`; `wss` for a
 * WebSocket server).
 */
export function answerPlainHttp(server: TlsServer, scheme: 'https' | 'wss' = 'https'): void {
  const handshake = server.listeners('connection') as ((socket: Socket) => void)[];
  server.removeAllListeners('connection');
  server.on('connection', (socket: Socket) =>
    firstBytes(socket, (chunk) => {
      const refusal = plainHttpRefusal(chunk, scheme, socket);
      if (refusal === undefined) {
        socket.unshift(chunk);
        for (const listener of handshake) listener.call(server, socket);
        return;
      }
      socket.on('error', () => socket.destroy());
      socket.setTimeout(LINGER_MS, () => socket.destroy());
      // ended, not destroyed: the client reads the answer before the connection closes (a reset could discard it)
      socket.end(refusal);
      socket.resume();
    }),
  );
}

/** Calls `then` with the connection's first chunk, paused; a connection that closes, fails or stays silent before is destroyed. */
function firstBytes(socket: Socket, then: (chunk: Buffer) => void): void {
  const gone = (): void => {
    socket.off('data', first);
    socket.destroy();
  };
  const first = (chunk: Buffer): void => {
    socket.pause();
    socket.setTimeout(0);
    socket.off('error', gone).off('end', gone);
    then(chunk);
  };
  socket.once('data', first);
  socket.once('error', gone);
  socket.once('end', gone);
  socket.setTimeout(FIRST_BYTE_TIMEOUT_MS, gone);
}

/** The whole 400 answer when `chunk` starts a plaintext HTTP request; undefined for a TLS client (or anything else). */
export function plainHttpRefusal(chunk: Buffer, scheme: 'https' | 'wss', socket: Pick<Socket, 'localAddress' | 'localPort'>): string | undefined {
  if (chunk.length === 0 || chunk[0] === TLS_HANDSHAKE_RECORD) return undefined;
  const head = chunk.toString('latin1', 0, Math.min(chunk.length, 8192));
  const line = REQUEST_LINE.exec(head);
  if (line === null) return undefined;
  const host = HOST_HEADER.exec(head)?.[1]?.trim();
  const authority = host !== undefined && SAFE_HOST.test(host) ? host : localAuthority(socket);
  const target = SAFE_TARGET.test(line[2]) ? line[2] : '/';
  const body = `this port speaks HTTPS: use ${scheme}://${authority}${target}\n`;
  return [
    'HTTP/1.1 400 Bad Request',
    'Content-Type: text/plain; charset=utf-8',
    `Content-Length: ${Buffer.byteLength(body)}`,
    'Connection: close',
    '',
    body,
  ].join('\r\n');
}

function localAuthority(socket: Pick<Socket, 'localAddress' | 'localPort'>): string {
  const address = socket.localAddress ?? 'localhost';
  return `${address.includes(':') ? `[${address}]` : address}:${socket.localPort ?? ''}`;
}
