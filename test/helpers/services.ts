import { spawn } from 'node:child_process';
import { connect } from 'node:net';
import { join } from 'node:path';

/** The services of scripts/services and where the tests find them (override with EDDY_<NAME>_HOST / _PORT). */
const DEFAULT_PORTS = { postgres: 5432, rabbitmq: 5672, nats: 4222, kafka: 9092, elastic: 9200, pubsub: 8085, otelcol: 14317, registry: 18081 } as const;
export type ServiceName = keyof typeof DEFAULT_PORTS;
export const SERVICE_NAMES = Object.keys(DEFAULT_PORTS) as ServiceName[];

/** The connector whose tests each service carries: what the summary says was not tested. */
const CONNECTOR: Record<ServiceName, string> = {
  postgres: 'postgres',
  rabbitmq: 'amqp',
  nats: 'nats',
  kafka: 'kafka',
  elastic: 'elastic',
  pubsub: 'pubsub',
  otelcol: 'otel (through a collector)',
  registry: 'avro and protobuf codecs (through a schema registry)',
};

/** scripts/services, from dist/test/helpers */
export const SERVICES_SCRIPT = join(__dirname, '../../../scripts/services');

export interface ServiceAddress {
  host: string;
  port: number;
}

export function serviceAddress(name: ServiceName): ServiceAddress {
  const env = name.toUpperCase();
  return { host: process.env[`EDDY_${env}_HOST`] ?? '127.0.0.1', port: Number(process.env[`EDDY_${env}_PORT`] ?? DEFAULT_PORTS[name]) };
}

/** The variable that moved a service away from its default address, if one did: such a server is the user's, never started by the tests. */
function addressOverride(name: ServiceName, env: NodeJS.ProcessEnv): string | undefined {
  const prefix = `EDDY_${name.toUpperCase()}`;
  return [`${prefix}_HOST`, `${prefix}_PORT`].find((variable) => env[variable] !== undefined);
}

/**
 * The services a test run may start, from EDDY_SERVICES: unset or `all`,
 * every one; `none`, none (the quick inner loop); or names separated by
 * commas. An unknown name is an error, not a silently smaller run.
 */
export function selectedServices(value: string | undefined = process.env.EDDY_SERVICES): Set<ServiceName> {
  const setting = (value ?? 'all').trim();
  if (setting === '' || setting === 'all') return new Set(SERVICE_NAMES);
  if (setting === 'none') return new Set();
  const names = setting
    .split(',')
    .map((n) => n.trim())
    .filter((n) => n !== '');
  const unknown = names.filter((n) => !(SERVICE_NAMES as string[]).includes(n));
  if (unknown.length > 0) {
    throw new Error(`EDDY_SERVICES=${value}: unknown service ${unknown.map((n) => `'${n}'`).join(', ')} (known: ${SERVICE_NAMES.join(', ')}; or all, none)`);
  }
  return new Set(names as ServiceName[]);
}

/** Why EDDY_SERVICES keeps a service out of this run, when it does. */
function leftOut(name: ServiceName, env: NodeJS.ProcessEnv): string | undefined {
  return selectedServices(env.EDDY_SERVICES).has(name) ? undefined : `EDDY_SERVICES=${env.EDDY_SERVICES} leaves it out`;
}

export interface StartPlan {
  /** down, and this run starts them */
  start: ServiceName[];
  /** down, and not started: why */
  notStarted: Map<ServiceName, string>;
}

/** Which of the services that are down a run starts: those EDDY_SERVICES selects, at their default address. */
export function startPlan(down: ServiceName[], env: NodeJS.ProcessEnv = process.env): StartPlan {
  const plan: StartPlan = { start: [], notStarted: new Map() };
  for (const name of down) {
    const override = addressOverride(name, env);
    const reason = leftOut(name, env) ?? (override && `its address comes from ${override}, so it is not started here`);
    if (reason) plan.notStarted.set(name, reason);
    else plan.start.push(name);
  }
  return plan;
}

function reachable({ host, port }: ServiceAddress): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = connect({ host, port });
    const done = (ok: boolean) => {
      socket.destroy();
      resolve(ok);
    };
    socket.setTimeout(2000, () => done(false));
    socket.once('connect', () => done(true));
    socket.once('error', () => done(false));
  });
}

/** Whether something answers at the service's address. */
export function serviceRunning(name: ServiceName): Promise<boolean> {
  return reachable(serviceAddress(name));
}

/** Why each service that was down when the run began is still down: the skip messages and the summary say it. */
const notStarted = new Map<ServiceName, string>();

