import { createServer, type Server, type Socket } from 'node:net';
import { createServer as createTlsServer, Server as TlsServer } from 'node:tls';
import { Observable, type Subscriber } from '../../core/rx';
import type { BoundListener, Frame, OnrampContext, OnrampSource, OnrampType, SourceInputs } from '../connector';
import { uriHost } from '../_shared/net';
import { s } from '../../schema/typed';
import type { Static } from '../../schema/typed';
import { listenHost, listenPort, serverTls } from '../../schema/fields';
import { readServerTls, reloadOnChange, serverOptions, type CertificateWatch } from '../../net/tls';

const configSchema = s.object(
  {
    host: listenHost(),
    port: listenPort(),
    tls: serverTls('accept TLS connections with this certificate (the files are reloaded when they change); absent: plaintext'),
  },
  { description: 'A TCP server: the bytes its clients send become events.', required: ['port'] },
);

type TcpOnrampConfig = Static<typeof configSchema>;

/**
 * tcp: a listening socket; every accepted connection is its own stream (its
 * own preprocessor chain), so one client's partial line never mixes with
 * another's. The bytes are handed over as they are read: the preprocessors
 * cut them into frames (`preprocessors: [lines]` for newline-delimited
 * data; there is no default framing, as the spec says). When a connection
 * ends its stream ends, which flushes the chain: a last line without a
 * newline is still decoded (or goes to `err`), never lost.
 *
 * With `tls` every connection is a TLS one: its stream starts once the
 * handshake succeeded (a client that fails it makes no stream, only a debug
 * line), and its bytes are the decrypted ones.
 *
 * The port is bound in `create`, so a port in use fails the activation.
 * Pausing pauses every connection (the kernel's receive window then closes
 * and the senders block); connections accepted while paused start paused.
 */
export const tcpOnramp: OnrampType<Static<typeof configSchema>> = {
  name: 'tcp',
  defaultCodec: 'json',
  placement: 'every-worker', // the primary hands each worker its share of the connections (docs/workers.md, "Connections")
  example: { host: '127.0.0.1', port: 14242 },
  configSchema,
  validate(config) {
    if (config.tls !== undefined) readServerTls(config.tls);
  },
  async create(config, ctx) {
    const tls = config.tls;
    let server: Server;
    if (tls === undefined) {
      // connections start paused: nothing is read before the machinery subscribes and the gate is open
      server = createServer({ pauseOnConnect: true });
    } else {
      // a paused raw socket would stall the handshake: a TLS socket is not read until a reader is attached (or it is resumed) either
      const secure = createTlsServer(serverOptions(tls, readServerTls(tls)));
      secure.on('tlsClientError', (err) => ctx.logger.debug(`tcp onramp ${ctx.url}: TLS handshake failed: ${err.message}`));
      server = secure;
    }
    // bound here, or under --workers N by the primary, which hands this worker its share of the connections
    const listener = await ctx.listenForConnections(server, config.host, config.port);
    return new TcpSource(config, ctx, server, listener);
  },
};

/**
 * The source of one tcp onramp: the accepted connections (`accept`), each
 * attached as a stream while subscribed (`attach`), paused and resumed
 * together by the breaker.
 */
class TcpSource implements OnrampSource {
  readonly frames: Observable<Frame>;
  private readonly sockets = new Set<Socket>();
  /** connections with a reader attached (only while subscribed) */
  private readonly reading = new Set<Socket>();
  private subscriber: Subscriber<Frame> | undefined;
  private paused = false;
  /** the last stream number handed out: every connection is its own stream */
  private streams = 0;
  /** TLS: the certificate files' watch, stopped at close */
  private readonly watch: CertificateWatch | undefined;

  constructor(
    config: TcpOnrampConfig,
    private readonly ctx: OnrampContext,
    server: Server,
    private readonly listener: BoundListener,
  ) {
    const tls = config.tls;
    server.on('error', (err) => ctx.logger.error(`tcp onramp ${ctx.url}: ${err.message}`));
    ctx.logger.info(`tcp onramp ${ctx.url}: listening on ${tls === undefined ? 'tcp' : 'tls'}://${uriHost(config.host)}:${listener.port}/`);
    // with tls, create made a TLS server
    this.watch = tls !== undefined && server instanceof TlsServer ? reloadOnChange(server, tls, ctx.logger, `tcp onramp ${ctx.url}`) : undefined;
    // a TLS server's 'connection' is the raw socket: the stream is the decrypted one, once the handshake is done
    server.on(tls === undefined ? 'connection' : 'secureConnection', (socket: Socket) => this.accept(socket));
    this.frames = new Observable<Frame>((sub) => {
      this.subscriber = sub;
      // connections accepted before the subscription waited, paused
      for (const socket of this.sockets) this.attach(socket, sub);
      return () => {
        this.subscriber = undefined;
        // their preprocessor state is gone with the subscription: a later subscriber could not continue them
        for (const socket of this.sockets) socket.destroy();
        this.reading.clear();
      };
    });
  }

  pause(): void {
    this.paused = true;
    for (const socket of this.reading) socket.pause();
  }

  resume(): void {
    this.paused = false;
    for (const socket of this.reading) socket.resume();
  }

  // a socket reads only once flowing: one not yet attached (accepted paused) or paused does not
  inputs(): SourceInputs {
    return { open: this.sockets.size, reading: [...this.sockets].filter((s) => s.readableFlowing === true).length };
  }

  close(): Promise<void> {
    this.watch?.stop();
    for (const socket of this.sockets) socket.destroy();
    return this.listener.close();
  }

  private accept(socket: Socket): void {
    this.sockets.add(socket);
    socket.on('error', (err) => this.ctx.logger.debug(`tcp onramp ${this.ctx.url}: connection ${socket.remoteAddress}:${socket.remotePort}: ${err.message}`));
    socket.once('close', () => this.sockets.delete(socket));
    if (this.subscriber) this.attach(socket, this.subscriber);
  }

  /** A connection becomes a stream of `to`, read unless paused, ended by an `end` frame once. */
  private attach(socket: Socket, to: Subscriber<Frame>): void {
    const stream = ++this.streams;
    const originUri = `svc-tcp://${uriHost(socket.remoteAddress)}:${socket.remotePort}/${this.listener.port}`;
    let ended = false;
    // 'end' after the last byte was read; 'close' alone after a reset: either way the stream ends once
    const end = () => {
      if (ended) return;
      ended = true;
      this.reading.delete(socket);
      to.next({ stream, end: true, originUri });
    };
    this.reading.add(socket);
    if (this.paused) socket.pause(); // so that adding the 'data' listener does not start the flow
    socket.on('data', (data: Buffer) => to.next({ stream, data, originUri }));
    socket.once('end', end);
    socket.once('close', end);
    if (!this.paused) socket.resume();
  }
}
