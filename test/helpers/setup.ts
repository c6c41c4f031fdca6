/**
 * Loaded by mocha before every test file. Under CI the property-based tests
 * run with a fixed seed, so a run is reproducible and a landing never hinges
 * on a lucky draw; locally each run draws a fresh seed and keeps hunting.
 *
 * Its global fixtures, before the first test, install the test peers that
 * are missing (as root, with apt-get: scripts/install-peers) and start the
 * servers of scripts/services that are down (EDDY_SERVICES=none or a list
 * opts out); after mocha's own summary, they name the connectors whose tests
 * were skipped because their server was not there, and why.
 */
import fc from 'fast-check';
import { installMissingPeers } from './peers';
import { serviceAddress, skippedSummary, startMissingServices } from './services';

if (process.env.CI) fc.configureGlobal({ seed: 20261121 });
process.env.EDDY_LOG ??= 'silent';
// Google's client libraries talk to the Pub/Sub fake of scripts/services (never to Google), and the
// auth library never probes a cloud metadata server: no test, example or child process leaves loopback.
process.env.PUBSUB_EMULATOR_HOST ??= `${serviceAddress('pubsub').host}:${serviceAddress('pubsub').port}`;
process.env.METADATA_SERVER_DETECTION ??= 'none';

export async function mochaGlobalSetup(): Promise<void> {
  // at once: where both install with apt-get, a shared lock serialises them (scripts/install-peers, services.d/_lib.sh)
  await Promise.all([installMissingPeers(), startMissingServices()]);
}

export function mochaGlobalTeardown(): void {
  const lines = skippedSummary();
  if (lines.length > 0) console.log(`\n${lines.join('\n')}\n`);
}
