/**
 * A local stand-in for the chat platform (Discord): just the protocol subset
 * the chat onramp uses, on loopback, so no traffic leaves the machine.
 *
 * - REST (HTTP, under `/api/v10`): GET /gateway/bot answers this server's
 *   own WebSocket URL (that is how discord.js finds the gateway); channel
 *   messages, reactions, member roles and member edits are recorded and
 *   answered as the platform does. A wrong token gets 401; channel `404`
 *   and guild `404` answer 404 Unknown Channel / Unknown Guild.
 * - Gateway (WebSocket, JSON, no compression): HELLO (op 10) with a
 *   heartbeat interval, IDENTIFY (op 2) answered by a READY dispatch,
 *   heartbeats (op 1) answered by ACKs (op 11); tests push dispatches
 *   (GUILD_CREATE, MESSAGE_CREATE, …) with `dispatch`.
 *
 * Not covered: RESUME, zlib transport compression, sharding, rate limits
 * (429), voice, interactions' callback endpoints.
 */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { WebSocket, WebSocketServer, type RawData } from 'ws';

export const TOKEN = 'stand-in-token';
export const BOT = { id: '1000', username: 'eddy-bot', discriminator: '0', global_name: null, avatar: null, bot: true };
export const GUILD = '2000';
export const CHANNEL = '3000';

export interface RestCall {
  method: string;
  /** path below /api/v10, URL-encoding kept as sent */
  path: string;
  body: unknown;
  authorization: string | undefined;
}

export interface Identify {
  token: string;
  intents: number;
}

export class StandIn {
  readonly calls: RestCall[] = [];
  readonly identified: Identify[] = [];
  /** gateway connections currently open */
  readonly sockets = new Set<WebSocket>();
  private seq = 0;
  private nextId = 9000;

  private constructor(
    private readonly http: Server,
    private readonly wss: WebSocketServer,
    readonly port: number,
  ) {}

  /** Listens on 127.0.0.1:`port` (0: a free port). */
  static async start(port = 0): Promise<StandIn> {
    const http = createServer();
    const wss = new WebSocketServer({ server: http, path: '/gateway' });
    await new Promise<void>((resolve) => http.listen(port, '127.0.0.1', resolve));
    const standIn = new StandIn(http, wss, (http.address() as AddressInfo).port);
    http.on('request', (req, res) => standIn.rest(req, res));
    wss.on('connection', (ws) => standIn.gateway(ws));
    return standIn;
  }

  /** the `api_url` to configure the onramp with */
  get apiUrl(): string {
    return `http://127.0.0.1:${this.port}/api`;
  }

  /** Sends a dispatch (op 0) to every identified gateway connection. */
  dispatch(t: string, d: unknown): void {
    for (const ws of this.sockets) ws.send(JSON.stringify({ op: 0, t, s: ++this.seq, d }));
  }

  /** A guild with one text channel, as GUILD_CREATE carries it. */
  guildCreate(): void {
    this.dispatch('GUILD_CREATE', {
      id: GUILD,
      name: 'stand-in guild',
      owner_id: BOT.id,
      unavailable: false,
      member_count: 1,
      features: [],
      roles: [{ id: '7001', name: 'mod', color: 0, hoist: false, position: 1, permissions: '0', managed: false, mentionable: false }],
      emojis: [],
      stickers: [],
      members: [],
      presences: [],
      voice_states: [],
      threads: [],
      stage_instances: [],
      guild_scheduled_events: [],
      channels: [{ id: CHANNEL, type: 0, name: 'general', guild_id: GUILD, position: 0, permission_overwrites: [] }],
    });
  }

  messageCreate(id: string, content: string): void {
    this.dispatch('MESSAGE_CREATE', {
      id,
      channel_id: CHANNEL,
      guild_id: GUILD,
      author: { id: '4000', username: 'someone', discriminator: '0', global_name: 'Someone', avatar: null },
      member: { roles: [], joined_at: '2024-01-01T00:00:00.000Z' },
      content,
      timestamp: '2024-01-01T00:00:00.000Z',
      edited_timestamp: null,
      tts: false,
      mention_everyone: false,
      mentions: [],
      mention_roles: [],
      attachments: [],
      embeds: [],
      pinned: false,
      type: 0,
    });
  }

