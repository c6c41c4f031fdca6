import { expect } from 'chai';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { serve, type Served } from '../cli/status-flow';
import { openBrowser, requireChromium, type Headless } from './browser';

type Page = Headless['page'];

/** Adds a type from the palette with its + button and gives the node `id` through its form. */
async function addNode(page: Page, kind: string, type: string, id: string): Promise<void> {
  await page.locator(`#palette li[data-kind="${kind}"][data-type="${type}"] button.add`).click();
  await page.fill('#node-id', id);
  await page.press('#node-id', 'Enter');
  await page.locator(`#canvas g.enode[data-id="${id}"]`).waitFor();
}

/** Selects a node by clicking its title. */
async function select(page: Page, id: string): Promise<void> {
  await page.locator(`#canvas g.enode[data-id="${id}"] text.title`).click();
  await page.locator('#node-id').and(page.locator(`[value="${id}"]`)).waitFor();
}

/** Drags from an output port of `from` to the input port of `to`, with the mouse. */
async function wire(page: Page, from: string, port: string, to: string): Promise<void> {
  const a = (await page.locator(`#canvas g.enode[data-id="${from}"] circle.port.out[data-port="${port}"]`).boundingBox())!;
  const b = (await page.locator(`#canvas g.enode[data-id="${to}"] circle.port.in`).boundingBox())!;
  await page.mouse.move(a.x + a.width / 2, a.y + a.height / 2);
  await page.mouse.down();
  await page.mouse.move((a.x + b.x) / 2, (a.y + b.y) / 2, { steps: 4 });
  await page.mouse.move(b.x + b.width / 2, b.y + b.height / 2, { steps: 4 });
  await page.mouse.up();
  await page.locator(`#canvas g.wire[data-from="${from}"][data-port="${port}"][data-to="${to}"]`).waitFor();
}

/** Types into the field of the selected node's form at `path` (`window.size`), and leaves it. */
async function field(page: Page, path: string, value: string): Promise<void> {
  const input = page.locator(`#inspector [data-path="${path}"]`).first();
  await input.fill(value);
  await input.press('Tab');
}

/** Fills the first empty row of a map field (`aggregate`). */
async function mapEntry(page: Page, path: string, key: string, value: string): Promise<void> {
  const row = page.locator(`#inspector .field.map[data-path="${path}"] .map-row`).last();
  await row.locator('input.map-key').fill(key);
  await row.locator('input.map-value').fill(value);
  await row.locator('input.map-value').press('Tab');
}

async function deploy(page: Page): Promise<void> {
  await page.click('#ed-deploy');
  await page.locator('#deploy-apply').click({ timeout: 5000 }).catch(async (err: Error) => {
    throw new Error(`${err.message}\nthe side panel said: ${await page.locator('#inspector').innerText()}`);
  });
  await page.locator('#inspector .deploy-ok').waitFor();
}

/** The lines of the output file once it has two (the window closes 5 s after its first event). */
async function countsIn(file: string): Promise<{ key: string; n: number }[]> {
  for (;;) {
    const lines = existsSync(file) ? readFileSync(file, 'utf8').split('\n').filter(Boolean) : [];
    if (lines.length >= 2) return lines.map((l) => JSON.parse(l) as { key: string; n: number });
    await new Promise((r) => setTimeout(r, 100));
  }
}

async function json(base: string, path: string): Promise<{ status: number; body: Record<string, unknown> }> {
  const res = await fetch(`${base}${path}`, { headers: { accept: 'application/json' } });
  return { status: res.status, body: (await res.json()) as Record<string, unknown> };
}

