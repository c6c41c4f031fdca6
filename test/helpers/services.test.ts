import { expect } from 'chai';
import { execFile } from 'node:child_process';
import { join } from 'node:path';
import { freePort } from '../connectors/net-helpers';
import { selectedServices, SERVICE_NAMES, startPlan } from './services';

const MOCHA = require.resolve('mocha/bin/mocha.js');
const SETUP = join(__dirname, 'setup.js');
const FIXTURE = join(__dirname, '../fixtures/services/needs-servers.js');

interface Run {
  code: number;
  output: string;
}

/** The fixture spec in a child mocha with the test setup (its global fixtures included), in an environment without CI or EDDY_SERVICES of this run. */
function runFixture(env: Record<string, string>): Promise<Run> {
  const base = { ...process.env };
  delete base.CI;
  delete base.EDDY_SERVICES;
  return new Promise((resolve) => {
    execFile(
      process.execPath,
      [MOCHA, '--no-config', '--no-color', '--timeout', '20000', '--require', SETUP, FIXTURE],
      { env: { ...base, ...env }, timeout: 60_000 },
      (err, stdout, stderr) => resolve({ code: err ? ((err as { code?: number }).code ?? -1) : 0, output: stdout + stderr }),
    );
  });
}

describe('test services: EDDY_SERVICES and the summary of what was not tested', function () {
  this.timeout(60_000);

  it('EDDY_SERVICES selects every service (unset, all), none, or a list; an unknown name is an error naming it and the known ones', () => {
    expect([...selectedServices(undefined)]).to.deep.equal(SERVICE_NAMES);
    expect([...selectedServices('all')]).to.deep.equal(SERVICE_NAMES);
    expect([...selectedServices('none')]).to.deep.equal([]);
    expect([...selectedServices('kafka, rabbitmq')]).to.deep.equal(['kafka', 'rabbitmq']);
    expect(() => selectedServices('kafka,rabbit')).to.throw(
      /EDDY_SERVICES=kafka,rabbit: unknown service 'rabbit' \(known: postgres, rabbitmq, .*; or all, none\)/,
    );
  });

  it('starts the services that are down, selected, and at their default address; says why it starts no other', () => {
    const plan = startPlan(['kafka', 'rabbitmq', 'nats', 'elastic'], {
      EDDY_SERVICES: 'kafka,nats,elastic',
      EDDY_NATS_PORT: '4333',
      EDDY_ELASTIC_HOST: 'es.example',
    });
    expect(plan.start).to.deep.equal(['kafka']);
    expect(Object.fromEntries(plan.notStarted)).to.deep.equal({
      rabbitmq: 'EDDY_SERVICES=kafka,nats,elastic leaves it out',
      nats: 'its address comes from EDDY_NATS_PORT, so it is not started here',
      elastic: 'its address comes from EDDY_ELASTIC_HOST, so it is not started here',
    });
    expect(startPlan([], {}).start).to.deep.equal([]);
    expect(startPlan(['postgres'], {}).start).to.deep.equal(['postgres']);
  });

  it('EDDY_SERVICES=none: the suites that need a server are pending, and the run ends naming those connectors, their tests and why', async () => {
    const port = await freePort(); // nothing listens there
    const run = await runFixture({ EDDY_SERVICES: 'none', EDDY_KAFKA_PORT: String(port) });
    expect(run.code, run.output).to.equal(0);
    expect(run.output).to.match(/1 passing[\s\S]*3 pending/);
    // after mocha's own summary
    const summary = run.output.slice(run.output.search(/^ {2}3 pending$/m));
    expect(summary, run.output).to.contain('services: not tested: kafka, amqp\n');
    expect(summary).to.contain(`  kafka: 2 tests pending, kafka is not running on 127.0.0.1:${port}: EDDY_SERVICES=none leaves it out\n`);
    expect(summary).to.contain('  amqp: 1 test pending, no private rabbitmq is started: EDDY_SERVICES=none leaves it out\n');
  });

  it('a server the environment points elsewhere is not started, and the summary says so', async () => {
    const port = await freePort();
    const run = await runFixture({ EDDY_SERVICES: 'kafka', EDDY_KAFKA_PORT: String(port) });
    expect(run.code, run.output).to.equal(0);
    expect(run.output).to.not.contain('services: starting');
    expect(run.output).to.contain(
      `  kafka: 2 tests pending, kafka is not running on 127.0.0.1:${port}: its address comes from EDDY_KAFKA_PORT, so it is not started here\n`,
    );
    expect(run.output).to.contain('  amqp: 1 test pending, no private rabbitmq is started: EDDY_SERVICES=kafka leaves it out\n');
  });

  it('under CI a missing server fails the suites that need it instead of skipping them', async () => {
    const port = await freePort();
    const run = await runFixture({ CI: 'true', EDDY_SERVICES: 'none', EDDY_KAFKA_PORT: String(port) });
    expect(run.code, run.output).to.equal(2);
    expect(run.output).to.contain(`kafka is not running on 127.0.0.1:${port}: EDDY_SERVICES=none leaves it out`);
    expect(run.output).to.contain('no private rabbitmq is started: EDDY_SERVICES=none leaves it out');
    expect(run.output).to.not.contain('services: not tested');
  });

  it('an EDDY_SERVICES naming an unknown service stops the run before any test, naming it', async () => {
    const run = await runFixture({ EDDY_SERVICES: 'kafak' });
    expect(run.code, run.output).to.not.equal(0);
    expect(run.output).to.contain("EDDY_SERVICES=kafak: unknown service 'kafak'");
    expect(run.output).to.not.contain('passing');
  });
});
