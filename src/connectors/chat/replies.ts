import type { REST } from 'discord.js';

/**
 * The replies a linked chat onramp executes, in the spec's two shapes, and
 * the REST calls that carry them out. Parsing is strict: an unknown key, a
 * wrong type or a missing required field is refused with a message naming
 * the path (`message.send.embed.fields[1].value`), so a typo in a pipeline
 * never turns into a silently ignored command.
 */

/** A Discord id: a string of digits (ids exceed 2^53, so strings are what the API uses). */
type Snowflake = string;

export interface MemberCommand {
  guild: Snowflake;
  member: Snowflake;
  addRoles: Snowflake[];
  removeRoles: Snowflake[];
  deafen?: boolean;
  mute?: boolean;
}

export interface MessageCommand {
  channel: Snowflake;
  update?: { message: Snowflake; reactions: string[] };
  send?: { body: Record<string, unknown>; reactions: string[] };
}

export interface Command {
  guild?: MemberCommand;
  message?: MessageCommand;
}

/** A reply that does not have one of the spec's shapes; the message names the offending path. */
export class BadReply extends Error {}

type Rec = Record<string, unknown>;

function isRecord(v: unknown): v is Rec {
  return typeof v === 'object' && v !== null && !Array.isArray(v) && !Buffer.isBuffer(v);
}

function record(v: unknown, path: string, allowed: readonly string[], required: readonly string[] = []): Rec {
  if (!isRecord(v)) throw new BadReply(`${path}: must be a record, got ${describe(v)}`);
  for (const key of Object.keys(v)) {
    if (!allowed.includes(key)) throw new BadReply(`${path}: unknown key \`${key}\` (allowed: ${allowed.join(', ')})`);
  }
  for (const key of required) if (v[key] === undefined) throw new BadReply(`${path}.${key}: required`);
  return v;
}

function describe(v: unknown): string {
  if (v === null) return 'null';
  if (Array.isArray(v)) return 'a list';
  if (typeof v === 'string') return `the string ${JSON.stringify(v.length > 40 ? `${v.slice(0, 40)}…` : v)}`;
  if (typeof v === 'object') return 'a record';
  // what is left is a decoded scalar
  return `${typeof v} ${v as number | boolean | bigint | undefined}`;
}

/** Ids come as strings of digits or as integers (an integer beyond 2^53 decodes as a BigInt and keeps its value). */
function snowflake(v: unknown, path: string): Snowflake {
  if (typeof v === 'string' && /^\d{1,20}$/.test(v)) return v;
  if (typeof v === 'bigint' && v >= 0n) return v.toString();
  if (typeof v === 'number' && Number.isSafeInteger(v) && v >= 0) return String(v);
  throw new BadReply(`${path}: must be an id (a string of digits or a non-negative integer), got ${describe(v)}`);
}

function optional<T>(v: unknown, path: string, check: (v: unknown, path: string) => T): T | undefined {
  return v === undefined ? undefined : check(v, path);
}

function bool(v: unknown, path: string): boolean {
  if (typeof v !== 'boolean') throw new BadReply(`${path}: must be a boolean, got ${describe(v)}`);
  return v;
}

function str(v: unknown, path: string): string {
  if (typeof v !== 'string') throw new BadReply(`${path}: must be a string, got ${describe(v)}`);
  return v;
}

function list<T>(v: unknown, path: string, item: (v: unknown, path: string) => T): T[] {
  if (!Array.isArray(v)) throw new BadReply(`${path}: must be a list, got ${describe(v)}`);
  return v.map((x, i) => item(x, `${path}[${i}]`));
}

/**
 * An emoji as the reactions route names it: a unicode emoji as itself, a
 * custom emoji `{id, name?, animated?}` as `name:id` (the API finds a
 * custom emoji by its id; `_` stands in for a missing name).
 */
function emoji(v: unknown, path: string): string {
  if (typeof v === 'string') {
    if (v.length === 0) throw new BadReply(`${path}: an emoji must not be empty`);
    return v;
  }
  const r = record(v, path, ['id', 'name', 'animated'], ['id']);
  const id = snowflake(r.id, `${path}.id`);
  const name = optional(r.name, `${path}.name`, str);
  optional(r.animated, `${path}.animated`, bool); // the route does not need it; checked so a wrong type is still refused
  // an empty name is as missing as none
  return `${name === undefined || name === '' ? '_' : name}:${id}`;
}

/** The spec's embed, as the API's embed object (`colour` becomes `color`, a footer string becomes `{text}`). */
function embed(v: unknown, path: string): Rec {
  const r = record(v, path, ['author', 'colour', 'description', 'fields', 'footer']);
  const out: Rec = {};
  if (r.author !== undefined) {
    const a = record(r.author, `${path}.author`, ['icon_url', 'name', 'url']);
    out.author = {
      name: optional(a.name, `${path}.author.name`, str),
      url: optional(a.url, `${path}.author.url`, str),
      icon_url: optional(a.icon_url, `${path}.author.icon_url`, str),
    };
  }
  if (r.colour !== undefined) {
    if (typeof r.colour !== 'number' || !Number.isInteger(r.colour) || r.colour < 0 || r.colour > 0xffffff) {
      throw new BadReply(`${path}.colour: must be an integer from 0 to 16777215 (0xRRGGBB), got ${describe(r.colour)}`);
    }
    out.color = r.colour;
  }
  if (r.description !== undefined) out.description = str(r.description, `${path}.description`);
  if (r.fields !== undefined) {
    out.fields = list(r.fields, `${path}.fields`, (f, p) => {
      const field = record(f, p, ['name', 'value', 'inline'], ['name', 'value']);
      return { name: str(field.name, `${p}.name`), value: str(field.value, `${p}.value`), inline: optional(field.inline, `${p}.inline`, bool) ?? false };
    });
  }
  if (r.footer !== undefined) {
    if (typeof r.footer === 'string') out.footer = { text: r.footer };
    else {
      const f = record(r.footer, `${path}.footer`, ['text', 'icon_url'], ['text']);
      out.footer = { text: str(f.text, `${path}.footer.text`), icon_url: optional(f.icon_url, `${path}.footer.icon_url`, str) };
    }
  }
  return out;
}

