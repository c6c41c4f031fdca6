import { expect } from 'chai';
import { readFileSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { loadConfigFile } from '../../src/config/load';
import { createLogger } from '../../src/core/logger';
import { Runtime } from '../../src/runtime/runtime';
import { labelNumbers } from '../../examples/embed';
import { range } from '../../examples/custom-onramp';
import { collector } from '../../examples/custom-offramp';
import { eventually } from '../helpers/runtime';
import { runNode } from '../helpers/cli';
import { requireService, type ServiceName } from '../helpers/services';
import { StandIn } from '../connectors/chat/stand-in';
import { EXAMPLE_PORTS, EXAMPLES, SERVICE_PORTS, exampleCopy, exampleOnFreePorts } from '../helpers/examples';

/** The real server an example's connectors talk to, by the type names it uses. */
function serviceOf(text: string): ServiceName | undefined {
  const services: Record<string, ServiceName> = { kafka: 'kafka', amqp: 'rabbitmq', nats: 'nats', postgres: 'postgres', elastic: 'elastic', pubsub: 'pubsub' };
  for (const [type, service] of Object.entries(services)) if (new RegExp(`type:\\s*${type}\\b`).test(text)) return service;
  return undefined;
}

describe('examples', () => {
  it('the embedding example runs its own onramp, operator and offramp types by name in one flow', async () => {
    expect(await labelNumbers(4)).to.deep.equal([
      { n: 1, label: 'ODD' },
      { n: 2, label: 'EVEN' },
      { n: 3, label: 'ODD' },
      { n: 4, label: 'EVEN' },
    ]);
  });

  it('the embedding example runs as a program that imports eddy by its package name', async () => {
    const run = await runNode([join(__dirname, '../../examples/embed.js')]);
    expect(run.stderr).to.equal('');
    expect(JSON.parse(run.stdout)).to.deep.equal([
      { n: 1, label: 'ODD' },
      { n: 2, label: 'EVEN' },
      { n: 3, label: 'ODD' },
      { n: 4, label: 'EVEN' },
    ]);
  });

  it('the custom onramp refuses a range that runs backwards when it is published, naming the field', async () => {
    const runtime = new Runtime({ logger: createLogger('silent') }).registerOnramp(range);
    expect(() => runtime.publish('onramp', { id: 'back', type: 'example::range', config: { from: 5, to: 3 } })).to.throw('config.to: 3 is below from (5)');
  });

  it('the custom offramp hands every payload to the application, and a throw fails only that event', async () => {
    const received: number[] = [];
    const runtime = await new Runtime({ logger: createLogger('silent') })
      .registerOnramp(range)
      .registerOfframp(
        collector((payload) => {
          const { n } = JSON.parse(payload.toString()) as { n: number };
          if (n === 2) throw new Error('refused');
          received.push(n);
        }),
      )
      .start();
    try {
      runtime.publish('onramp', { id: 'numbers', type: 'example::range', config: { from: 1, to: 4 } });
      runtime.publish('offramp', { id: 'app', type: 'example::collect' });
      runtime.publish('binding', {
        id: 'direct',
        links: { '/onramp/numbers/{i}/out': ['/pipeline/system::passthrough/{i}/in'], '/pipeline/system::passthrough/{i}/out': ['/offramp/app/{i}/in'] },
      });
      await runtime.activate('binding', 'direct', 'one', { i: 'one' });
      await eventually(() => received.length === 2, 10000, 'two events collected');
      expect(received).to.deep.equal([1, 3]);
      await eventually(() => runtime.offramp('/offramp/app/one')?.counters.error === 1, 10000, 'one send error counted');
    } finally {
      await runtime.shutdown();
    }
  });

  it('every TypeScript example imports eddy by its package name, never from src/', () => {
    for (const file of readdirSync(EXAMPLES).filter((f) => f.endsWith('.ts'))) {
      const text = readFileSync(join(EXAMPLES, file), 'utf8');
      expect(text, file).not.to.match(/from '\.\.\/src/);
    }
  });

  it('registering a type name twice is an error', async () => {
    const { uppercaseOperator } = await import('../../examples/custom-operator');
    const runtime = new Runtime({ logger: createLogger('silent') }).registerOperator(uppercaseOperator);
    expect(() => runtime.registerOperator(uppercaseOperator)).to.throw(/already registered/);
  });

  const configs = readdirSync(EXAMPLES).filter((f) => /\.(ya?ml|json)$/.test(f) && !f.endsWith('.cases.yaml'));

  it('every fixed port an example listens on or talks to is one a test replaces (EXAMPLE_PORTS), or a shared server of scripts/services', () => {
    const unlisted: string[] = [];
    for (const file of configs) {
      const text = readFileSync(join(EXAMPLES, file), 'utf8');
      // `port: N`, `dst_port: N`, and an address 127.0.0.1:N (or `127.0.0.1 N`, as nc takes it) in a URL or a comment's command
      for (const [, port] of text.matchAll(/(?:port:\s*|(?:127\.0\.0\.1|localhost)[: ])(\d+)\b/g)) {
        const n = Number(port);
        if (n === 0 || SERVICE_PORTS.includes(n) || n in (EXAMPLE_PORTS[file] ?? {})) continue;
        unlisted.push(`${file}: ${port}`);
      }
    }
    expect(unlisted, 'ports a test would run on as written: add them to EXAMPLE_PORTS (test/helpers/examples.ts)').to.deep.equal([]);
  });

  for (const file of configs) {
    it(`${file} loads and activates in a runtime`, async function () {
      const service = serviceOf(readFileSync(join(EXAMPLES, file), 'utf8'));
      if (service) await requireService(this, service);
      // the chat example talks to the local Discord stand-in, here on a port of its own
      const standIn = file === 'chat.yaml' ? await StandIn.start() : undefined;
      let config = join(EXAMPLES, file);
      if (standIn) config = exampleCopy(file, { 8140: standIn.port });
      else if (file in EXAMPLE_PORTS) config = (await exampleOnFreePorts(file)).file;
      const runtime = await new Runtime({ logger: createLogger('silent') }).start();
      try {
        await loadConfigFile(runtime, config);
        expect(runtime.list('binding').length).to.be.greaterThan(0);
      } finally {
        await runtime.shutdown();
        await standIn?.close();
      }
    });
  }
});
