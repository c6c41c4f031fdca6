import { execFile, spawnSync } from 'node:child_process';
import { chmodSync, mkdtempSync, rmSync } from 'node:fs';
import { createServer, type AddressInfo, type Server } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { privateServiceLeftOut, serviceAddress, SERVICES_SCRIPT, skipWithout, type ServiceAddress } from './services';

/** The services a test may run a private instance of. */
export type PrivateServiceName = 'rabbitmq' | 'kafka' | 'otelcol';

/** Long enough for a first start that still installs or builds the server (apt, Maven, Go); a warm start takes seconds. */
const SCRIPT_TIMEOUT_MS = 300_000;

/** `count` distinct loopback ports that nothing listens on right now (all held until the last is chosen). */
async function freePorts(count: number): Promise<number[]> {
  const servers: Server[] = [];
  try {
    for (let i = 0; i < count; i++) {
      const server = createServer();
      servers.push(server);
      await new Promise<void>((resolve, reject) => server.once('error', reject).listen(0, '127.0.0.1', resolve));
    }
    return servers.map((s) => (s.address() as AddressInfo).port);
  } finally {
    await Promise.all(servers.map((s) => new Promise((r) => s.close(r))));
  }
}

/**
 * The script environment that places one private instance: its state
 * directory and its ports (the variables scripts/services.d/NAME.sh reads;
 * see the header of each).
 */
async function placement(name: PrivateServiceName, exportPort?: number): Promise<{ env: Record<string, string>; port: number }> {
  if (name === 'rabbitmq') {
    const [port, epmd, dist] = await freePorts(3);
    return {
      port,
      env: {
        EDDY_RABBITMQ_PORT: String(port),
        // a node name and an epmd of its own: the shared node's registration is never touched
        EDDY_RABBITMQ_NODE: `eddy-private-${process.pid}-${port}@localhost`,
        EDDY_RABBITMQ_EPMD_PORT: String(epmd),
        EDDY_RABBITMQ_DIST_PORT: String(dist),
      },
    };
  }
  if (name === 'kafka') {
    const [port, controller] = await freePorts(2);
    return { port, env: { EDDY_KAFKA_PORT: String(port), EDDY_KAFKA_CONTROLLER_PORT: String(controller) } };
  }
  if (exportPort === undefined) throw new Error('a private otelcol needs exportPort: where its otlp exporter sends');
  const [port] = await freePorts(1);
  return { port, env: { EDDY_OTELCOL_PORT: String(port), EDDY_OTELCOL_EXPORT_PORT: String(exportPort) } };
}

/** The variables each script reads to place an instance: all of them must be set, or the script falls back to the shared instance's. */
const PLACEMENT: Record<PrivateServiceName, readonly string[]> = {
  rabbitmq: ['EDDY_SERVICES_DIR', 'EDDY_RABBITMQ_PORT', 'EDDY_RABBITMQ_NODE', 'EDDY_RABBITMQ_EPMD_PORT', 'EDDY_RABBITMQ_DIST_PORT'],
  kafka: ['EDDY_SERVICES_DIR', 'EDDY_KAFKA_PORT', 'EDDY_KAFKA_CONTROLLER_PORT'],
  otelcol: ['EDDY_SERVICES_DIR', 'EDDY_OTELCOL_PORT', 'EDDY_OTELCOL_EXPORT_PORT'],
};

/** The shared instances' places: a private one never has them. */
const SHARED = { dir: process.env.EDDY_SERVICES_DIR ?? '/tmp/eddy-services', ports: new Set(['9093', '4369', '25672', '14319']) };

/**
 * Throws unless `env` places a private instance apart from the shared one:
 * every placement variable set, a state directory and ports other than the
 * shared instance's. Checked before every start and stop, so no test can
 * stop or restart a shared server through this helper.
 */
export function checkPrivatePlacement(name: PrivateServiceName, env: Readonly<Record<string, string>>, port: number): void {
  const missing = PLACEMENT[name].filter((v) => !env[v]);
  if (missing.length > 0) throw new Error(`private ${name}: ${missing.join(', ')} not set: the script would use the shared instance's`);
  if (env.EDDY_SERVICES_DIR === SHARED.dir) throw new Error(`private ${name}: ${SHARED.dir} is the shared services' directory`);
  const shared = String(serviceAddress(name).port);
  const clash = Object.entries(env).find(([k, v]) => k.endsWith('_PORT') && !k.endsWith('_EXPORT_PORT') && (v === shared || SHARED.ports.has(v)));
  if (clash || String(port) === shared)
    throw new Error(`private ${name}: ${clash ? `${clash[0]}=${clash[1]}` : `port ${port}`} is a port of the shared instance`);
}