describe('the flow editor at /ui/#editor, in headless chromium', function () {
  this.timeout(60_000);
  let server: Served;
  let browser: Headless;
  let dir: string;

  before(async function () {
    requireChromium(this);
    server = await serve();
    browser = await openBrowser(server.base, { width: 1400, height: 900 });
    dir = mkdtempSync(join(tmpdir(), 'eddy-editor-'));
  });

  after(async () => {
    await browser?.close();
    await server?.stop();
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  it('builds file → window::aggregate (5 s tumbling, group by a field, count()) → file by clicks and typing, deploys it, and the output file receives the counts', async () => {
    const { page } = browser;
    const input = join(dir, 'in.jsonl');
    const output = join(dir, 'counts.jsonl');
    writeFileSync(input, ['a', 'b', 'a', 'a', 'b'].map((key) => JSON.stringify({ key })).join('\n') + '\n');
    await page.goto(`${server.base}/ui/#editor`);
    // the palette lists the registries' types with their descriptions
    const entry = page.locator('#palette li[data-kind="onramp"][data-type="file"]');
    expect(await entry.innerText()).to.include('Reads a file');
    // dragged onto the canvas
    await entry.dragTo(page.locator('#canvas'), { targetPosition: { x: 120, y: 120 } });
    await page.locator('#canvas g.enode[data-id="file"]').waitFor();
    await page.fill('#node-id', 'lines');
    await page.press('#node-id', 'Enter');
    await page.locator('#canvas g.enode[data-id="lines"]').waitFor();
    await field(page, 'source', input);

    await addNode(page, 'operator', 'window::aggregate', 'per_key');
    // no window yet, no aggregate: the node is marked before anything is deployed
    await page.locator('#canvas g.enode.invalid[data-id="per_key"]').waitFor();
    await field(page, 'window.size', '5s');
    await mapEntry(page, 'group_by', 'key', 'event.key');
    await mapEntry(page, 'aggregate', 'n', 'count()');
    await page.locator('#canvas g.enode[data-id="per_key"]:not(.invalid)').waitFor();
    // the ports follow from the type and config
    for (const port of ['out', 'late', 'overflow', 'err']) await page.locator(`#canvas g.enode[data-id="per_key"] circle.port.out[data-port="${port}"]`).waitFor();

    await addNode(page, 'offramp', 'file', 'counts');
    await field(page, 'file', output);

    // an onramp straight to an offramp is refused, saying why
    await wire(page, 'lines', 'out', 'per_key');
    const a = (await page.locator('#canvas g.enode[data-id="lines"] circle.port.out[data-port="out"]').boundingBox())!;
    const b = (await page.locator('#canvas g.enode[data-id="counts"] circle.port.in').boundingBox())!;
    await page.mouse.move(a.x + 3, a.y + 3);
    await page.mouse.down();
    await page.mouse.move(b.x + 3, b.y + 3, { steps: 5 });
    await page.mouse.up();
    await page.locator('#ed-message', { hasText: 'a pipeline goes between them' }).waitFor();
    await wire(page, 'per_key', 'out', 'counts');

    // the dry run says what will change, then Apply
    await page.click('#ed-deploy');
    expect(await page.locator('#inspector dd[data-plan="published"]').innerText()).to.include('pipeline flow').and.include('onramp lines').and.include('offramp counts');
    expect(await page.locator('#inspector dd[data-plan="activated"]').innerText()).to.equal('/binding/flow/main');
    await page.click('#deploy-apply');
    await page.locator('#inspector .deploy-ok').waitFor();
    // the window closes after 5 s: wait for the counts to arrive
    const counts = await countsIn(output);
    expect(counts.map((c) => [c.key, c.n]).sort()).to.deep.equal([
      ['a', 3],
      ['b', 2],
    ]);
    expect(browser.problems).to.deep.equal([]);
  });

  it('marks a bad duration and a CEL syntax error on their fields and node as they are typed; a deploy the API refuses changes nothing on the server', async () => {
    const { page } = browser;
    await select(page, 'per_key');
    await page.locator('#inspector [data-path="window.size"]').fill('5x');
    await page.locator('#inspector [data-path="window.size"] ~ .field-msg', { hasText: 'a duration' }).waitFor();
    await page.locator('#canvas g.enode.invalid[data-id="per_key"]').waitFor();
    await field(page, 'window.size', '5s');
    await page.locator('#canvas g.enode[data-id="per_key"]:not(.invalid)').waitFor();
    await page.locator('#inspector [data-path="where"]').fill('event.key ==');
    await page.locator('#canvas g.enode.invalid[data-id="per_key"]').waitFor();
    expect(await page.locator('#inspector [data-path="where"] ~ .field-msg').innerText()).to.include('expecting end of input');
    await field(page, 'where', '');
    await page.locator('#canvas g.enode[data-id="per_key"]:not(.invalid)').waitFor();

    // the running onramp changed: the API refuses (it differs from the one deployed), its node is marked
    const before = await json(server.base, '/onramp/lines');
    await select(page, 'lines');
    await field(page, 'source', join(dir, 'other.jsonl'));
    await page.click('#ed-deploy');
    await page.locator('#inspector .deploy-error[data-node="lines"]', { hasText: 'differs' }).waitFor();
    await page.locator('#canvas g.enode.invalid[data-id="lines"]').waitFor();
    expect(await json(server.base, '/onramp/lines')).to.deep.equal(before);
    // undo puts the config back
    await page.locator('#canvas').focus();
    await page.keyboard.press('Control+z');
    await page.locator('#canvas g.enode[data-id="lines"]:not(.invalid)').waitFor();
    await select(page, 'lines');
    expect(await page.inputValue('#inspector [data-path="source"]')).to.equal(join(dir, 'in.jsonl'));
    expect(browser.problems).to.deep.equal([]);
  });

  it('shows each wire’s events/s and each node’s counts while events flow, and taps a wire in the side bar', async () => {
    const { page } = browser;
    await page.reload(); // an empty canvas
    await page.fill('#flow-name', 'ticking');
    await page.press('#flow-name', 'Enter');
    await addNode(page, 'onramp', 'metronome', 'beat');
    await field(page, 'interval', '20');
    await addNode(page, 'operator', 'passthrough', 'pass');
    await addNode(page, 'offramp', 'blackhole', 'hole');
    // wired from the keyboard this time: the form's Wire fieldset
    await select(page, 'beat');
    await page.selectOption('#wire-target', 'pass');
    await page.click('#wire-connect');
    await select(page, 'pass');
    await page.selectOption('#wire-target', 'hole');
    await page.click('#wire-connect');
    await page.locator('#canvas g.wire[data-from="pass"][data-to="hole"]').waitFor();
    await deploy(page);

    await page.waitForFunction(() => {
      const text = (globalThis as unknown as { document: { querySelector(s: string): { textContent: string } | null } }).document.querySelector(
        '#canvas g.wire[data-from="beat"] text.wire-rate',
      );
      return text !== null && parseFloat(text.textContent) > 0;
    });
    const count = () => page.locator('#canvas g.enode[data-id="pass"]').getAttribute('data-count');
    const first = Number((await count())!.replace(/\D/g, ''));
    await page.waitForFunction(
      (n) =>
        Number(
          (globalThis as unknown as { document: { querySelector(s: string): { getAttribute(a: string): string } | null } }).document
            .querySelector('#canvas g.enode[data-id="pass"]')
            ?.getAttribute('data-count')
            ?.replace(/\D/g, ''),
        ) > n,
      first,
    );
    await page.locator('#canvas g.enode.running[data-id="beat"]').waitFor();

    await page.locator('#canvas g.wire[data-from="beat"] path.hit').click({ force: true });
    await page.locator('#inspector .tap-list li.event').nth(2).waitFor();
    expect(JSON.parse(await page.locator('#inspector .tap-list li.event').first().innerText())).to.have.property('onramp', 'metronome');
    await page.click('#inspector .tap-stop');
    await page.locator('#inspector .tap-state', { hasText: 'stopped' }).waitFor();
    await fetch(`${server.base}/binding/ticking/main`, { method: 'DELETE' });
    expect(browser.problems).to.deep.equal([]);
  });
});