/**
 * Before the first test (mocha's global setup, from setup.ts): starts the
 * services that are down with `scripts/services start NAME...` (parallel,
 * each waits until its server answers), unless EDDY_SERVICES leaves them out
 * or their address is the user's. Nothing is started, and nothing printed,
 * when every one already answers (as under `.ci/run`). A start that fails
 * does not stop the run: the tests that need that server are skipped (or,
 * under CI, fail), naming it.
 */
export async function startMissingServices(): Promise<void> {
  selectedServices(); // a misspelt EDDY_SERVICES stops the run here, even when every server is up
  const up = await Promise.all(SERVICE_NAMES.map((name) => serviceRunning(name)));
  const plan = startPlan(SERVICE_NAMES.filter((_, i) => !up[i]));
  for (const [name, reason] of plan.notStarted) notStarted.set(name, reason);
  if (plan.start.length === 0) return;
  console.log(`services: starting ${plan.start.join(', ')} (scripts/services start; EDDY_SERVICES=none runs without them)`);
  const code = await new Promise<number | null>((resolve) => {
    const child = spawn('bash', [SERVICES_SCRIPT, 'start', ...plan.start], { stdio: ['ignore', 'inherit', 'inherit'] });
    child.on('error', () => resolve(null));
    child.on('close', resolve);
  });
  if (code === 0) return;
  for (const name of plan.start) {
    if (!(await serviceRunning(name))) notStarted.set(name, `scripts/services start ${name} failed: see its output before the tests`);
  }
}

interface Skip {
  service: ServiceName;
  /** the suite (a hook skipped it) or the test */
  title: string;
  tests: number;
  /** what was missing, and why */
  what: string;
  why: string;
}
/** by the title of what was skipped: a beforeEach that skips each test counts each once */
const skips = new Map<string, Skip>();

/**
 * Skips what `ctx` runs (a hook's suite, or a test) for want of a service,
 * recording why for the summary at the end of the run; under CI (where
 * `.ci/run` starts every service) it fails instead, so a missing server can
 * never pass as a skip.
 */
export function skipWithout(ctx: Mocha.Context, name: ServiceName, what: string, why: string): never {
  const message = `${what}: ${why}`;
  if (process.env.CI) throw new Error(message);
  const runnable = ctx.runnable() as Mocha.Hook | Mocha.Test;
  const hook = runnable.type === 'hook';
  const title = hook ? (runnable.parent?.fullTitle() ?? runnable.fullTitle()) : runnable.fullTitle();
  skips.set(title, { service: name, title, tests: hook ? (runnable.parent?.total() ?? 1) : 1, what, why });
  console.warn(`skipped: ${message}`);
  ctx.skip();
}

/** Why a test may not start a server of its own (test/helpers/private-service.ts) for `name` in this run, if it may not. */
export function privateServiceLeftOut(name: ServiceName): string | undefined {
  return leftOut(name, process.env);
}

/**
 * For a `before` hook of a suite that needs a real server: returns its
 * address. When nothing answers there, the suite is skipped locally, saying
 * why (and listed in the summary at the end of the run); under CI it fails.
 */
export async function requireService(ctx: Mocha.Context, name: ServiceName): Promise<ServiceAddress> {
  const address = serviceAddress(name);
  if (await reachable(address)) return address;
  skipWithout(ctx, name, `${name} is not running on ${address.host}:${address.port}`, notStarted.get(name) ?? `start it with scripts/services start ${name}`);
}

/**
 * The lines that end a run in which tests were skipped for want of a
 * service: which connectors were not tested, how many tests, and why.
 * Empty when every connector was tested.
 */
export function skippedSummary(): string[] {
  if (skips.size === 0) return [];
  const byService = new Map<ServiceName, Skip[]>();
  for (const skip of skips.values()) byService.set(skip.service, [...(byService.get(skip.service) ?? []), skip]);
  const lines = [`services: not tested: ${[...byService.keys()].map((name) => CONNECTOR[name]).join(', ')}`];
  for (const [name, list] of byService) {
    const tests = list.reduce((n, skip) => n + skip.tests, 0);
    // one clause per reason: `rabbitmq is not running on … and no private rabbitmq is started: EDDY_SERVICES=none leaves it out`
    const whats = new Map<string, Set<string>>();
    for (const skip of list) whats.set(skip.why, (whats.get(skip.why) ?? new Set()).add(skip.what));
    const reasons = [...whats].map(([why, what]) => `${[...what].join(' and ')}: ${why}`);
    lines.push(`  ${CONNECTOR[name]}: ${tests} test${tests === 1 ? '' : 's'} pending, ${reasons.join('; ')}`);
  }
  return lines;
}
