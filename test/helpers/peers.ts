import { execFile, spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { join } from 'node:path';

/** scripts/install-peers, from dist/test/helpers */
export const INSTALL_PEERS = join(__dirname, '../../../scripts/install-peers');

/**
 * The path of a protocol peer the tests talk to (nc, curl, wrk), installed
 * by `scripts/install-peers` (which `.ci/run` and `npm test`'s setup call). A
 * missing peer is a failure that says how to install it, never a silent skip.
 */
export function peer(program: 'nc' | 'curl' | 'wrk'): string {
  const path = `/usr/bin/${program}`;
  if (!existsSync(path)) throw new Error(`${program} is not installed: run scripts/install-peers`);
  return path;
}

/** What `npm test`'s setup does about missing peers: install them, or say why not (their tests then fail, or skip, naming the command). */
export interface PeerPlan {
  install: boolean;
  line: string;
}

/**
 * The setup installs missing peers only where scripts/install-peers can
 * without asking anyone: as root (sudo could prompt for a password in the
 * middle of a test run) with Debian's apt-get. `missing` is what
 * `install-peers --missing` printed.
 */
export function peerPlan(missing: string[], root: boolean, apt: boolean): PeerPlan | undefined {
  if (missing.length === 0) return undefined;
  const what = missing.join(', ');
  if (root && apt) return { install: true, line: `peers: installing ${what} (scripts/install-peers, with apt-get as root)` };
  const why = root ? 'there is no apt-get here' : 'not root';
  return { install: false, line: `peers: ${what} missing and not installed (${why}): the tests that need them fail; run scripts/install-peers as root` };
}

/** Where the setup looks, who it runs as, and where it writes: the test of the install gives it a PATH of fakes. */
export interface PeerHost {
  env: NodeJS.ProcessEnv;
  root: boolean;
  write(text: string): void;
}

const THIS_HOST: PeerHost = { env: process.env, root: process.getuid?.() === 0, write: (text) => process.stdout.write(text) };

function missingPeers({ env }: PeerHost): Promise<string[]> {
  return new Promise((resolve, reject) => {
    execFile('bash', [INSTALL_PEERS, '--missing'], { env }, (err, stdout, stderr) =>
      err ? reject(new Error(`scripts/install-peers --missing failed: ${stderr || err.message}`)) : resolve(stdout.split(/\s+/).filter((w) => w !== '')),
    );
  });
}

function hasAptGet({ env }: PeerHost): boolean {
  return (env.PATH ?? '').split(':').some((dir) => dir !== '' && existsSync(join(dir, 'apt-get')));
}

/**
 * Before the first test (mocha's global setup, from setup.ts): installs the
 * peers that are missing with scripts/install-peers, when it may (peerPlan).
 * Nothing is printed when every peer is there. An install that fails does
 * not stop the run: the tests whose peer is missing fail saying so.
 */
export async function installMissingPeers(host: PeerHost = THIS_HOST): Promise<void> {
  let missing: string[];
  try {
    missing = await missingPeers(host);
  } catch (err) {
    host.write(`peers: ${(err as Error).message}\n`);
    return;
  }
  const plan = peerPlan(missing, host.root, hasAptGet(host));
  if (!plan) return;
  host.write(`${plan.line}\n`);
  if (!plan.install) return;
  const code = await new Promise<number | null>((resolve) => {
    const child = spawn('bash', [INSTALL_PEERS], { env: host.env, stdio: ['ignore', 'pipe', 'pipe'] });
    child.stdout.on('data', (d: Buffer) => host.write(d.toString()));
    child.stderr.on('data', (d: Buffer) => host.write(d.toString()));
    child.on('error', () => resolve(null));
    child.on('close', resolve);
  });
  if (code !== 0) host.write(`peers: scripts/install-peers failed (exit ${code}): see its output above; the tests that need a missing peer fail\n`);
}
