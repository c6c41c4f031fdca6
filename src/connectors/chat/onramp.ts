import { Observable, type Subscriber } from '../../core/rx';
// types only: discord.js is loaded when an instance is created, so eddy's start does not pay for it
import type { ClientEvents } from 'discord.js';
import type { Frame, OnrampReply, OnrampSource, OnrampType } from '../connector';
import { batchValues } from '../../core/event';
import { BadReply, execute, parseReply, type Command } from './replies';

interface ChatOnrampConfig {
  token: string;
  intents: string[];
  api_url?: string;
  timeout: number;
  buffer: number;
}

/**
 * The gateway intents by their config names (the platform's intent names in
 * snake_case) and bits; a test checks them against the library's
 * GatewayIntentBits, so a new or renamed intent is noticed.
 */
export const INTENTS = new Map<string, number>([
  ['guilds', 1 << 0],
  ['guild_members', 1 << 1],
  ['guild_moderation', 1 << 2],
  ['guild_expressions', 1 << 3],
  ['guild_integrations', 1 << 4],
  ['guild_webhooks', 1 << 5],
  ['guild_invites', 1 << 6],
  ['guild_voice_states', 1 << 7],
  ['guild_presences', 1 << 8],
  ['guild_messages', 1 << 9],
  ['guild_message_reactions', 1 << 10],
  ['guild_message_typing', 1 << 11],
  ['direct_messages', 1 << 12],
  ['direct_message_reactions', 1 << 13],
  ['direct_message_typing', 1 << 14],
  ['message_content', 1 << 15],
  ['guild_scheduled_events', 1 << 16],
  ['auto_moderation_configuration', 1 << 20],
  ['auto_moderation_execution', 1 << 21],
  ['guild_message_polls', 1 << 24],
  ['direct_message_polls', 1 << 25],
]);

/** A structure as plain JSON: the library's `toJSON()`, then a JSON round trip so nothing but JSON values (no BigInt, no undefined) is left. */
function plain(value: unknown): unknown {
  const json = value !== null && typeof value === 'object' && typeof (value as { toJSON?: unknown }).toJSON === 'function' ? (value as { toJSON(): unknown }).toJSON() : value;
  if (json === undefined) return null;
  return JSON.parse(JSON.stringify(json, (_, v) => (typeof v === 'bigint' ? v.toString() : v)));
}

/**
 * The client library's events the onramp forwards, and the record key each
 * is wrapped in (the gateway's dispatch name, lowercased). For an update the
 * new state is the event (the old one is often not cached).
 */
const FORWARDED: { [K in keyof ClientEvents]?: [string, (...args: ClientEvents[K]) => unknown] } = {
  messageCreate: ['message_create', (m) => plain(m)],
  messageUpdate: ['message_update', (_old, m) => plain(m)],
  messageDelete: ['message_delete', (m) => plain(m)],
  messageReactionAdd: ['message_reaction_add', (r, u) => ({ reaction: plain(r), user: plain(u) })],
  messageReactionRemove: ['message_reaction_remove', (r, u) => ({ reaction: plain(r), user: plain(u) })],
  guildMemberAdd: ['guild_member_add', (m) => plain(m)],
  guildMemberUpdate: ['guild_member_update', (_old, m) => plain(m)],
  guildMemberRemove: ['guild_member_remove', (m) => plain(m)],
  guildCreate: ['guild_create', (g) => plain(g)],
  guildUpdate: ['guild_update', (_old, g) => plain(g)],
  guildDelete: ['guild_delete', (g) => plain(g)],
  channelCreate: ['channel_create', (c) => plain(c)],
  channelUpdate: ['channel_update', (_old, c) => plain(c)],
  channelDelete: ['channel_delete', (c) => plain(c)],
  interactionCreate: ['interaction_create', (i) => plain(i)],
};

