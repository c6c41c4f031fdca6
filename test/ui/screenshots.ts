/**
 * `npm run screenshots`: one PNG per view of the web console, into
 * docs/ui/, from a runtime with a small flow running (metronome → counting
 * pipeline → file) and one whose tcp offramp is down. Not a test: the README
 * embeds what it writes.
 */
import { mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { bindThroughPassthrough, serve } from '../cli/status-flow';
import { freePort } from '../connectors/net-helpers';
import { ROOT } from '../helpers/readme';
import { openBrowser } from './browser';

const OUT = join(ROOT, 'docs/ui');

const PIPELINE = `id: counted
interface:
  inputs: [in]
  outputs: [out]
nodes:
  - id: count
    type: generic::counter
  - id: batch
    type: generic::batch
    config:
      count: 5
links:
  in: [count]
  count: [batch]
  batch: [out]
`;

async function main(): Promise<void> {
  mkdirSync(OUT, { recursive: true });
  const dir = mkdtempSync(join(tmpdir(), 'eddy-shots-'));
  const served = await serve();
  const { runtime } = served;
  runtime.publish('onramp', { id: 'ticker', type: 'metronome', config: { interval: 100 } });
  runtime.publish('pipeline', (await import('yaml')).parse(PIPELINE));
  runtime.publish('offramp', { id: 'archive', type: 'file', codec: 'json', config: { file: join(dir, 'out.jsonl') } });
  runtime.publish('binding', {
    id: 'ticks',
    links: { '/onramp/ticker/{instance}/out': ['/pipeline/counted/{instance}/in'], '/pipeline/counted/{instance}/out': ['/offramp/archive/{instance}/in'] },
  });
  await runtime.activate('binding', 'ticks', 'main', { instance: 'main' });
  // and a flow whose sink is down (a tcp peer that does not listen), for the graph's states
  runtime.publish('onramp', { id: 'beacon', type: 'metronome', config: { interval: 100 } });
  runtime.publish('offramp', { id: 'forward', type: 'tcp', config: { host: '127.0.0.1', port: await freePort() } });
  await bindThroughPassthrough(runtime, 'relay', 'beacon', 'forward', 'main');
  const browser = await openBrowser(served.base, { width: 1280, height: 760 });
  const { page } = browser;
  try {
    const shot = async (name: string) => {
      await page.screenshot({ path: join(OUT, `${name}.png`) });
      process.stdout.write(`docs/ui/${name}.png\n`);
    };
    await page.goto(`${served.base}/ui/#artefacts`);
    await page.locator('#artefact-lists [data-kind=pipeline] button', { hasText: 'counted' }).click();
    await page.locator('#artefact-detail', { hasText: 'instances: main' }).waitFor();
    await page.fill('#publish-text', PIPELINE.replace('id: counted', 'id: typo').replace('generic::batch', 'generic::bacth'));
    await page.click('#publish button[type=submit]');
    await page.locator('#publish-error').waitFor();
    await shot('artefacts');

    await page.click('nav a[data-view=instances]');
    // two polls apart, so every port has a rate
    await page.waitForFunction(() => {
      const cell = (globalThis as unknown as { document: { querySelector(s: string): { textContent: string } | null } }).document.querySelector(
        '#instances tr[data-url="/onramp/ticker/main"][data-port=out] td.rate',
      );
      return cell !== null && Number(cell.textContent) > 0;
    });
    await shot('instances');

    await page.click('nav a[data-view=graph]');
    await page.locator('#binding-graph g.node.down[data-id="/offramp/forward/main"]').waitFor();
    await page.waitForFunction(() => {
      const label = (globalThis as unknown as { document: { querySelector(s: string): { textContent: string } | null } }).document.querySelector(
        '#binding-graph text.rate[data-from="/onramp/ticker/main"]',
      );
      return label !== null && parseFloat(label.textContent) > 0;
    });
    await page.click('#binding-graph g.node[data-id="/pipeline/counted/main"]');
    await page.locator('#pipeline-graph g.node[data-id="batch"]').waitFor();
    await shot('graph');

    await page.click('nav a[data-view=instances]');
    await page.locator('#instances tr[data-url="/pipeline/counted/main"][data-port=in] button.tap').click();
    await page.locator('#tap-events li.event').nth(9).waitFor();
    await page.click('#tap-stop');
    await shot('tap');
  } finally {
    await browser.close();
    await served.stop();
    rmSync(dir, { recursive: true, force: true });
  }
}

main().catch((err) => {
  process.stderr.write(`screenshots failed: ${(err as Error).stack ?? err}\n`);
  process.exit(1);
});
