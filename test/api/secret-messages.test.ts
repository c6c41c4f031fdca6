/**
 * docs/security.md "Credentials in URLs": a message that names a URL with
 * credentials leaves eddy masked, wherever it goes: the fail a source gets
 * for an event its sink could not send, the log line about it, and the
 * reason GET /health and /status give for a failed onramp.
 */
import { expect } from 'chai';
import { Subject } from 'rxjs';
import type { Frame } from '../../src/connectors/connector';
import type { Insight } from '../../src/core/event';
import type { Logger } from '../../src/core/logger';
import type { Live } from '../../src/runtime/live';
import { instanceHealth } from '../../src/runtime/observe/health';
import { Runtime } from '../../src/runtime/runtime';
import { feedOnramp } from '../helpers/feed-onramp';
import { eventually } from '../helpers/runtime';
import { registriesWith, testOfframp } from '../integration/delivery/helpers';

const LEAK = 'connect ECONNREFUSED http://elastic:s3cret@127.0.0.1:1/_bulk';

describe('credentials in URLs: masked in the messages eddy passes on', () => {
  let runtime: Runtime | undefined;
  afterEach(async () => runtime?.shutdown());

  it('a failed send: the fail its source gets and the log line', async () => {
    const frames = new Subject<Frame>();
    const fails: Insight[] = [];
    const registries = registriesWith(
      [feedOnramp(frames, { ack: () => undefined, fail: (_id, insight) => void fails.push(insight) })],
      [
        testOfframp('leaky', () => {
          throw new Error(LEAK);
        }),
      ],
    );
    const logged: string[] = [];
    const log = (msg: string, fields?: Record<string, unknown>) => void logged.push(`${msg} ${JSON.stringify(fields ?? {})}`);
    const logger: Logger = { debug: log, info: log, warn: log, error: log };
    runtime = new Runtime({ registries, logger });
    await runtime.start();
    runtime.publish('onramp', { id: 'src', type: 'feed', config: {} });
    runtime.publish('offramp', { id: 'dst', type: 'leaky', config: {} });
    runtime.publish('binding', {
      id: 'flow',
      links: {
        '/onramp/src/{instance}/out': ['/pipeline/system::passthrough/{instance}/in'],
        '/pipeline/system::passthrough/{instance}/out': ['/offramp/dst/{instance}/in'],
      },
    });
    await runtime.activate('binding', 'flow', 'main', {});
    frames.next({ stream: 0, value: { n: 1 }, originUri: 'test://feed' });
    await eventually(() => fails.length === 1, 5000, 'the fail');
    expect(fails[0].meta).to.deep.equal({ error: 'connect ECONNREFUSED http://elastic:***@127.0.0.1:1/_bulk' });
    expect(logged.join('\n')).to.contain('send failed: connect ECONNREFUSED http://elastic:***@127.0.0.1:1/_bulk');
    expect(logged.join('\n')).not.to.contain('s3cret');
  });

  it('the reason of a failed onramp in GET /health and /status', () => {
    const live = { kind: 'onramp', onramp: { runtime: { failure: `lost ${LEAK}`, breaker: { isOpen: true } } } } as unknown as Live;
    expect(instanceHealth('/onramp/src/main', live)).to.deep.equal({
      url: '/onramp/src/main',
      state: 'failed',
      reason: 'lost connect ECONNREFUSED http://elastic:***@127.0.0.1:1/_bulk',
    });
  });
});
