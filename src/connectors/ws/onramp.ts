import { createServer, type IncomingMessage } from 'node:http';
import { Observable, type Subscriber } from '../../core/rx';
import { WebSocket, WebSocketServer, type RawData } from 'ws';
import type { Frame, FrameResult, OnrampReply, OnrampSource, OnrampType } from '../connector';
import { Waiters, idKey } from '../_shared/waiters';
import { listen, uriHost } from '../_shared/net';

interface WsOnrampConfig {
  host: string;
  port: number;
  timeout: number;
}

/** One accepted WebSocket connection: its own stream, hence its own preprocessor state. */
interface Connection {
  readonly socket: WebSocket;
  readonly stream: number;
  readonly originUri: string;
  closed: boolean;
}

/** What a waiting request gets back: the reply's encoded payloads, or an error notice. */
type Answer = { payloads: Buffer[]; binary: boolean } | { error: string };

/** The source of a ws onramp; `waiting` (requests waiting for a reply) is read by tests. */
export interface WsOnrampSource extends OnrampSource {
  readonly waiting: number;
  /** the port the server listens on (the configured one, or the one picked for port 0) */
  readonly port: number;
}

/**
 * ws: a WebSocket server at ws://<host>:<port>/. Every connection is its own
 * stream (its own preprocessor chain), ended by an `end` frame when the
 * connection closes. Text and binary messages are both read; meta `binary`
 * tells which. The port is bound when the instance is created, so a port in
 * use fails the activation.
 *
 * Linked (`linked: true`): a reply on the onramp's `in` port goes back to the
 * connection whose message produced the event it answers, as a text message
 * unless its meta `binary` is true. A request waits for its reply at most
 * `timeout` ms and at most as long as its connection is open, so requests
 * that never get a reply leak nothing.
 */