/** Every private instance still running, stopped when the process exits before a test could (an aborted run). */
const running = new Set<PrivateService>();
process.once('exit', () => {
  for (const service of running) service.stopNow();
});

/**
 * A server of the test's own, beside the shared one of scripts/services: the
 * same script and binaries, started with its own ports, node name and state
 * directory (`EDDY_SERVICES_DIR`), so a test may stop and start it, or
 * signal it, without disturbing any other test or process. `dispose` stops
 * it and removes its directory.
 *
 *   const rabbit = await PrivateService.start(this, 'rabbitmq');  // in a before hook
 *   ... rabbit.address ... await rabbit.stop(); await rabbit.start(); ...
 *   await rabbit.dispose();                                          // in after
 *
 * EDDY_SERVICES works as for the shared servers: a run that leaves the
 * service out skips the suite (summarised at the end), and under CI fails.
 */
export class PrivateService {
  readonly address: ServiceAddress;
  private up = false;

  private constructor(
    readonly name: PrivateServiceName,
    /** the instance's EDDY_SERVICES_DIR: its config, data, logs and pid file are under `${dir}/${name}` */
    readonly dir: string,
    /** the variables that place it, as scripts/services.d/NAME.sh reads them */
    readonly env: Record<string, string>,
    port: number,
  ) {
    this.address = { host: '127.0.0.1', port };
  }

  /**
   * Starts a private `name` and waits until it answers, from a hook or a
   * test (`ctx`) whose timeout is lengthened while it starts (a first start
   * may still install or build the server) and counts afresh once it runs.
   * `exportPort` (otelcol only): where the collector's otlp exporter sends.
   */
  static async start(ctx: Mocha.Context, name: PrivateServiceName, options: { exportPort?: number } = {}): Promise<PrivateService> {
    const reason = privateServiceLeftOut(name);
    if (reason) skipWithout(ctx, name, `no private ${name} is started`, reason);
    const timeout = ctx.timeout();
    ctx.timeout(Math.max(timeout, SCRIPT_TIMEOUT_MS + 10_000));
    const dir = mkdtempSync(join(tmpdir(), `eddy-private-${name}-`));
    // the rabbitmq node runs as user rabbitmq, who must reach its state directory
    chmodSync(dir, 0o755);
    const { env, port } = await placement(name, options.exportPort);
    const service = new PrivateService(name, dir, { EDDY_SERVICES_DIR: dir, ...env }, port);
    try {
      await service.start();
    } catch (err) {
      await service.dispose();
      throw err;
    } finally {
      ctx.timeout(timeout);
    }
    return service;
  }

  /** `NAME.sh start`: starts the instance (again, on the same ports and data) and waits until it answers. */
  async start(): Promise<void> {
    running.add(this);
    this.up = true;
    await this.script('start');
  }

  /** `NAME.sh stop`: stops the instance and waits until it is gone; its data stays for a `start`. */
  async stop(): Promise<void> {
    await this.script('stop');
    this.up = false;
    running.delete(this);
  }

  /** Stops the instance if it runs and removes its directory. */
  async dispose(): Promise<void> {
    if (this.up) await this.stop().catch(() => this.stopNow());
    rmSync(this.dir, { recursive: true, force: true });
    running.delete(this);
  }

  /** The synchronous stop and removal for process exit, when no promise will be awaited any more. */
  stopNow(): void {
    checkPrivatePlacement(this.name, this.env, this.address.port);
    spawnSync('bash', [this.scriptPath(), 'stop'], { env: { ...process.env, ...this.env }, stdio: 'ignore', timeout: 60_000 });
    rmSync(this.dir, { recursive: true, force: true });
  }

  private scriptPath(): string {
    return join(SERVICES_SCRIPT, `../services.d/${this.name}.sh`);
  }

  private script(action: 'start' | 'stop'): Promise<void> {
    checkPrivatePlacement(this.name, this.env, this.address.port);
    return new Promise((resolve, reject) => {
      execFile('bash', [this.scriptPath(), action], { env: { ...process.env, ...this.env }, timeout: SCRIPT_TIMEOUT_MS }, (err, stdout, stderr) => {
        if (err) reject(new Error(`private ${this.name} (${this.dir}): ${action} failed: ${err.message}\n${stdout}${stderr}`));
        else resolve();
      });
    });
  }
}
