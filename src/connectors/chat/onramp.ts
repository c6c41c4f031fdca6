import { Observable, type Subscriber } from '../../core/rx';
// types only: discord.js is loaded when an instance is created, so eddy's start does not pay for it
import type { Client, ClientEvents } from 'discord.js';
import { checkInstalled, requirePackage } from '../../core/packages';
import type { Frame, OnrampContext, OnrampReply, OnrampSource, OnrampType } from '../connector';
import { batchValues } from '../../core/event';
import { BadReply, execute, parseReply, type Command } from './replies';
import { s } from '../../schema/typed';
import { duration, durationMs } from '../../schema/duration';
import type { Static } from '../../schema/typed';

// discord.js is loaded at activation (see create); publishing checks that it is there
checkInstalled('discord.js', 'the chat onramp');

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

const configSchema = s.object(
  {
    token: s.string({ minLength: 1, writeOnly: true, description: 'the bot token (Bot tab of the application in the Discord developer portal)' }),
    intents: s.array(
      // `type` beside the enum, as it always was: an item that is not a string is told "must be string"
      { type: 'string', ...s.literals([...INTENTS.keys()]) },
      {
        uniqueItems: true,
        default: ['guilds', 'guild_messages', 'message_content'],
        description:
          'gateway intents, snake_case (guilds, guild_members, guild_messages, message_content, guild_message_reactions, direct_messages, …); message_content and guild_members are privileged: enable them for the bot in the developer portal',
      },
    ),
    api_url: s.string({
      pattern: '^https?://',
      description: 'REST base URL instead of https://discord.com/api (for tests and proxies); the gateway URL is whatever its GET /gateway/bot answers',
    }),
    timeout: duration('how long a REST call, and the login when the instance starts, may take', { default: 15000 }),
    buffer: s.integer({
      minimum: 0,
      default: 10000,
      description: 'gateway events held while the circuit breaker is triggered; beyond it events are dropped and reported on err',
    }),
  },
  { description: 'A Discord bot: the gateway events it receives (messages and the rest) become events.', required: ['token'] },
);

type ChatOnrampConfig = Static<typeof configSchema>;

/** A structure as plain JSON: the library's `toJSON()`, then a JSON round trip so nothing but JSON values (no BigInt, no undefined) is left. */
function plain(value: unknown): unknown {
  const json =
    value !== null && typeof value === 'object' && typeof (value as { toJSON?: unknown }).toJSON === 'function'
      ? (value as { toJSON(): unknown }).toJSON()
      : value;
  if (json === undefined) return null;
  return JSON.parse(JSON.stringify(json, (_, v: unknown) => (typeof v === 'bigint' ? v.toString() : v))) as unknown;
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

/** The source of a chat onramp; tests read `queued` and `pending`. */
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
  configSchema,
  async create(config, ctx): Promise<ChatOnrampSource> {
    const { Client, Partials } = requirePackage<typeof import('discord.js')>('discord.js', 'the chat onramp');
    const client = new Client({
      intents: config.intents.map((name) => {
        const intent = INTENTS.get(name);
        // the schema admits only INTENTS' names
        if (intent === undefined) throw new Error(`chat: unknown intent '${name}'`);
        return intent;
      }),
      // uncached messages, channels, members and reactions still make events
      partials: [Partials.Message, Partials.Channel, Partials.GuildMember, Partials.Reaction, Partials.User],
      rest: { timeout: durationMs(config.timeout, 'timeout'), ...(config.api_url ? { api: config.api_url.replace(/\/+$/, '') } : {}) },
    });
    const source = new ChatSource(config, ctx, client);
    await source.login();
    return source;
  },
};

/**
 * The source of one chat onramp: the gateway's events as frames, held in a
 * bounded queue while paused (`push`, `flush`), and, linked, the replies
 * executed one at a time (`takeReply`, `run`).
 */
class ChatSource implements ChatOnrampSource {
  readonly frames: Observable<Frame>;
  /** linked only: unlinked, the machinery warns about replies sent here */
  readonly reply?: (reply: OnrampReply) => void;
  private readonly originUri: string;
  private out: Subscriber<Frame> | undefined;
  /** paused by the circuit breaker */
  private paused = false;
  private closed = false;
  /** gateway events held while paused (or before the first subscriber), at most `buffer` */
  private queue: Frame[] = [];
  /** events that did not fit in the queue, reported once the queue is released */
  private dropped = 0;
  /** the gateway closed for good: a later subscriber gets this error */
  private failure: Error | undefined;
  // linked replies run one at a time, in the order they arrived
  private chain: Promise<void> = Promise.resolve();
  private unfinished = 0;

  constructor(
    private readonly config: ChatOnrampConfig,
    private readonly ctx: OnrampContext,
    private readonly client: Client,
  ) {
    this.originUri = `svc-chat://${config.api_url ? new URL(config.api_url).host : 'discord.com'}/gateway`;
    if (ctx.linked) this.reply = (reply) => this.takeReply(reply);
    this.listen();
    this.frames = new Observable<Frame>((subscriber) => {
      if (this.failure) return subscriber.error(this.failure);
      this.out = subscriber;
      // what arrived before (the platform sends guilds right after login) is released on the next tick, once the
      // activation has linked everything: released now, a linked reply to it could find the onramp's `in` not yet connected
      const release = ctx.scheduler.schedule(() => this.flush());
      return () => {
        release.unsubscribe();
        this.out = undefined;
      };
    });
  }

