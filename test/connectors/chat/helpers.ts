import { asyncScheduler } from 'rxjs';
import type { EddyEvent } from '../../../src/core/event';
import { createLogger } from '../../../src/core/logger';
import { CircuitBreaker } from '../../../src/contraflow/circuit-breaker';
import { OnrampRuntime, onrampContext } from '../../../src/ramps/onramp';
import { chatOnramp, type ChatOnrampSource } from '../../../src/connectors/chat/onramp';
import { Registries } from '../../../src/runtime/registries';
import { TOKEN, type StandIn } from './stand-in';

const registries = Registries.withBuiltins();
let uids = 3000;

export interface DirectChat {
  runtime: OnrampRuntime;
  source: ChatOnrampSource;
  breaker: CircuitBreaker;
  events: EddyEvent[];
  errors: EddyEvent[];
  /** a reply on the onramp's `in` port */
  reply(data: unknown, isBatch?: boolean): void;
  stop(): Promise<void>;
}

/** The chat onramp in the shared machinery, logged in to the stand-in, without a runtime. */
export async function directChat(standIn: StandIn, config: Record<string, unknown> = {}): Promise<DirectChat> {
  const breaker = new CircuitBreaker();
  const uid = ++uids;
  const ctx = onrampContext({ url: '/onramp/chat/test', uid, hostname: 'test', logger: createLogger('silent'), requestExit: () => undefined }, breaker, {
    linked: true,
    scheduler: asyncScheduler,
  });
  const filled = { token: TOKEN, intents: ['guilds', 'guild_messages', 'message_content'], api_url: standIn.apiUrl, timeout: 5000, buffer: 10000, ...config };
  const source = (await chatOnramp.create(filled, ctx)) as ChatOnrampSource;
  const runtime = new OnrampRuntime({ ctx, breaker, source, codec: registries.codecs.get('json', 'codec').create(), preprocessors: () => [] });
  const events: EddyEvent[] = [];
  const errors: EddyEvent[] = [];
  const subs = [runtime.out$.subscribe((e) => events.push(e)), runtime.err$.subscribe((e) => errors.push(e))];
  let seq = 0;
  return {
    runtime,
    source,
    breaker,
    events,
    errors,
    reply(data, isBatch = false) {
      runtime.reply({ id: { uid: 1, seq: ++seq }, data, meta: {}, ingestNs: 1n, originUri: 'svc-test://here', isBatch, transactional: false });
    },
    async stop() {
      for (const s of subs) s.unsubscribe();
      await runtime.close();
    },
  };
}