/** Gateway close codes after which the library does not reconnect (bad token, intents not allowed, …). */
const FATAL_CLOSE = new Set([4004, 4010, 4011, 4012, 4013, 4014]);

/** The source of a chat onramp; tests read `queued` and `dropped`. */
export interface ChatOnrampSource extends OnrampSource {
  /** gateway events held while paused (or before the first subscriber) */
  readonly queued: number;
  /** linked replies not yet executed */
  readonly pending: number;
}

/**
 * chat: a Discord bot (discord.js) that forwards the gateway events of
 * FORWARDED as records named after the event, e.g. `{message_create: {...}}`,
 * with meta `chat: {event}`. The client logs in when the instance is created,
 * so a wrong token or an unreachable platform fails the activation.
 *
 * The gateway cannot be paused (it would drop a connection that stops
 * reading), so while the circuit breaker is triggered events are held in a
 * bounded buffer (`buffer` events); what arrives beyond it is dropped and
 * reported on `err` with the number dropped once the breaker is restored.
 *
 * Linked: every reply on `in` (each member of a batch) is a command in the
 * spec's shapes, executed through the library's REST client in arrival
 * order; a reply that is not one of the shapes, or whose REST call fails,
 * goes to `err` with a message naming the field or the call.
 */
export const chatOnramp: OnrampType<ChatOnrampConfig> = {
  name: 'chat',
  defaultCodec: 'json',
  linkable: true,
  example: { token: 'your-bot-token', intents: ['guilds', 'guild_messages', 'message_content'] },
  configSchema: {
    type: 'object',
    additionalProperties: false,
    required: ['token'],
    properties: {
      token: { type: 'string', minLength: 1, description: 'the bot token (Bot tab of the application in the Discord developer portal)' },
      intents: {
        type: 'array',
        uniqueItems: true,
        items: { type: 'string', enum: [...INTENTS.keys()] },
        default: ['guilds', 'guild_messages', 'message_content'],
        description:
          'gateway intents, snake_case (guilds, guild_members, guild_messages, message_content, guild_message_reactions, direct_messages, …); message_content and guild_members are privileged: enable them for the bot in the developer portal',
      },
      api_url: {
        type: 'string',
        pattern: '^https?://',
        description: 'REST base URL instead of https://discord.com/api (for tests and proxies); the gateway URL is whatever its GET /gateway/bot answers',
      },
      timeout: { type: 'integer', minimum: 1, default: 15000, description: 'ms a REST call, and the login when the instance starts, may take' },
      buffer: {
        type: 'integer',
        minimum: 0,
        default: 10000,
        description: 'gateway events held while the circuit breaker is triggered; beyond it events are dropped and reported on err',
      },
    },
  },
  async create(config, ctx): Promise<ChatOnrampSource> {
    const { Client, Partials } = await import('discord.js');
    const client = new Client({
      intents: config.intents.map((name) => INTENTS.get(name)!),
      // uncached messages, channels, members and reactions still make events
      partials: [Partials.Message, Partials.Channel, Partials.GuildMember, Partials.Reaction, Partials.User],
      rest: { timeout: config.timeout, ...(config.api_url ? { api: config.api_url.replace(/\/+$/, '') } : {}) },
    });
    const originUri = `svc-chat://${config.api_url ? new URL(config.api_url).host : 'discord.com'}/gateway`;
    let out: Subscriber<Frame> | undefined;
    let paused = false;
    let closed = false;
    let queue: Frame[] = [];
    let dropped = 0;
    let failure: Error | undefined;

    const flowing = () => out !== undefined && !paused;
    const push = (frame: Frame) => {
      if (flowing() && queue.length === 0) return out!.next(frame);
      if (queue.length < config.buffer) queue.push(frame);
      else dropped++;
    };
    /** Releases held events, then reports what did not fit; a pause during the release leaves the rest to the machinery, which holds it. */
    const flush = () => {
      if (!flowing()) return;
      const held = queue;
      queue = [];
      for (const frame of held) out!.next(frame);
      if (dropped > 0) {
        const error = `${dropped} gateway event(s) dropped: more than ${config.buffer} arrived while the circuit breaker was triggered`;
        dropped = 0;
        out!.next({ stream: 'gateway', error, originUri });
      }
    };
    /** A bad reply or a failed REST call: on `err`, as a decode error is (held by the machinery while paused). */
    const reportError = (error: string) => {
      if (out) out.next({ stream: 'replies', error, originUri });
      else ctx.logger.warn(`Onramp ${ctx.url}: ${error}`);
    };

    for (const [event, [name, toData]] of Object.entries(FORWARDED) as [keyof ClientEvents, [string, (...args: unknown[]) => unknown]][]) {
      client.on(event, (...args: unknown[]) => push({ stream: 'gateway', value: { [name]: toData(...args) }, originUri, meta: { chat: { event: name } } }));
    }
    client.on('error', (err) => ctx.logger.error(`Onramp ${ctx.url}: ${err.message}`));
    client.on('warn', (msg) => ctx.logger.warn(`Onramp ${ctx.url}: ${msg}`));
    client.on('shardReconnecting', (id) => ctx.logger.info(`Onramp ${ctx.url}: gateway shard ${id} reconnecting`));
    client.on('shardDisconnect', ({ code }, id) => {
      // the library reconnects by itself, except after these: the source has failed for good
      if (closed || !FATAL_CLOSE.has(code)) return;
      failure = new Error(`chat: the gateway closed shard ${id} with code ${code} and will not be reconnected (bad token or intents not allowed)`);
      out?.error(failure);
    });

    try {
      await withTimeout(client.login(config.token), config.timeout, `chat: login did not complete within ${config.timeout} ms`);
    } catch (err) {
      closed = true;
      await client.destroy();
      throw new Error(`chat: login failed: ${(err as Error).message}`);
    }
    ctx.logger.info(`Onramp ${ctx.url}: logged in as ${client.user?.tag ?? 'unknown'}`);

    // linked replies run one at a time, in the order they arrived
    let chain: Promise<void> = Promise.resolve();
    let pending = 0;
    const run = (cmd: Command) => {
      pending++;
      chain = chain.then(async () => {
        try {
          if (!closed) await execute(client.rest, cmd);
        } catch (err) {
          reportError(`chat reply: ${(err as Error).message}`);
        } finally {
          pending--;
        }
      });
    };
    const reply = ({ event }: OnrampReply) => {
      for (const value of event.isBatch ? batchValues(event.data) : [event.data]) {
        let cmd: Command;
        try {
          cmd = parseReply(value);
        } catch (err) {
          if (!(err instanceof BadReply)) throw err;
          reportError(`chat reply: ${err.message}`);
          continue;
        }
        run(cmd);
      }
    };

    const frames = new Observable<Frame>((subscriber) => {
      if (failure) return subscriber.error(failure);
      out = subscriber;
      // what arrived before (the platform sends guilds right after login) is released on the next tick, once the
      // activation has linked everything: released now, a linked reply to it could find the onramp's `in` not yet connected
      const release = ctx.scheduler.schedule(() => flush());
      return () => {
        release.unsubscribe();
        out = undefined;
      };
    });

    return {
      frames,
      reply: ctx.linked ? reply : undefined,
      get queued() {
        return queue.length;
      },
      get pending() {
        return pending;
      },
      pause() {
        paused = true;
      },
      resume() {
        paused = false;
        flush();
      },
      async close() {
        // replies not yet started are skipped (closed); the one in flight ends within `timeout`
        closed = true;
        queue = [];
        await client.destroy();
      },
    };
  },
};

function withTimeout<T>(promise: Promise<T>, ms: number, message: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => (timer = setTimeout(() => reject(new Error(message)), ms)));
  return Promise.race([promise, timeout]).finally(() => clearTimeout(timer));
}