  async close(): Promise<void> {
    for (const ws of this.sockets) ws.terminate();
    await new Promise<void>((resolve) => this.wss.close(() => resolve()));
    this.http.closeAllConnections();
    await new Promise<void>((resolve) => this.http.close(() => resolve()));
  }

  private gateway(ws: WebSocket): void {
    ws.send(JSON.stringify({ op: 10, d: { heartbeat_interval: 45000 } }));
    ws.on('message', (raw) => {
      const msg = JSON.parse(rawText(raw)) as { op: number; d: { token: string; intents: number } };
      if (msg.op === 1) ws.send(JSON.stringify({ op: 11 }));
      if (msg.op === 2) {
        if (msg.d.token !== TOKEN) return ws.close(4004, 'Authentication failed.');
        this.identified.push({ token: msg.d.token, intents: msg.d.intents });
        this.sockets.add(ws);
        const d = {
          v: 10,
          user: BOT,
          guilds: [],
          session_id: 'stand-in-session',
          resume_gateway_url: `ws://127.0.0.1:${this.port}/gateway`,
          application: { id: BOT.id, flags: 0 },
        };
        ws.send(JSON.stringify({ op: 0, t: 'READY', s: ++this.seq, d }));
      }
    });
    ws.on('close', () => this.sockets.delete(ws));
    ws.on('error', () => undefined);
  }

  private rest(req: IncomingMessage, res: ServerResponse): void {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const text = Buffer.concat(chunks).toString('utf8');
      const path = (req.url ?? '').replace(/^\/api\/v10/, '').split('?')[0];
      const authorization = req.headers.authorization;
      const answer = (status: number, body?: unknown) => {
        if (body === undefined) return res.writeHead(status).end();
        res.writeHead(status, { 'content-type': 'application/json' }).end(JSON.stringify(body));
      };
      if (authorization !== `Bot ${TOKEN}`) return answer(401, { message: '401: Unauthorized', code: 0 });
      if (req.method === 'GET' && path === '/gateway/bot') {
        return answer(200, {
          url: `ws://127.0.0.1:${this.port}/gateway`,
          shards: 1,
          session_start_limit: { total: 1000, remaining: 1000, reset_after: 0, max_concurrency: 1 },
        });
      }
      const body = text ? JSON.parse(text) : undefined;
      this.calls.push({ method: req.method ?? '', path, body, authorization });
      if (path.startsWith('/channels/404/')) return answer(404, { message: 'Unknown Channel', code: 10003 });
      if (path.startsWith('/guilds/404/')) return answer(404, { message: 'Unknown Guild', code: 10004 });
      const channelMessages = /^\/channels\/(\d+)\/messages$/.exec(path);
      if (req.method === 'POST' && channelMessages) {
        const b = body as Record<string, unknown>;
        return answer(200, {
          id: String(++this.nextId),
          channel_id: channelMessages[1],
          content: b.content ?? '',
          author: BOT,
          type: 0,
          embeds: b.embeds ?? [],
          attachments: [],
          mentions: [],
          mention_roles: [],
          pinned: false,
          tts: b.tts ?? false,
          timestamp: '2024-01-01T00:00:00.000Z',
          edited_timestamp: null,
          mention_everyone: false,
        });
      }
      if (req.method === 'PUT' && /^\/channels\/\d+\/messages\/\d+\/reactions\/[^/]+\/@me$/.test(path)) return answer(204);
      if ((req.method === 'PUT' || req.method === 'DELETE') && /^\/guilds\/\d+\/members\/\d+\/roles\/\d+$/.test(path)) return answer(204);
      if (req.method === 'PATCH' && /^\/guilds\/\d+\/members\/\d+$/.test(path))
        return answer(200, {
          user: { id: path.split('/')[4] },
          roles: [],
          joined_at: '2024-01-01T00:00:00.000Z',
          deaf: body?.deaf ?? false,
          mute: body?.mute ?? false,
        });
      answer(404, { message: '404: Not Found', code: 0 });
    });
  }
}

/** A websocket message's bytes as UTF-8 text. */
function rawText(raw: RawData): string {
  return (Buffer.isBuffer(raw) ? raw : Array.isArray(raw) ? Buffer.concat(raw) : Buffer.from(raw)).toString('utf8');
}