function member(v: unknown): MemberCommand {
  const g = record(v, 'guild', ['id', 'member'], ['id', 'member']);
  const m = record(g.member, 'guild.member', ['id', 'remove_roles', 'add_roles', 'deafen', 'mute'], ['id']);
  return {
    guild: snowflake(g.id, 'guild.id'),
    member: snowflake(m.id, 'guild.member.id'),
    addRoles: optional(m.add_roles, 'guild.member.add_roles', (x, p) => list(x, p, snowflake)) ?? [],
    removeRoles: optional(m.remove_roles, 'guild.member.remove_roles', (x, p) => list(x, p, snowflake)) ?? [],
    deafen: optional(m.deafen, 'guild.member.deafen', bool),
    mute: optional(m.mute, 'guild.member.mute', bool),
  };
}

function message(v: unknown): MessageCommand {
  const r = record(v, 'message', ['channel_id', 'update', 'send'], ['channel_id']);
  const channel = snowflake(r.channel_id, 'message.channel_id');
  const cmd: MessageCommand = { channel };
  if (r.update !== undefined) {
    const u = record(r.update, 'message.update', ['message_id', 'add_reactions'], ['message_id']);
    cmd.update = {
      message: snowflake(u.message_id, 'message.update.message_id'),
      reactions: optional(u.add_reactions, 'message.update.add_reactions', (x, p) => list(x, p, emoji)) ?? [],
    };
  }
  if (r.send !== undefined) {
    const s = record(r.send, 'message.send', ['content', 'reference_message', 'reference_channel', 'tts', 'embed', 'reactions']);
    const body: Rec = {};
    if (s.content !== undefined) body.content = str(s.content, 'message.send.content');
    if (s.tts !== undefined) body.tts = bool(s.tts, 'message.send.tts');
    if (s.embed !== undefined) body.embeds = [embed(s.embed, 'message.send.embed')];
    const refChannel = optional(s.reference_channel, 'message.send.reference_channel', snowflake);
    if (s.reference_message !== undefined) {
      // reference_channel defaults to channel_id and means nothing without reference_message (the spec)
      body.message_reference = { message_id: snowflake(s.reference_message, 'message.send.reference_message'), channel_id: refChannel ?? channel };
    }
    if (body.content === undefined && body.embeds === undefined)
      throw new BadReply('message.send: needs `content` or `embed` (the platform refuses an empty message)');
    cmd.send = { body, reactions: optional(s.reactions, 'message.send.reactions', (x, p) => list(x, p, emoji)) ?? [] };
  }
  return cmd;
}

/** Parses one reply value; throws BadReply naming the path of the first problem. */
export function parseReply(value: unknown): Command {
  const r = record(value, 'reply', ['guild', 'message']);
  if (r.guild === undefined && r.message === undefined) throw new BadReply('reply: needs `guild` or `message`');
  return { guild: r.guild === undefined ? undefined : member(r.guild), message: r.message === undefined ? undefined : message(r.message) };
}

/** A REST call failed: names the call and carries the platform's answer. */
export class CallFailed extends Error {}

async function call<T>(rest: REST, method: 'put' | 'delete' | 'patch' | 'post', route: `/${string}`, body?: unknown): Promise<T> {
  try {
    return (await rest[method](route, body === undefined ? {} : { body })) as T;
  } catch (err) {
    const e = err as Error & { status?: number };
    throw new CallFailed(`${method.toUpperCase()} ${route} failed${e.status ? ` (${e.status})` : ''}: ${e.message}`);
  }
}

/** Runs a parsed command through the library's REST client, one call at a time, in the order the reply lists them. */
export async function execute(rest: REST, cmd: Command): Promise<void> {
  if (cmd.guild) {
    const { guild, member: user } = cmd.guild;
    for (const role of cmd.guild.addRoles) await call(rest, 'put', `/guilds/${guild}/members/${user}/roles/${role}`);
    for (const role of cmd.guild.removeRoles) await call(rest, 'delete', `/guilds/${guild}/members/${user}/roles/${role}`);
    const edit: Rec = {};
    if (cmd.guild.deafen !== undefined) edit.deaf = cmd.guild.deafen;
    if (cmd.guild.mute !== undefined) edit.mute = cmd.guild.mute;
    if (Object.keys(edit).length > 0) await call(rest, 'patch', `/guilds/${guild}/members/${user}`, edit);
  }
  if (cmd.message) {
    const { channel, update, send } = cmd.message;
    if (update)
      for (const e of update.reactions) await call(rest, 'put', `/channels/${channel}/messages/${update.message}/reactions/${encodeURIComponent(e)}/@me`);
    if (send) {
      const sent = await call<{ id: string }>(rest, 'post', `/channels/${channel}/messages`, send.body);
      for (const e of send.reactions) await call(rest, 'put', `/channels/${channel}/messages/${sent.id}/reactions/${encodeURIComponent(e)}/@me`);
    }
  }
}
