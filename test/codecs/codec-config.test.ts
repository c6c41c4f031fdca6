import { expect } from 'chai';
import type { Subscriber } from 'rxjs';
import { dirname } from 'node:path';
import type { Frame, OfframpType } from '../../src/connectors/connector';
import type { EddyEvent } from '../../src/core/event';
import { createLogger } from '../../src/core/logger';
import { PathPolicy } from '../../src/runtime/policy';
import { Runtime } from '../../src/runtime/runtime';
import { pushOnramp } from '../helpers/push-onramp';
import { eventually } from '../helpers/runtime';
import { AVRO_SCHEMA_FILE } from './schema-support';

interface Kept {
  port: string;
  event: EddyEvent;
  payloads: Buffer[];
}

/** An offramp type that keeps what it is sent: the event and the payloads its codec made. */
function keeper(kept: Kept[]): OfframpType<{ port: string }> {
  return {
    name: 'keep',
    defaultCodec: 'json',
    autoAck: true,
    configSchema: { type: 'object', additionalProperties: false, required: ['port'], properties: { port: { type: 'string' } } },
    create: (config) => ({ send: (payloads, event) => void kept.push({ port: config.port, event, payloads }) }),
  };
}

const SCHEMA = {
  type: 'record',
  name: 'N',
  fields: [
    { name: 'n', type: 'long' },
    { name: 's', type: 'string' },
  ],
};
const avroCodec = { name: 'avro', config: { schema: SCHEMA } };

describe('codec config: codec: {name, config}', () => {
  let runtime: Runtime;
  let kept: Kept[];
  const feeds = new Map<string, Subscriber<Frame>>();

  beforeEach(async () => {
    kept = [];
    runtime = new Runtime({ logger: createLogger('silent') }).registerOnramp(pushOnramp(feeds)).registerOfframp(keeper(kept));
    await runtime.start();
  });
  afterEach(() => runtime.shutdown());

  const publishError = (kind: 'onramp' | 'offramp', body: Record<string, unknown>) => {
    try {
      runtime.publish(kind, body);
    } catch (err) {
      return (err as Error).message;
    }
    return 'published';
  };

  it('checks the config against the codec schema at publish, naming the field; a codec name alone works as before', () => {
    expect(publishError('onramp', { id: 'plain', type: 'push', codec: 'json' })).to.equal('published');
    expect(publishError('onramp', { id: 'named', type: 'push', codec: { name: 'json' } })).to.equal('published');
    expect(publishError('onramp', { id: 'good', type: 'push', codec: avroCodec })).to.equal('published');
    expect(publishError('onramp', { id: 'bogus', type: 'push', codec: { name: 'avro', config: { schema: 'long', bogus: 1 } } })).to.equal(
      "codec.config: unknown field 'bogus'",
    );
    expect(publishError('onramp', { id: 'none', type: 'push', codec: { name: 'avro', config: {} } })).to.equal(
      "codec.config: missing required field, one of 'schema', 'schema_file', 'registry'",
    );
    expect(publishError('onramp', { id: 'url', type: 'push', codec: { name: 'avro', config: { registry: { url: 'ftp://x' } } } })).to.equal(
      'codec.config.registry.url: must match ^https?://',
    );
    expect(publishError('offramp', { id: 'json', type: 'keep', config: { port: 'out' }, codec: { name: 'json', config: {} } })).to.equal(
      'codec.config: the json codec takes no config',
    );
    expect(publishError('offramp', { id: 'unknown', type: 'keep', config: { port: 'out' }, codec: { name: 'nope' } })).to.match(/^codec/);
  });

  it('refuses a schema_file outside --allow-path at publish, like any path of a ramp', async () => {
    const guarded = new Runtime({ logger: createLogger('silent'), policy: new PathPolicy({ allowPaths: ['/nonexistent-root'] }) }).registerOnramp(
      pushOnramp(feeds),
    );
    await guarded.start();
    try {
      expect(() => guarded.publish('onramp', { id: 'file', type: 'push', codec: { name: 'avro', config: { schema_file: AVRO_SCHEMA_FILE } } })).to.throw(
        `codec.config.schema_file: '${AVRO_SCHEMA_FILE}' is outside the allowed paths (/nonexistent-root)`,
      );
      const allowed = new PathPolicy({ allowPaths: [dirname(AVRO_SCHEMA_FILE)] });
      expect(() =>
        allowed.check('onramp', { id: 'file', type: 'push', codec: { name: 'avro', config: { schema_file: AVRO_SCHEMA_FILE } } }, guarded.registries),
      ).to.not.throw();
    } finally {
      await guarded.shutdown();
    }
  });

  it('fails the activation with a 400 naming the ramp when the codec cannot be made (an invalid schema)', async () => {
    runtime.publish('onramp', {
      id: 'broken',
      type: 'push',
      codec: { name: 'avro', config: { schema: { type: 'record', name: 'B', fields: [{ name: 'x', type: 'lung' }] } } },
    });
    runtime.publish('binding', { id: 'b', links: { '/onramp/broken/{instance}/out': ['/pipeline/system::passthrough/{instance}/in'] } });
    let message = '';
    await runtime.activate('binding', 'b', 'one').catch((err: unknown) => (message = (err as Error).message));
    expect(message).to.equal("onramp 'broken' (push) cannot start: avro: the schema of the config is invalid: undefined type name: lung");
  });

  it('decodes with the configured codec on the onramp and encodes with it on the offramp; an undecodable frame goes to err with its bytes, in order', async () => {
    runtime.publish('onramp', { id: 'in', type: 'push', codec: avroCodec });
    runtime.publish('offramp', { id: 'out', type: 'keep', config: { port: 'out' }, codec: avroCodec });
    runtime.publish('offramp', { id: 'errs', type: 'keep', config: { port: 'err' } });
    runtime.publish('binding', {
      id: 'flow',
      links: {
        '/onramp/in/{instance}/out': ['/pipeline/system::passthrough/{instance}/in'],
        '/pipeline/system::passthrough/{instance}/out': ['/offramp/out/{instance}/in'],
        '/onramp/in/{instance}/err': ['/pipeline/system::passthrough/{instance}errors/in'],
        '/pipeline/system::passthrough/{instance}errors/out': ['/offramp/errs/{instance}/in'],
      },
    });
    await runtime.activate('binding', 'flow', 'one');
    const feed = feeds.get('/onramp/in/one')!;
    // {n: 2^63 - 1, s: "a"}, then 3 bytes that are no record of the schema, then {n: -1, s: ""}
    const first = Buffer.from('feffffffffffffffff010261', 'hex');
    const bad = Buffer.from('0206ff', 'hex');
    const last = Buffer.from('0100', 'hex');
    for (const data of [first, bad, last]) feed.next({ stream: 1, data, originUri: 'test://push' });
    await eventually(() => kept.length === 3, 5000, '3 events kept');
    const out = kept.filter((k) => k.port === 'out');
    expect(out.map((k) => k.event.data)).to.deep.equal([
      { n: 2n ** 63n - 1n, s: 'a' },
      { n: -1, s: '' },
    ]);
    expect(out.map((k) => Buffer.concat(k.payloads).toString('hex'))).to.deep.equal([first.toString('hex'), last.toString('hex')]);
    const errs = kept.filter((k) => k.port === 'err').map((k) => k.event.data as Record<string, unknown>);
    expect(errs).to.have.length(1);
    expect(errs[0].error).to.equal('avro: cannot decode: truncated buffer');
    expect(errs[0].raw).to.equal(`base64:${bad.toString('base64')}`);
  });
});