  /** A wrong token or an unreachable platform fails the activation; the client is destroyed then. */
  async login(): Promise<void> {
    const { config, client } = this;
    const timeoutMs = durationMs(config.timeout, 'timeout');
    try {
      await withTimeout(client.login(config.token), timeoutMs, `chat: login did not complete within ${timeoutMs} ms`);
    } catch (err) {
      this.closed = true;
      await client.destroy();
      throw new Error(`chat: login failed: ${(err as Error).message}`);
    }
    this.ctx.logger.info(`Onramp ${this.ctx.url}: logged in as ${client.user?.tag ?? 'unknown'}`);
  }

  get queued(): number {
    return this.queue.length;
  }

  /** linked replies not yet executed */
  get pending(): number {
    return this.unfinished;
  }

  pause(): void {
    this.paused = true;
  }

  resume(): void {
    this.paused = false;
    this.flush();
  }

  async close(): Promise<void> {
    // replies not yet started are skipped (closed); the one in flight ends within `timeout`
    this.closed = true;
    this.queue = [];
    await this.client.destroy();
  }

  /** The client's events: those of FORWARDED as frames, the rest logged; a shard closed for good fails the source. */
  private listen(): void {
    const { client, ctx, originUri } = this;
    for (const [event, [name, toData]] of Object.entries(FORWARDED) as [keyof ClientEvents, [string, (...args: unknown[]) => unknown]][]) {
      client.on(event, (...args: unknown[]) =>
        this.push({ stream: 'gateway', value: { [name]: toData(...args) }, originUri, meta: { chat: { event: name } } }),
      );
    }
    client.on('error', (err) => ctx.logger.error(`Onramp ${ctx.url}: ${err.message}`));
    client.on('warn', (msg) => ctx.logger.warn(`Onramp ${ctx.url}: ${msg}`));
    client.on('shardReconnecting', (id) => ctx.logger.info(`Onramp ${ctx.url}: gateway shard ${id} reconnecting`));
    client.on('shardDisconnect', ({ code }, id) => {
      // the library reconnects by itself, except after these: the source has failed for good
      if (this.closed || !FATAL_CLOSE.has(code)) return;
      this.failure = new Error(`chat: the gateway closed shard ${id} with code ${code} and will not be reconnected (bad token or intents not allowed)`);
      this.out?.error(this.failure);
    });
  }

  /** the subscriber while the onramp flows (subscribed and not paused), else undefined */
  private get flowingTo(): Subscriber<Frame> | undefined {
    return this.paused ? undefined : this.out;
  }

  /** The gateway cannot be paused: while the onramp does not flow, events wait in the queue, and beyond `buffer` are counted as dropped. */
  private push(frame: Frame): void {
    const out = this.flowingTo;
    if (out && this.queue.length === 0) return out.next(frame);
    if (this.queue.length < this.config.buffer) this.queue.push(frame);
    else this.dropped++;
  }

  /** Releases held events, then reports what did not fit; a pause during the release leaves the rest to the machinery, which holds it. */
  private flush(): void {
    const out = this.flowingTo;
    if (!out) return;
    const held = this.queue;
    this.queue = [];
    for (const frame of held) out.next(frame);
    if (this.dropped > 0) {
      const error = `${this.dropped} gateway event(s) dropped: more than ${this.config.buffer} arrived while the circuit breaker was triggered`;
      this.dropped = 0;
      out.next({ stream: 'gateway', error, originUri: this.originUri });
    }
  }

  /** A bad reply or a failed REST call: on `err`, as a decode error is (held by the machinery while paused). */
  private reportError(error: string): void {
    if (this.out) this.out.next({ stream: 'replies', error, originUri: this.originUri });
    else this.ctx.logger.warn(`Onramp ${this.ctx.url}: ${error}`);
  }

  /** Linked: every reply (each member of a batch) is a command; one that is not is reported on `err`. */
  private takeReply({ event }: OnrampReply): void {
    for (const value of event.isBatch ? batchValues(event.data) : [event.data]) {
      let cmd: Command;
      try {
        cmd = parseReply(value);
      } catch (err) {
        if (!(err instanceof BadReply)) throw err;
        this.reportError(`chat reply: ${err.message}`);
        continue;
      }
      this.run(cmd);
    }
  }

  /** Runs the command after those before it; a command after close is skipped. */
  private run(cmd: Command): void {
    this.unfinished++;
    this.chain = this.chain.then(async () => {
      try {
        if (!this.closed) await execute(this.client.rest, cmd);
      } catch (err) {
        this.reportError(`chat reply: ${(err as Error).message}`);
      } finally {
        this.unfinished--;
      }
    });
  }
}

function withTimeout<T>(promise: Promise<T>, ms: number, message: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => (timer = setTimeout(() => reject(new Error(message)), ms)));
  return Promise.race([promise, timeout]).finally(() => clearTimeout(timer));
}
