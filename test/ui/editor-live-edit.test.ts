import { expect } from 'chai';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { browserSession } from './browser';
import { addNode, field, json, mapEntry, select, wire } from './editor-steps';

/** One window's output: its bounds (window_fields) and the metronome ids it holds. */
interface Windowed {
  start: number;
  end: number;
  n: number;
  ids: number[];
}

const windowsIn = (file: string): Windowed[] =>
  existsSync(file)
    ? readFileSync(file, 'utf8')
        .split('\n')
        .filter(Boolean)
        .map((l) => JSON.parse(l) as Windowed)
    : [];

/** The windows in `file` once one of them satisfies `wanted` (a positive signal, polled for). */
async function windowsOnce(file: string, wanted: (w: Windowed) => boolean): Promise<Windowed[]> {
  for (;;) {
    const windows = windowsIn(file);
    if (windows.some(wanted)) return windows;
    await new Promise((r) => setTimeout(r, 50));
  }
}

interface Status {
  instances: { url: string; state: string; ports: { port: string; direction: string; events: number }[] }[];
}

/** The onramp instance's state and the events it sent on `out` since it started, from GET /status. */
async function onrampOut(base: string, url: string): Promise<{ state: string; events: number }> {
  const { body } = await json(base, '/status');
  const instance = (body as unknown as Status).instances.find((i) => i.url === url);
  if (!instance) throw new Error(`${url} is not in /status`);
  return { state: instance.state, events: instance.ports.find((p) => p.port === 'out' && p.direction === 'out')?.events ?? 0 };
}

describe('the flow editor edits a running flow in place, in headless chromium', function () {
  this.timeout(60_000);
  const ui = browserSession('eddy-live-edit-', { viewport: { width: 1400, height: 900 } });

  it('changes the window size of a running metronome → window::aggregate → file flow by clicks and typing: the pipeline is swapped in place, the onramp keeps running, every tick is in the file exactly once', async () => {
    const { page } = ui.browser;
    const output = join(ui.dir, 'windows.jsonl');
    await page.goto(`${ui.server.base}/ui/#editor`);
    await page.fill('#flow-name', 'beats');
    await page.press('#flow-name', 'Enter');
    await addNode(page, 'onramp', 'metronome', 'beat');
    await field(page, 'interval', '20ms');
    await addNode(page, 'operator', 'window::aggregate', 'win');
    await field(page, 'window.size', '300ms');
    await mapEntry(page, 'aggregate', 'n', 'count()');
    await mapEntry(page, 'aggregate', 'ids', 'collect(event.id, 100000)');
    await field(page, 'window_fields.start', 'start');
    await field(page, 'window_fields.end', 'end');
    await page.locator('#canvas g.enode[data-id="win"]:not(.invalid)').waitFor();
    await addNode(page, 'offramp', 'file', 'out');
    await field(page, 'file', output);
    await wire(page, 'beat', 'out', 'win');
    await wire(page, 'win', 'out', 'out');

    // a flow not deployed yet: the plan publishes and activates, replaces nothing
    await page.click('#ed-deploy');
    await page.locator('#inspector dd[data-plan="activated"]', { hasText: '/binding/beats/main' }).waitFor();
    expect(await page.locator('#inspector dd[data-plan="replaced"]').innerText()).to.equal('nothing');
    await page.click('#deploy-apply');
    await page.locator('#inspector .deploy-ok').waitFor();
    await windowsOnce(output, (w) => w.end - w.start === 300);
    const before = await onrampOut(ui.server.base, '/onramp/beat/main');

    // the window made 1 s long in the node's form: the plan swaps the pipeline, restarts nothing
    await select(page, 'win');
    await field(page, 'window.size', '1s');
    await page.click('#ed-deploy');
    await page.locator('#inspector dd[data-plan="swapped"]', { hasText: '/pipeline/beats/main' }).waitFor();
    expect(await page.locator('#inspector dd[data-plan="replaced"]').innerText()).to.equal('pipeline beats');
    expect(await page.locator('#inspector dd[data-plan="restarted"]').innerText()).to.equal('nothing');
    expect(await page.locator('#inspector dd[data-plan="published"]').innerText()).to.equal('nothing');
    expect(await page.locator('#inspector dd[data-plan="running"]').innerText()).to.equal('/binding/beats/main');
    await page.click('#deploy-apply');
    const said = await page.locator('#inspector .deploy-ok').innerText();
    expect(said).to.include('swapped in place /pipeline/beats/main').and.not.include('restarted');

    // the new window size's output arrives; the onramp ran on: running, its count going on from before
    await windowsOnce(output, (w) => w.end - w.start === 1000);
    const after = await onrampOut(ui.server.base, '/onramp/beat/main');
    expect(after.state).to.equal('running');
    expect(after.events).to.be.greaterThan(before.events);

    // stopped (the test's own teardown, over the API): every tick counted is in the file exactly once
    await fetch(`${ui.server.base}/binding/beats/main`, { method: 'DELETE' });
    const windows = windowsIn(output);
    const ids = windows.flatMap((w) => w.ids);
    expect(windows.every((w) => w.n === w.ids.length)).to.equal(true);
    expect([...ids].sort((a, b) => a - b)).to.deep.equal(ids.map((_, i) => i)); // 0, 1, 2, …: no gap, no repeat, never from 0 again
    expect(ids.length).to.be.at.least(after.events);
    // windows of both sizes, the old ones first
    const sizes = windows.map((w) => w.end - w.start);
    expect(sizes.slice(0, sizes.indexOf(1000))).to.satisfy((old: number[]) => old.length > 0 && old.every((s) => s === 300));
    expect(sizes.slice(sizes.indexOf(1000)).every((s) => s === 1000)).to.equal(true);
    expect(ui.browser.problems).to.deep.equal([]);
  });
});
