import { expect } from 'chai';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { browserSession } from './browser';
import { addNode, deploy, field, json, mapEntry, select, wire } from './editor-steps';

/** The lines of the output file once it has two (the window closes 5 s after its first event). */
async function countsIn(file: string): Promise<{ key: string; n: number }[]> {
  for (;;) {
    const lines = existsSync(file) ? readFileSync(file, 'utf8').split('\n').filter(Boolean) : [];
    if (lines.length >= 2) return lines.map((l) => JSON.parse(l) as { key: string; n: number });
    await new Promise((r) => setTimeout(r, 100));
  }
}

describe('the flow editor at /ui/#editor, in headless chromium', function () {
  this.timeout(60_000);
  const ui = browserSession('eddy-editor-', { viewport: { width: 1400, height: 900 } });

  it('builds file → window::aggregate (5 s tumbling, group by a field, count()) → file by clicks and typing, deploys it, and the output file receives the counts', async () => {
    const { page } = ui.browser;
    const input = join(ui.dir, 'in.jsonl');
    const output = join(ui.dir, 'counts.jsonl');
    writeFileSync(input, ['a', 'b', 'a', 'a', 'b'].map((key) => JSON.stringify({ key })).join('\n') + '\n');
    await page.goto(`${ui.server.base}/ui/#editor`);
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
    expect(ui.browser.problems).to.deep.equal([]);
  });

  it('marks a bad duration and a CEL syntax error on their fields and node as they are typed; a deploy the API refuses changes nothing on the server', async () => {
    const { page } = ui.browser;
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

    // a refusal replace keeps: the onramp changed, but an instance the canvas does not declare runs it
    // (set up over the REST API: another instance of the deployed binding)
    expect((await fetch(`${ui.server.base}/binding/flow/spare`, { method: 'POST', headers: { accept: 'application/json' } })).status).to.equal(201);
    const onServer = () => Promise.all(['/onramp/lines', '/offramp/counts', '/pipeline/flow', '/binding/flow', '/binding/flow/main', '/binding/flow/spare'].map((p) => json(ui.server.base, p)));
    const before = await onServer();
    await select(page, 'lines');
    await field(page, 'source', join(ui.dir, 'other.jsonl'));
    await page.click('#ed-deploy');
    await page.locator('#inspector .deploy-error[data-node="lines"]', { hasText: '/onramp/lines/spare runs it' }).waitFor();
    expect(await page.locator('#inspector h2').innerText()).to.equal('Deploy refused: nothing changed');
    expect(await onServer()).to.deep.equal(before);
    // not the node's config: it is named, not marked, so it deploys once that instance is gone
    expect(await page.locator('#canvas g.enode.invalid[data-id="lines"]').count()).to.equal(0);
    expect((await fetch(`${ui.server.base}/binding/flow/spare`, { method: 'DELETE' })).status).to.equal(200);
    // undo puts the config back
    await page.locator('#canvas').focus();
    await page.keyboard.press('Control+z');
    await select(page, 'lines');
    expect(await page.inputValue('#inspector [data-path="source"]')).to.equal(join(ui.dir, 'in.jsonl'));
    // the canvas as deployed: the plan changes nothing
    await page.click('#ed-deploy');
    await page.locator('#inspector p.muted', { hasText: 'the server runs this flow already, the same' }).waitFor();
    expect(await page.locator('#inspector dd[data-plan="running"]').innerText()).to.equal('/binding/flow/main');
    expect(ui.browser.problems).to.deep.equal([]);
  });

  it('shows each wire’s events/s and each node’s counts while events flow, and taps a wire in the side bar', async () => {
    const { page } = ui.browser;
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
    await fetch(`${ui.server.base}/binding/ticking/main`, { method: 'DELETE' });
    expect(ui.browser.problems).to.deep.equal([]);
  });
});
