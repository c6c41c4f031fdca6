/**
 * `npm run screenshots`: one PNG per view of the web console, into
 * docs/ui/, from a runtime with a small flow running (metronome → counting
 * pipeline → file) and one whose tcp offramp is down; then the editor's
 * views (a file opened onto the canvas, a node's form with a marked error,
 * the deploy plan, a running flow's rates with its tap side bar), and the
 * editor's time to interactive: navigation start to a palette one can pick
 * from, in fresh loads (docs/console.md). Not a test: the docs embed what
 * it writes.
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

    await editorShots(page, shot);
    await timeToInteractive(page, served.base);
  } finally {
    await browser.close();
    await served.stop();
    rmSync(dir, { recursive: true, force: true });
  }
}

type Page = Awaited<ReturnType<typeof openBrowser>>['page'];

async function editorShots(page: Page, shot: (name: string) => Promise<void>): Promise<void> {
  await page.click('nav a[data-view=editor]');
  await page.locator('#palette li').first().waitFor();
  // a config file opened: examples/elastic.yaml, three pipelines and a linked offramp on one canvas
  await page.setInputFiles('#ed-open-file', join(ROOT, 'examples/elastic.yaml'));
  await page.locator('#ed-message', { hasText: 'opened books' }).waitFor();
  await shot('editor');

  // a node's form: a batch of 0 events, marked on the field and on the node
  await page.locator('#canvas g.enode[data-id="batch"] text.title').click();
  await page.locator('#inspector [data-path="count"]').first().fill('0');
  await page.locator('#canvas g.enode.invalid[data-id="batch"]').waitFor();
  await shot('editor-form');

  // the deploy plan of a new flow beside the running ones
  await page.setInputFiles('#ed-open-file', {
    name: 'beat.yaml',
    mimeType: 'application/yaml',
    buffer: Buffer.from(
      'onramp: [{ id: beat, type: metronome, config: { interval: 250 } }]\nofframp: [{ id: sink, type: blackhole }]\npipeline: [{ id: beat, nodes: [{ id: pass, type: passthrough }] }]\nflow: [{ id: beat, from: beat, via: beat, to: sink }]\n',
    ),
  });
  await page.locator('#ed-message', { hasText: 'opened beat' }).waitFor();
  await page.click('#ed-deploy');
  await page.locator('#deploy-apply').waitFor();
  await shot('editor-deploy');

  // the running flow ticks → counted → archive: rates on its wires, counts on its nodes, its input tapped
  await page.click('#ed-open-running');
  await page.selectOption('#running-flow', 'ticks');
  await page.click('#running-open');
  await page.locator('#ed-message', { hasText: 'opened counted' }).waitFor();
  await page.locator('#canvas g.wire[data-from="ticker"] text.wire-rate', { hasText: 'ev/s' }).waitFor();
  await page.locator('#canvas g.wire[data-from="ticker"] path.hit').click({ force: true });
  await page.fill('#tap-filter', 'event.id % 2 == 0');
  await page.press('#tap-filter', 'Enter');
  await page.locator('#inspector .tap-list li').nth(5).waitFor();
  await shot('editor-live');
}

/** Fresh loads of /ui/#editor: navigation start to the palette populated (its data-ready-ms), printed. */
async function timeToInteractive(page: Page, base: string): Promise<void> {
  const times: number[] = [];
  for (let i = 0; i < 5; i++) {
    await page.goto('about:blank');
    await page.goto(`${base}/ui/#editor`);
    times.push(Number(await page.locator('#palette[data-ready-ms]').getAttribute('data-ready-ms')));
  }
  times.sort((a, b) => a - b);
  process.stdout.write(`editor time to interactive (navigation start → palette populated), 5 loads: ${times.join(', ')} ms; median ${times[2]} ms\n`);
}

main().catch((err: unknown) => {
  process.stderr.write(`screenshots failed: ${err instanceof Error ? (err.stack ?? err.message) : String(err)}\n`);
  process.exit(1);
});
