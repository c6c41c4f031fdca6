import { expect } from 'chai';
import { execFile } from 'node:child_process';
import { existsSync } from 'node:fs';
import { connect } from 'node:net';
import { join } from 'node:path';
import { PrivateService, checkPrivatePlacement } from './private-service';
import { privateServiceLeftOut, serviceAddress, skipWithout, type ServiceAddress } from './services';

/** Whether something accepts a TCP connection at `address` now. */
function answers({ host, port }: ServiceAddress): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = connect({ host, port });
    socket.once('connect', () => (socket.destroy(), resolve(true)));
    socket.once('error', () => resolve(false));
  });
}

/** The node names an epmd on `port` knows, or null when no epmd answers there. */
function epmdNames(port: string): Promise<string[] | null> {
  return new Promise((resolve) => {
    execFile('epmd', ['-port', port, '-names'], (err, stdout) => {
      if (err) resolve(null);
      else resolve([...stdout.matchAll(/^name (\S+) at port/gm)].map((m) => m[1]));
    });
  });
}

/**
 * Two private RabbitMQ nodes side by side (RabbitMQ, because its nodes share
 * more than a port: an epmd, a node name, a distribution port, a state
 * directory): each answers on its own port and registers with its own epmd,
 * and stopping one leaves the other running and registered, which is what
 * keeps a restart test from disturbing any other server.
 */
describe('PrivateService: a server of a test of its own', function () {
  this.timeout(120_000);
  const started: PrivateService[] = [];
  after(async () => {
    for (const service of started) await service.dispose();
  });

  // starting again after a stop: test/connectors/amqp/restart.test.ts
  it('refuses a placement that would reach the shared server: a variable left to its default, the shared directory or a shared port', () => {
    const kafka = { EDDY_SERVICES_DIR: '/tmp/eddy-private-kafka-x', EDDY_KAFKA_PORT: '40001', EDDY_KAFKA_CONTROLLER_PORT: '40002' };
    expect(() => checkPrivatePlacement('kafka', kafka, 40001)).not.to.throw();
    expect(() => checkPrivatePlacement('kafka', { ...kafka, EDDY_KAFKA_CONTROLLER_PORT: '' }, 40001)).to.throw('EDDY_KAFKA_CONTROLLER_PORT not set');
    expect(() => checkPrivatePlacement('kafka', { ...kafka, EDDY_SERVICES_DIR: process.env.EDDY_SERVICES_DIR ?? '/tmp/eddy-services' }, 40001)).to.throw(
      "the shared services' directory",
    );
    expect(() => checkPrivatePlacement('kafka', { ...kafka, EDDY_KAFKA_PORT: String(serviceAddress('kafka').port) }, serviceAddress('kafka').port)).to.throw(
      'is a port of the shared instance',
    );
    expect(() => checkPrivatePlacement('kafka', { ...kafka, EDDY_KAFKA_CONTROLLER_PORT: '9093' }, 40001)).to.throw(
      'EDDY_KAFKA_CONTROLLER_PORT=9093 is a port of the shared instance',
    );
    const rabbit = {
      EDDY_SERVICES_DIR: '/tmp/p',
      EDDY_RABBITMQ_PORT: '40001',
      EDDY_RABBITMQ_NODE: 'p@localhost',
      EDDY_RABBITMQ_EPMD_PORT: '4369',
      EDDY_RABBITMQ_DIST_PORT: '40003',
    };
    expect(() => checkPrivatePlacement('rabbitmq', rabbit, 40001)).to.throw('EDDY_RABBITMQ_EPMD_PORT=4369');
  });

  it('runs two rabbitmq nodes apart: stopping one leaves the other answering and registered; dispose leaves nothing behind', async function () {
    const a = await PrivateService.start(this, 'rabbitmq');
    started.push(a);
    const b = await PrivateService.start(this, 'rabbitmq');
    started.push(b);
    expect(a.address.port).to.not.equal(b.address.port);
    expect(a.dir).to.not.equal(b.dir);
    const node = (s: PrivateService) => s.env.EDDY_RABBITMQ_NODE.split('@')[0];
    expect(await epmdNames(a.env.EDDY_RABBITMQ_EPMD_PORT)).to.deep.equal([node(a)]);
    expect(await epmdNames(b.env.EDDY_RABBITMQ_EPMD_PORT)).to.deep.equal([node(b)]);

    await a.stop();
    expect(await answers(a.address), 'a stopped').to.equal(false);
    expect(await answers(b.address), 'b untouched').to.equal(true);
    expect(await epmdNames(b.env.EDDY_RABBITMQ_EPMD_PORT), "b's registration").to.deep.equal([node(b)]);
    // a's epmd went with it
    expect(await epmdNames(a.env.EDDY_RABBITMQ_EPMD_PORT)).to.equal(null);

    await a.dispose();
    expect(await answers(a.address)).to.equal(false);
    expect(existsSync(a.dir), "a's directory").to.equal(false);
    expect(await answers(b.address), 'b still untouched').to.equal(true);
  });

  it('stops and removes a private server that a test left running when the process exits', async function () {
    const leftOut = privateServiceLeftOut('otelcol');
    if (leftOut) skipWithout(this, 'otelcol', 'no private otelcol is started', leftOut);
    const output = await new Promise<string>((resolve, reject) => {
      const child = [
        require.resolve('mocha/bin/mocha.js'),
        '--no-config',
        '--require',
        join(__dirname, 'setup.js'),
        join(__dirname, '../fixtures/services/abandons-a-collector.js'),
      ];
      execFile(process.execPath, child, { timeout: 60_000 }, (err, stdout, stderr) =>
        err ? reject(new Error(`${err.message}\n${stdout}${stderr}`)) : resolve(stdout),
      );
    });
    const [, dir, port] = /private otelcol: (\S+) (\d+)/.exec(output) ?? [];
    expect(dir, output).to.be.a('string');
    expect(existsSync(dir), 'its directory').to.equal(false);
    expect(await answers({ host: '127.0.0.1', port: Number(port) }), 'its receiver').to.equal(false);
  });
});
