import { expect } from 'chai';
import { runEddy } from '../../helpers/cli';
import { exampleCopy } from '../../helpers/examples';
import { call, eventually, startRuntime, type Started } from '../../helpers/runtime';
import { CHANNEL, StandIn, TOKEN } from './stand-in';

// Both tests run against the local Discord stand-in (test/connectors/chat/stand-in.ts).
describe('chat end to end (against a local Discord stand-in)', () => {
  let standIn: StandIn;
  afterEach(async () => {
    await standIn.close();
  });

  describe('over REST', () => {
    let rt: Started;
    beforeEach(async () => {
      standIn = await StandIn.start();
      rt = await startRuntime(undefined, { allowSecrets: true }); // the bot token goes over the API here
    });
    afterEach(async () => {
      await rt.stop();
    });
    const publish = async (kind: string, body: unknown) => expect((await call(rt.base, 'POST', `/${kind}`, { body })).status, kind).to.equal(201);

    it('a linked chat onramp echoes each message back to its channel through a pipeline; a bad token answers 400', async () => {
      await publish('onramp', { id: 'bot', type: 'chat', linked: true, config: { token: TOKEN, api_url: standIn.apiUrl } });
      await publish('pipeline', {
        id: 'echo',
        interface: { inputs: ['in'], outputs: ['out'] },
        nodes: [
          {
            id: 'answer',
            type: 'runtime::cel',
            config: {
              filter: 'has(event.message_create)',
              set: { 'message.channel_id': 'event.message_create.channelId', 'message.send.content': '"echo: " + event.message_create.content' },
              remove: ['message_create'],
            },
          },
        ],
        links: { in: ['answer'], answer: ['out'] },
      });
      await publish('binding', {
        id: 'loop',
        links: { '/onramp/bot/{instance}/out': ['/pipeline/echo/{instance}/in'], '/pipeline/echo/{instance}/out': ['/onramp/bot/{instance}/in'] },
      });
      expect((await call(rt.base, 'POST', '/binding/loop/one')).status).to.equal(201);
      await eventually(() => standIn.sockets.size === 1, 5000, 'the bot on the gateway');
      standIn.guildCreate();
      standIn.messageCreate('5001', 'hi');
      await eventually(() => standIn.calls.length === 1, 5000, 'the echo');
      expect(standIn.calls[0]).to.deep.include({ method: 'POST', path: `/channels/${CHANNEL}/messages`, body: { content: 'echo: hi' } });

      await publish('onramp', { id: 'wrong', type: 'chat', config: { token: 'not-the-token', api_url: standIn.apiUrl } });
      await publish('binding', { id: 'wrong', links: { '/onramp/wrong/{instance}/out': ['/pipeline/echo/{instance}/in'] } });
      const refused = await call(rt.base, 'POST', '/binding/wrong/two');
      expect(refused.status).to.equal(400);
      expect(refused.text).to.match(/onramp 'wrong' \(chat\) cannot start: chat: login failed/);

      expect((await call(rt.base, 'DELETE', '/binding/loop/one')).status).to.be.oneOf([200, 204]);
      await eventually(() => standIn.sockets.size === 0, 5000, 'the bot to leave the gateway');
    });
  });

  describe('examples/chat.yaml', () => {
    it('prints every gateway event and answers "ping" with "pong" as a reply to it', async function () {
      this.timeout(60000); // a child process on a loaded machine
      standIn = await StandIn.start();
      let done = false;
      // the example's stand-in address (127.0.0.1:8140) becomes this one's
      const example = exampleCopy('chat.yaml', { 8140: standIn.port });
      const run = runEddy(['server', 'run', '-f', example, '--no-api'], { timeoutMs: 50000, signalWhen: () => done });
      try {
        await eventually(() => standIn.sockets.size === 1, 30000, 'the example bot on the gateway');
        standIn.guildCreate();
        standIn.messageCreate('5001', 'hello');
        standIn.messageCreate('5002', 'ping');
        await eventually(() => standIn.calls.length > 0, 15000, 'the pong');
        expect(standIn.calls.length).to.equal(1);
        expect(standIn.calls[0]).to.deep.include({
          method: 'POST',
          path: `/channels/${CHANNEL}/messages`,
          body: { content: 'pong', message_reference: { message_id: '5002', channel_id: CHANNEL } },
        });
      } catch (err) {
        done = true;
        const failed = await run;
        throw new Error(`${(err as Error).message}; the example said: ${failed.stderr}${failed.stdout}`);
      } finally {
        done = true;
      }
      const result = await run;
      expect(result.code, result.stderr).to.equal(0);
      const printed = result.stdout
        .split('\n')
        .filter(Boolean)
        .map((l) => JSON.parse(l) as Record<string, { content?: string }>);
      expect(printed.map((e) => Object.keys(e)[0])).to.deep.equal(['guild_create', 'message_create', 'message_create']);
      expect(printed.slice(1).map((e) => e.message_create.content)).to.deep.equal(['hello', 'ping']);
    });
  });
});
