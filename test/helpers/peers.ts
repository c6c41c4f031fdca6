import { existsSync } from 'node:fs';

/**
 * The path of a protocol peer the tests talk to (nc, curl, wrk), installed
 * by `scripts/install-peers` (which `.ci/run` calls). A missing peer is a
 * failure that says how to install it, never a silent skip.
 */
export function peer(program: 'nc' | 'curl' | 'wrk'): string {
  const path = `/usr/bin/${program}`;
  if (!existsSync(path)) throw new Error(`${program} is not installed: run scripts/install-peers`);
  return path;
}
