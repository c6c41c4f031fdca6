import { expect } from 'chai';
import { GatewayIntentBits } from 'discord.js';
import { eventually } from '../../helpers/runtime';
import { directChat, type DirectChat } from './helpers';
import { CHANNEL, GUILD, StandIn, TOKEN } from './stand-in';

// Everything here runs against test/connectors/chat/stand-in.ts: a local
// gateway and REST server speaking the protocol subset the onramp uses.
describe('chat onramp (against a local Discord stand-in)', () => {
  let standIn: StandIn;
  let chat: DirectChat | undefined;
  beforeEach(async () => {
    standIn = await StandIn.start();
  });
  afterEach(async () => {
    await chat?.stop();
    chat = undefined;
    await standIn.close();
  });

  const errorsText = () => chat!.errors.map((e) => (e.data as { error: string }).error);

  it('logs in with the token and intents, and forwards a created message as {message_create: ...} with meta chat.event', async () => {
    chat = await directChat(standIn);
    expect(standIn.identified).to.deep.equal([
      { token: TOKEN, intents: GatewayIntentBits.Guilds | GatewayIntentBits.GuildMessages | GatewayIntentBits.MessageContent },
    ]);
    standIn.guildCreate();
    standIn.messageCreate('5001', 'hello eddy');
    await eventually(() => chat!.events.some((e) => 'message_create' in (e.data as object)), 5000, 'the message event');
    const guild = chat.events.find((e) => 'guild_create' in (e.data as object));
    expect((guild?.data as { guild_create: { id: string; name: string } }).guild_create).to.include({ id: GUILD, name: 'stand-in guild' });
    const event = chat.events.find((e) => 'message_create' in (e.data as object))!;
    const message = (event.data as { message_create: Record<string, unknown> }).message_create;
    expect(message).to.include({ id: '5001', channelId: CHANNEL, guildId: GUILD, content: 'hello eddy', authorId: '4000' });
    expect(event.meta).to.deep.equal({ chat: { event: 'message_create' } });
    expect(event.originUri).to.equal(`svc-chat://127.0.0.1:${standIn.port}/gateway`);
    // plain JSON: what the codec writes is what a pipeline reads
    expect(JSON.parse(JSON.stringify(event.data))).to.deep.equal(event.data);
  });

  it('forwards a member update as {guild_member_update: ...}', async () => {
    chat = await directChat(standIn, { intents: ['guilds', 'guild_members'] });
    standIn.guildCreate();
    standIn.dispatch('GUILD_MEMBER_UPDATE', {
      guild_id: GUILD,
      user: { id: '4000', username: 'someone', discriminator: '0', avatar: null },
      roles: ['7001'],
      nick: 'nick',
      joined_at: '2024-01-01T00:00:00.000Z',
    });
    await eventually(() => chat!.events.some((e) => 'guild_member_update' in (e.data as object)), 5000, 'the member event');
    const data = chat.events.find((e) => 'guild_member_update' in (e.data as object))!.data as { guild_member_update: Record<string, unknown> };
    expect(data.guild_member_update).to.include({ guildId: GUILD, userId: '4000', nickname: 'nick' });
    expect(data.guild_member_update.roles).to.include('7001');
  });

  it('sends a message for a linked reply, with content, tts, reference, embed, then its reactions', async () => {
    chat = await directChat(standIn);
    chat.reply({
      message: {
        channel_id: CHANNEL,
        send: {
          content: 'pong',
          tts: true,
          reference_message: '5001',
          embed: { colour: 0x00ff00, description: 'desc', author: { name: 'eddy' }, fields: [{ name: 'a', value: 'b' }], footer: 'foot' },
          reactions: ['👍', { id: '8001', name: 'custom' }],
        },
      },
    });
    await eventually(() => standIn.calls.length === 3, 5000, 'three REST calls');
    expect(standIn.calls[0]).to.deep.include({ method: 'POST', path: `/channels/${CHANNEL}/messages`, authorization: `Bot ${TOKEN}` });
    expect(standIn.calls[0].body).to.deep.equal({
      content: 'pong',
      tts: true,
      embeds: [
        { color: 0x00ff00, description: 'desc', author: { name: 'eddy' }, fields: [{ name: 'a', value: 'b', inline: false }], footer: { text: 'foot' } },
      ],
      message_reference: { message_id: '5001', channel_id: CHANNEL },
    });
    // the reactions go on the message the platform created (the stand-in numbers them from 9001)
    expect(standIn.calls.slice(1).map((c) => [c.method, c.path])).to.deep.equal([
      ['PUT', `/channels/${CHANNEL}/messages/9001/reactions/${encodeURIComponent('👍')}/@me`],
      ['PUT', `/channels/${CHANNEL}/messages/9001/reactions/custom%3A8001/@me`],
    ]);
    expect(chat.errors).to.deep.equal([]);
  });

  it('adds reactions to an existing message and updates a member (roles, deafen, mute); a batch runs every member', async () => {
    chat = await directChat(standIn);
    const batch = [
      { data: { value: { message: { channel_id: Number(CHANNEL), update: { message_id: '5001', add_reactions: ['🎉'] } } } } },
      { data: { value: { guild: { id: GUILD, member: { id: '4000', add_roles: ['7001', '7002'], remove_roles: ['7003'], deafen: true, mute: false } } } } },
    ];
    chat.reply(batch, true);
    await eventually(() => standIn.calls.length === 5, 5000, 'five REST calls');
    expect(standIn.calls.map((c) => [c.method, c.path, c.body])).to.deep.equal([
      ['PUT', `/channels/${CHANNEL}/messages/5001/reactions/${encodeURIComponent('🎉')}/@me`, undefined],
      ['PUT', `/guilds/${GUILD}/members/4000/roles/7001`, undefined],
      ['PUT', `/guilds/${GUILD}/members/4000/roles/7002`, undefined],
      ['DELETE', `/guilds/${GUILD}/members/4000/roles/7003`, undefined],
      ['PATCH', `/guilds/${GUILD}/members/4000`, { deaf: true, mute: false }],
    ]);
    expect(chat.errors).to.deep.equal([]);
  });

  it('sends a reply that is not one of the shapes to err, naming the field, and makes no call', async () => {
    chat = await directChat(standIn);
    chat.reply({ message: { channel_id: CHANNEL, send: { content: 'x', colour: 1 } } });
    chat.reply({ guild: { id: GUILD, member: { id: 'me' } } });
    chat.reply({ message: { channel_id: CHANNEL, send: { embed: { fields: [{ name: 'a' }] } } } });
    chat.reply('just text');
    await eventually(() => chat!.errors.length === 4, 5000, 'four errors');
    expect(errorsText()).to.deep.equal([
      'chat reply: message.send: unknown key `colour` (allowed: content, reference_message, reference_channel, tts, embed, reactions)',
      'chat reply: guild.member.id: must be an id (a string of digits or a non-negative integer), got the string "me"',
      'chat reply: message.send.embed.fields[0].value: required',
      'chat reply: reply: must be a record, got the string "just text"',
    ]);
    expect(chat.runtime.counters.error).to.equal(4);
    expect(standIn.calls).to.deep.equal([]);
  });

  it('sends a REST call the platform refuses to err with the call and its answer', async () => {
    chat = await directChat(standIn);
    chat.reply({ message: { channel_id: '404', send: { content: 'lost' } } });
    await eventually(() => chat!.errors.length === 1, 5000, 'the error');
    expect(errorsText()[0]).to.match(/^chat reply: POST \/channels\/404\/messages failed \(404\): Unknown Channel/);
  });

  it('holds gateway events while the breaker is triggered, drops beyond `buffer` and reports the drops on err when restored', async () => {
    chat = await directChat(standIn, { buffer: 2 });
    standIn.guildCreate();
    await eventually(() => chat!.events.length === 1, 5000, 'the guild');
    chat.breaker.trigger('test');
    for (const id of ['6001', '6002', '6003', '6004']) standIn.messageCreate(id, `m${id}`);
    await eventually(() => chat!.source.queued === 2 && standIn.sockets.size === 1, 5000, 'two held');
    // nothing more reaches the flow while triggered
    expect(chat.events.length).to.equal(1);
    chat.breaker.restore('test');
    await eventually(() => chat!.events.length === 3 && chat!.errors.length === 1, 5000, 'the held events and the drop report');
    expect(chat.events.slice(1).map((e) => (e.data as { message_create: { id: string } }).message_create.id)).to.deep.equal(['6001', '6002']);
    expect(errorsText()).to.deep.equal(['2 gateway event(s) dropped: more than 2 arrived while the circuit breaker was triggered']);
  });

  it('close() disconnects from the gateway', async () => {
    chat = await directChat(standIn);
    expect(standIn.sockets.size).to.equal(1);
    await chat.stop();
    chat = undefined;
    await eventually(() => standIn.sockets.size === 0, 5000, 'the gateway connection to close');
  });

  it('fails to start with a token the platform refuses', async () => {
    const err = await directChat(standIn, { token: 'wrong' }).then(
      () => undefined,
      (e: unknown) => e as Error,
    );
    expect(err?.message).to.match(/^chat: login failed: /);
    expect(standIn.sockets.size).to.equal(0);
  });
});

describe('chat onramp intents', () => {
  it('names every intent of the library, in snake_case, with its bit', async () => {
    const { INTENTS } = await import('../../../src/connectors/chat/onramp');
    const deprecated = new Set(['GuildBans', 'GuildEmojisAndStickers']); // aliases of guild_moderation and guild_expressions
    const library = Object.entries(GatewayIntentBits)
      .filter(([name, bit]) => typeof bit === 'number' && !deprecated.has(name))
      .map(([name, bit]) => [name.replace(/([a-z0-9])([A-Z])/g, '$1_$2').toLowerCase(), bit]);
    expect([...INTENTS.entries()]).to.deep.equal(library);
  });
});
