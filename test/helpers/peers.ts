import { spawnSync } from 'node:child_process';

/**
 * A protocol peer the test talks to (nc, curl, wrk). Missing locally, the
 * test is skipped with the command that installs it; under CI (where
 * `.ci/run` installs them) a missing peer fails the run instead.
 */
export function requirePeer(ctx: Mocha.Context, program: string): void {
  const found = spawnSync('sh', ['-c', `command -v ${program}`]).status === 0;
  if (found) return;
  const message = `${program} is not installed: run scripts/install-peers`;
  if (process.env.CI) throw new Error(message);
  // eslint-disable-next-line no-console
  console.warn(`skipped: ${message}`);
  ctx.skip();
}