export const wsOnramp: OnrampType<WsOnrampConfig> = {
  name: 'ws',
  defaultCodec: 'json',
  placement: 'every-worker', // listening socket shared by the workers (docs/workers.md)
  linkable: true,
  example: { host: '127.0.0.1', port: 0 },
  configSchema: {
    type: 'object',
    additionalProperties: false,
    required: ['port'],
    properties: {
      host: { type: 'string', minLength: 1, default: '0.0.0.0', description: 'address to listen on' },
      port: { type: 'integer', minimum: 0, maximum: 65535, description: 'port to listen on (0 picks a free port, logged at start)' },
      timeout: {
        type: 'integer',
        minimum: 1,
        default: 30000,
        description: 'linked only: ms a request waits for its reply; after that a late reply is dropped (the connection stays open)',
      },
    },
  },
  async create(config, ctx): Promise<WsOnrampSource> {
    // bound now: a port in use fails the activation
    const http = createServer();
    const port = await listen(http, config.host, config.port);
    const server = new WebSocketServer({ server: http });
    server.on('error', (err) => ctx.logger.error(`Onramp ${ctx.url}: server error: ${err.message}`));
    ctx.logger.info(`Onramp ${ctx.url}: listening on ws://${config.host}:${port}/`);

    const connections = new Set<Connection>();
    const waiters = new Waiters<Answer>(config.timeout, ctx.scheduler);
    let out: Subscriber<Frame> | undefined;
    // frames read before the first subscriber (sockets are paused then, so only what was already parsed)
    let early: Frame[] = [];
    let paused = false;
    let streams = 0;
    const reading = () => out !== undefined && !paused;
    const push = (frame: Frame) => (out ? out.next(frame) : early.push(frame));

    /** Answers a waiting request on its connection; a closed connection gets nothing. */
    const deliver = (conn: Connection, answer: Answer) => {
      if (conn.closed || conn.socket.readyState !== WebSocket.OPEN) return;
      const sent = (err?: Error) => err && ctx.logger.debug(`Onramp ${ctx.url}: reply to ${conn.originUri} not sent: ${err.message}`);
      if ('error' in answer) return conn.socket.send(JSON.stringify({ error: answer.error }), { binary: false }, sent);
      for (const payload of answer.payloads) conn.socket.send(payload, { binary: answer.binary }, sent);
    };

    /** Linked: the events a message made wait for their replies; a message that failed to decode is answered at once. */
    const track = (conn: Connection) => (result: FrameResult) => {
      if (conn.closed) return; // held while paused, and the client left meanwhile
      for (const error of result.errors) deliver(conn, { error });
      for (const id of result.ids) {
        waiters.wait(
          [idKey(id)],
          conn,
          (answer) => deliver(conn, answer),
          (end) => end === 'timeout' && ctx.logger.debug(`Onramp ${ctx.url}: no reply to ${idKey(id)} from ${conn.originUri} within ${config.timeout} ms`),
        );
      }
    };

    server.on('connection', (socket: WebSocket, req: IncomingMessage) => {
      const conn: Connection = { socket, stream: ++streams, originUri: originOf(req, port), closed: false };
      connections.add(conn);
      if (!reading()) socket.pause();
      socket.on('message', (data: RawData, isBinary: boolean) => {
        const frame: Frame = { stream: conn.stream, data: toBuffer(data), originUri: conn.originUri, meta: { binary: isBinary } };
        if (ctx.linked) frame.done = track(conn);
        push(frame);
      });
      socket.on('error', (err) => ctx.logger.debug(`Onramp ${ctx.url}: connection ${conn.originUri}: ${err.message}`));
      socket.on('close', () => {
        conn.closed = true;
        connections.delete(conn);
        waiters.dropGroup(conn);
        push({ stream: conn.stream, end: true, originUri: conn.originUri });
      });
    });

    const frames = new Observable<Frame>((subscriber) => {
      out = subscriber;
      const held = early;
      early = [];
      for (const frame of held) subscriber.next(frame);
      if (!paused) for (const conn of connections) conn.socket.resume();
      return () => {
        out = undefined;
        for (const conn of connections) conn.socket.pause();
      };
    });

    /** Linked: a reply goes to the connection whose message made the event it answers. */
    const reply = ({ event, ids, encode }: OnrampReply) => {
      const keys = ids.map(idKey);
      if (event.isBatch) {
        // the spec rejects batched replies; the requests they answer get an error notice instead of silence
        const error = 'batched replies are not supported by the linked ws onramp';
        for (const key of keys) waiters.answer([key], { error });
        throw new Error(error);
      }
      let payloads: Buffer[];
      try {
        payloads = encode();
      } catch (err) {
        const error = `cannot encode reply: ${(err as Error).message}`;
        waiters.answer(keys, { error });
        throw new Error(error);
      }
      if (!waiters.answer(keys, { payloads, binary: event.meta.binary === true })) {
        ctx.logger.debug(`Onramp ${ctx.url}: reply to ${keys.join(',') || 'no event of this onramp'} dropped: nothing waits for it (answered, timed out, or its connection closed)`);
      }
    };

    return {
      frames,
      // unlinked, no reply handler: the machinery warns about replies sent here
      reply: ctx.linked ? reply : undefined,
      get waiting() {
        return waiters.size;
      },
      port,
      pause() {
        paused = true;
        for (const conn of connections) conn.socket.pause();
      },
      resume() {
        paused = false;
        if (out) for (const conn of connections) conn.socket.resume();
      },
      inputs: () => ({ open: connections.size, reading: [...connections].filter((c) => !c.socket.isPaused).length }),
      async close() {
        waiters.dropAll();
        for (const conn of connections) conn.socket.terminate();
        connections.clear();
        early = [];
        await new Promise<void>((resolve) => server.close(() => resolve()));
        http.closeAllConnections();
        await new Promise<void>((resolve) => http.close(() => resolve()));
      },
    };
  },
};

/** `svc-ws://<client ip>:<client port>/<listen port>`, as the tcp onramp names its connections. */
function originOf(req: IncomingMessage, listenPort: number): string {
  return `svc-ws://${uriHost(req.socket.remoteAddress)}:${req.socket.remotePort ?? 0}/${listenPort}`;
}

function toBuffer(data: RawData): Buffer {
  if (Buffer.isBuffer(data)) return data;
  if (Array.isArray(data)) return Buffer.concat(data);
  return Buffer.from(data);
}
