import { connect } from 'node:net';

/** The services of scripts/services and where the tests find them (override with EDDY_<NAME>_HOST / _PORT). */
const DEFAULT_PORTS = { postgres: 5432, rabbitmq: 5672, nats: 4222, kafka: 9092, elastic: 9200, pubsub: 8085, otelcol: 14317 } as const;
export type ServiceName = keyof typeof DEFAULT_PORTS;

export interface ServiceAddress {
  host: string;
  port: number;
}

export function serviceAddress(name: ServiceName): ServiceAddress {
  const env = name.toUpperCase();
  return { host: process.env[`EDDY_${env}_HOST`] ?? '127.0.0.1', port: Number(process.env[`EDDY_${env}_PORT`] ?? DEFAULT_PORTS[name]) };
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

/**
 * For a `before` hook of a suite that needs a real server: returns its
 * address. When nothing answers there, the suite is skipped locally with the
 * command that starts it; under CI (where `.ci/run` starts every service) it
 * fails instead, so a missing server can never pass as a skip.
 */
export async function requireService(ctx: Mocha.Context, name: ServiceName): Promise<ServiceAddress> {
  const address = serviceAddress(name);
  if (await reachable(address)) return address;
  const message = `${name} is not running on ${address.host}:${address.port}: start it with scripts/services start ${name}`;
  if (process.env.CI) throw new Error(message);
  // eslint-disable-next-line no-console
  console.warn(`skipped: ${message}`);
  ctx.skip();
}
