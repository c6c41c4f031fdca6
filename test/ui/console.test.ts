import { expect } from 'chai';
import { join } from 'node:path';
import { freePort } from '../connectors/net-helpers';
import { bindThroughPassthrough } from '../cli/status-flow';
import { browserSession, type Headless } from './browser';

// the page's document, in functions playwright runs in the browser (the tests compile without the DOM lib)
declare const document: { querySelector(selector: string): { textContent: string | null } | null };

const PIPELINE_YAML = `id: ticks
interface:
  inputs: [in]
  outputs: [out]
nodes:
  - id: forward
    type: passthrough
links:
  in: [forward]
  forward: [out]
`;

const BAD_PIPELINE_YAML = PIPELINE_YAML.replace('type: passthrough', 'type: nope').replace('id: ticks', 'id: bad');

async function publish(page: Headless['page'], kind: string, text: string): Promise<void> {
  await page.selectOption('#publish-kind', kind);
  await page.fill('#publish-text', text);
  await page.click('#publish button[type=submit]');
  const ok = page.locator('#publish-ok', { hasText: `published ${kind}` });
  await ok.waitFor();
  // the artefact panel shows the new artefact only after the lists reload: until then it still shows
  // the one before, and its Activate button would activate that one (CI once activated the onramp
  // published before a binding instead of the binding, and the binding's instances never came)
  const id = (await ok.innerText()).slice(`published ${kind} `.length);
  await page.locator('#artefact-detail h2', { hasText: `${kind} ${id}` }).waitFor();
}

/** The number in the cell `column` of the row of an instance's port. */
function cellNumber(page: Headless['page'], url: string, direction: string, port: string, column: 'rate' | 'total'): Promise<number> {
  return page.locator(`#instances tr[data-url="${url}"][data-direction="${direction}"][data-port="${port}"] td.${column}`).innerText().then(Number);
}

/**
 * What the console shows (banner, server line, note, the instance rows), for
 * the message of a step that failed: a locator's timeout alone does not say
 * whether the page had stopped polling, showed an error or lacked a row.
 */
async function consoleState(page: Headless['page'], problems: string[]): Promise<string> {
  const text = (selector: string) => page.locator(selector).first().innerText({ timeout: 1000 }).catch(() => '(none)');
  const rows = await page
    .locator('#instances tbody tr')
    .evaluateAll((trs) => trs.map((tr) => `${tr.getAttribute('data-url')}#${tr.getAttribute('data-port')}`))
    .catch(() => []);
  return [`banner: ${await text('#banner')}`, `server: ${await text('#server')}`, `note: ${await text('#status-note')}`, `rows: ${rows.join(' ') || '(none)'}`, `problems: ${problems.join('; ') || '(none)'}`].join('\n');
}

/** Runs a step; when it fails, its error also says what the console showed. */
async function explained<T>(step: Promise<T>, page: Headless['page'], problems: string[]): Promise<T> {
  try {
    return await step;
  } catch (err) {
    throw new Error(`${(err as Error).message}\nthe console showed:\n${await consoleState(page, problems)}`);
  }
}

describe('web console at /ui, in headless chromium', function () {
  this.timeout(30_000);
  const ui = browserSession('eddy-ui-');

  it('is served by the API with a policy that allows nothing beyond it, and loads no other origin', async () => {
    const res = await fetch(`${ui.server.base}/ui/`);
    expect(res.status).to.equal(200);
    expect(res.headers.get('content-security-policy')).to.include("connect-src 'self'");
    await ui.browser.page.goto(`${ui.server.base}/ui/`);
    await ui.browser.page.locator('#artefact-lists [data-kind=pipeline] button', { hasText: 'system::passthrough' }).waitFor();
    expect(ui.browser.problems).to.deep.equal([]);
  });

  it("shows the API's validation error next to the field it names", async () => {
    const { page } = ui.browser;
    await page.selectOption('#publish-kind', 'pipeline');
    await page.fill('#publish-text', BAD_PIPELINE_YAML);
    await page.click('#publish button[type=submit]');
    const error = page.locator('#publish-error');
    await error.waitFor();
    expect(await error.getAttribute('data-field')).to.equal('nodes[0].type');
    // line 7 of the pasted text is `    type: nope`; the gutter marks it
    expect(await error.getAttribute('data-line')).to.equal('7');
    expect(await error.innerText()).to.include("unknown operator 'nope'");
    expect(await page.locator('#publish-gutter .bad').innerText()).to.equal('▶7');
    // fixing the text clears the mark
    await page.fill('#publish-text', PIPELINE_YAML.replace('id: ticks', 'id: fixed'));
    expect(await error.isHidden()).to.equal(true);
  });

  it('publishes a flow, activates it, shows rates moving and tapped events, draws the graphs, deactivates', async () => {
    const { page } = ui.browser;
    const out = join(ui.dir, 'out.jsonl');
    // YAML and JSON pasted alike
    await publish(page, 'onramp', 'id: ticker\ntype: metronome\nconfig:\n  interval: 20\n');
    await publish(page, 'pipeline', PIPELINE_YAML);
    await publish(page, 'offramp', JSON.stringify({ id: 'sink', type: 'file', codec: 'json', config: { file: out } }));
    await publish(
      page,
      'binding',
      JSON.stringify({
        id: 'flow',
        links: { '/onramp/ticker/{instance}/out': ['/pipeline/ticks/{instance}/in'], '/pipeline/ticks/{instance}/out': ['/offramp/sink/{instance}/in'] },
      }),
    );
    await page.locator('#artefact-lists [data-kind=binding] button', { hasText: 'flow' }).waitFor();

    await page.click('nav a[data-view=instances]');
    await page.selectOption('#activate-kind', 'binding');
    await page.selectOption('#activate-artefact', 'flow');
    await page.fill('#activate-instance', 'main');
    await page.click('#activate button[type=submit]');
    const onrampOut = page.locator('#instances tr[data-url="/onramp/ticker/main"][data-port=out]');
    await onrampOut.waitFor();
    // rates: a positive events/s, and the total keeps growing between polls
    await page.waitForFunction(() => {
      const cell = document.querySelector('#instances tr[data-url="/pipeline/ticks/main"][data-port=out] td.rate');
      return cell !== null && Number(cell.textContent) > 0;
    });
    const total = await cellNumber(page, '/pipeline/ticks/main', 'out', 'out', 'total');
    await page.waitForFunction(
      (before) => Number(document.querySelector('#instances tr[data-url="/pipeline/ticks/main"][data-port=out] td.total')?.textContent) > before,
      total,
    );
    expect(await page.locator('#instances tr[data-url="/onramp/ticker/main"] td').nth(2).innerText()).to.match(/closed|-/);

    // the tap of the pipeline's output shows the metronome's events
    await page.locator('#instances tr[data-url="/pipeline/ticks/main"][data-port=out] button.tap').click();
    await page.locator('#tap-events li.event').nth(2).waitFor();
    const first = JSON.parse(await page.locator('#tap-events li.event').first().innerText()) as { data: { onramp: string }; seq: number };
    expect(first.data.onramp).to.equal('metronome');
    await page.click('#tap-stop');
    await page.locator('#tap-state', { hasText: 'stopped' }).waitFor();

    // the binding graph: onramp → pipeline → offramp; a click on the pipeline draws its nodes
    await page.click('nav a[data-view=graph]');
    for (const id of ['/onramp/ticker/main', '/pipeline/ticks/main', '/offramp/sink/main']) await page.locator(`#binding-graph g.node[data-id="${id}"]`).waitFor();
    expect(await page.locator('#binding-graph path[data-from="/onramp/ticker/main"][data-to="/pipeline/ticks/main"]').count()).to.equal(1);
    expect(await page.locator('#binding-graph path[data-from="/pipeline/ticks/main"][data-to="/offramp/sink/main"]').count()).to.equal(1);
    await page.click('#binding-graph g.node[data-id="/pipeline/ticks/main"]');
    await page.locator('#pipeline-graph g.node[data-id="forward"]').waitFor();
    expect(await page.locator('#pipeline-graph path[data-from="in:in"][data-to="forward"]').count()).to.equal(1);
    expect(await page.locator('#pipeline-graph path[data-from="forward"][data-to="out:out"]').count()).to.equal(1);

    // deactivating the binding stops its flow: its instances leave the table
    await page.click('nav a[data-view=instances]');
    await page.locator('#instances tr[data-url="/binding/flow/main"] button.deactivate').click();
    await onrampOut.waitFor({ state: 'detached' });
    expect(await page.locator('#instances tr[data-url="/pipeline/ticks/main"]').count()).to.equal(0);
    expect(ui.browser.problems).to.deep.equal([]);
  });

  it('a quick Activate right after a publish activates the artefact just published, not the one shown before', async () => {
    const { page } = ui.browser;
    await page.goto(`${ui.server.base}/ui/`);
    await publish(page, 'onramp', 'id: quick\ntype: metronome\nconfig:\n  interval: 50\n'); // its panel is shown now
    // the new binding's panel comes late, as on a loaded machine
    await page.route('**/binding/quickflow', (route) => setTimeout(() => void route.continue(), 1500));
    try {
      await page.selectOption('#publish-kind', 'binding');
      await page.fill('#publish-text', 'id: quickflow\nlinks:\n  "/onramp/quick/{instance}/out": ["/pipeline/system::passthrough/{instance}/in"]\n');
      await page.click('#publish button[type=submit]');
      await page.locator('#publish-ok', { hasText: 'published binding quickflow' }).waitFor();
      await page.click('#artefact-detail button[type=submit]');
      await page.locator('#artefact-detail h2', { hasText: 'binding quickflow' }).waitFor();
      const binding = (await (await fetch(`${ui.server.base}/binding/quickflow`, { headers: { accept: 'application/json' } })).json()) as { instances: string[] };
      const onramp = (await (await fetch(`${ui.server.base}/onramp/quick`, { headers: { accept: 'application/json' } })).json()) as { instances: string[] };
      expect(binding.instances, 'the binding').to.deep.equal(['main']);
      expect(onramp.instances, 'the onramp, through the binding only').to.deep.equal(['main']);
      expect(ui.browser.problems).to.deep.equal([]);
    } finally {
      await page.unroute('**/binding/quickflow');
      await fetch(`${ui.server.base}/binding/quickflow/main`, { method: 'DELETE' });
    }
  });

  it('keeps polling after a GET /status that never answers: gives it up after 5 s, says so, and recovers', async () => {
    const { page } = ui.browser;
    // GET /status is held without an answer, as over a connection lost without a reset, until the console gives up
    let holding = true;
    await page.route('**/status', (route) => (holding ? undefined : route.continue()));
    try {
      await page.goto(`${ui.server.base}/ui/`);
      // every poll shares the one under way: without a timeout this banner never comes, nor does the server line
      await explained(page.locator('#banner', { hasText: 'GET /status: no answer within 5 s' }).waitFor({ timeout: 20_000 }), page, ui.browser.problems);
      holding = false;
      await explained(page.locator('#server', { hasText: /up \d+ s/ }).waitFor(), page, ui.browser.problems);
      await page.locator('#banner').waitFor({ state: 'hidden' });
      expect(ui.browser.problems).to.deep.equal([]);
    } finally {
      await page.unroute('**/status');
    }
  });

  describe('graph states, link rates, delete and edit', () => {
    const get = async (path: string) => {
      const res = await fetch(`${ui.server.base}${path}`, { headers: { accept: 'application/json' } });
      return { status: res.status, body: res.status === 200 ? ((await res.json()) as { artefact: { config: { interval: number } }; instances: string[] }) : undefined };
    };

    /** Clicks an artefact in the lists and waits for its panel. */
    const openArtefact = async (page: Headless['page'], kind: string, id: string) => {
      await page.locator(`#artefact-lists [data-kind=${kind}] button`, { hasText: id }).click();
      await page.locator('#artefact-detail h2', { hasText: `${kind} ${id}` }).waitFor();
    };

    before(async () => {
      const { runtime } = ui.server;
      // a flow whose offramp is down: a real tcp offramp to a port nothing listens on
      runtime.publish('onramp', { id: 'beat', type: 'metronome', config: { interval: 20 } });
      runtime.publish('offramp', { id: 'dead', type: 'tcp', config: { host: '127.0.0.1', port: await freePort() } });
      await bindThroughPassthrough(runtime, 'lostflow', 'beat', 'dead', 'lost');
      // and one whose events flow
      runtime.publish('onramp', { id: 'pulse', type: 'metronome', config: { interval: 20 } });
      runtime.publish('offramp', { id: 'kept', type: 'file', codec: 'json', config: { file: join(ui.dir, 'kept.jsonl') } });
      await bindThroughPassthrough(runtime, 'liveflow', 'pulse', 'kept', 'live');
    });

    after(async () => {
      await ui.server.runtime.deactivate('binding', 'lostflow', 'lost').catch(() => undefined);
      await ui.server.runtime.deactivate('binding', 'liveflow', 'live').catch(() => undefined);
    });

    it('draws an offramp that is down as down, its onramp as paused by the breaker, in words and a legend, and each link with its events/s', async () => {
      const { page } = ui.browser;
      await page.goto(`${ui.server.base}/ui/#graph`);
      const node = (id: string) => page.locator(`#binding-graph g.node[data-id="${id}"]`);
      await explained(page.locator('#binding-graph g.node.down[data-id="/offramp/dead/lost"]').waitFor(), page, ui.browser.problems);
      expect(await node('/offramp/dead/lost').getAttribute('data-state')).to.equal('down');
      expect(await node('/offramp/dead/lost').locator('text.state').textContent()).to.equal('down · breaker open');
      await page.locator('#binding-graph g.node.paused[data-id="/onramp/beat/lost"]').waitFor();
      expect(await node('/onramp/beat/lost').locator('text.state').textContent()).to.equal('paused by breaker');
      // the healthy flow beside it is drawn as running, with nothing about a breaker
      await page.locator('#binding-graph g.node.running[data-id="/offramp/kept/live"]').waitFor();
      expect(await node('/offramp/kept/live').locator('text.state').textContent()).to.equal('running');
      expect(await node('/offramp/kept/live').getAttribute('class')).not.to.include('breaker-open');
      expect(await page.locator('#graph-legend').innerText()).to.include('down').and.to.include('paused by breaker');

      // events/s on the links of the flowing binding, once two polls have passed
      const rate = (from: string, to: string) => `#binding-graph text.rate[data-from="${from}"][data-to="${to}"]`;
      for (const [from, to] of [
        ['/onramp/pulse/live', '/pipeline/system::passthrough/live'],
        ['/pipeline/system::passthrough/live', '/offramp/kept/live'],
      ]) {
        await explained(
          page.waitForFunction((selector) => parseFloat(document.querySelector(selector)?.textContent ?? '') > 0, rate(from, to)),
          page,
          ui.browser.problems,
        );
        expect(await page.locator(rate(from, to)).textContent()).to.match(/^\d+\.\d ev\/s$/);
      }
      expect(ui.browser.problems).to.deep.equal([]);
    });

    it('deletes an artefact only after a confirm step, and says why it cannot delete one that runs', async () => {
      const { page } = ui.browser;
      ui.server.runtime.publish('onramp', { id: 'doomed', type: 'metronome', config: { interval: 1000 } });
      await page.goto(`${ui.server.base}/ui/#artefacts`);
      await openArtefact(page, 'onramp', 'doomed');
      await page.click('#artefact-detail button.delete');
      await page.locator('#artefact-detail .confirm', { hasText: 'Delete onramp doomed from the repository?' }).waitFor();
      expect((await get('/onramp/doomed')).status, 'still there before the confirm').to.equal(200);
      await page.click('#artefact-detail button.confirm-delete');
      await page.locator('#artefact-detail .deleted', { hasText: 'deleted onramp doomed' }).waitFor();
      expect((await get('/onramp/doomed')).status).to.equal(404);
      await page.locator('#artefact-lists [data-kind=onramp] button', { hasText: 'doomed' }).waitFor({ state: 'detached' });

      // one whose instance runs: the API refuses, the console says why
      await openArtefact(page, 'onramp', 'beat');
      await page.click('#artefact-detail button.delete');
      await page.click('#artefact-detail button.confirm-delete');
      await page.locator('#artefact-detail .change-error', { hasText: "onramp 'beat' still has running instances: lost" }).waitFor();
      expect((await get('/onramp/beat')).status).to.equal(200);
      expect(ui.browser.problems).to.deep.equal([]);
    });

    it('edits an artefact: loads it into the editor, saves changed config, keeps it when the change is refused, and refuses while it runs', async () => {
      const { page } = ui.browser;
      ui.server.runtime.publish('onramp', { id: 'tune', type: 'metronome', config: { interval: 1000 } });
      await page.goto(`${ui.server.base}/ui/#artefacts`);
      await openArtefact(page, 'onramp', 'tune');
      await page.click('#artefact-detail button.edit');
      await page.locator('#publish-editing', { hasText: 'editing onramp tune' }).waitFor();
      expect(await page.inputValue('#publish-kind')).to.equal('onramp');
      const loaded = await page.inputValue('#publish-text');
      expect(JSON.parse(loaded)).to.deep.equal({ id: 'tune', type: 'metronome', config: { interval: 1000 } });

      // a refused change: the API's error at the field, and the old artefact is still there
      await page.fill('#publish-text', loaded.replace('1000', '"soon"'));
      await page.click('#publish button[type=submit]');
      await page.locator('#publish-error', { hasText: 'config.interval' }).waitFor();
      expect((await get('/onramp/tune')).body!.artefact.config.interval).to.equal(1000);

      await page.fill('#publish-text', loaded.replace('1000', '250'));
      await page.click('#publish button[type=submit]');
      await page.locator('#publish-ok', { hasText: 'saved onramp tune' }).waitFor();
      expect((await get('/onramp/tune')).body!.artefact.config.interval).to.equal(250);
      expect(await page.locator('#publish-editing').isHidden()).to.equal(true);
      expect(await page.innerText('#publish-submit')).to.equal('Publish');

      // an artefact whose instance runs is not loaded for editing: it could not be replaced
      await openArtefact(page, 'onramp', 'beat');
      await page.click('#artefact-detail button.edit');
      await page.locator('#artefact-detail .change-error', { hasText: 'onramp beat cannot be edited while instances of it run (lost)' }).waitFor();
      expect(await page.locator('#publish-editing').isHidden()).to.equal(true);
      expect(ui.browser.problems).to.deep.equal([]);
    });
  });
});

describe('web console with --api-token', function () {
  this.timeout(30_000);
  const TOKEN = 'sesame-token';
  const ui = browserSession('eddy-ui-token-', { token: TOKEN });

  it('loads without the token, asks for it, and works once it is given', async () => {
    const { page } = ui.browser;
    await page.goto(`${ui.server.base}/ui/`);
    await page.locator('#banner', { hasText: 'this API needs a token' }).waitFor();
    expect(await page.locator('#artefact-lists button').count()).to.equal(0);
    await page.fill('#token', 'wrong');
    await page.click('#token-form button');
    await page.locator('#banner', { hasText: 'the bearer token is wrong' }).waitFor();
    await page.fill('#token', TOKEN);
    await page.click('#token-form button');
    await page.locator('#artefact-lists [data-kind=pipeline] button', { hasText: 'system::passthrough' }).waitFor();
    await page.locator('#banner').waitFor({ state: 'hidden' });
    // kept for the tab: a reload still has it
    await page.reload();
    await page.locator('#artefact-lists [data-kind=pipeline] button', { hasText: 'system::passthrough' }).waitFor();
    // publish and activate with the token, and tap (fetch sends the header EventSource could not)
    // (an onramp emits once a binding connects it)
    await publish(page, 'onramp', 'id: ticker\ntype: metronome\nconfig:\n  interval: 20\n');
    await publish(page, 'binding', 'id: feed\nlinks:\n  "/onramp/ticker/{instance}/out": ["/pipeline/system::passthrough/{instance}/in"]\n');
    // activated from the artefact's own panel this time
    await page.click('#artefact-detail button[type=submit]');
    await page.locator('#artefact-detail', { hasText: 'instances: main' }).waitFor();
    await page.click('nav a[data-view=instances]');
    await explained(page.locator('#instances tr[data-url="/pipeline/system::passthrough/main"][data-port=in] button.tap').click(), page, ui.browser.problems);
    await page.locator('#tap-events li.event').nth(1).waitFor();
    await page.click('#tap-stop');
    await page.click('nav a[data-view=instances]');
    await page.locator('#instances tr[data-url="/binding/feed/main"] button.deactivate').click();
    await page.locator('#instances tr[data-url="/onramp/ticker/main"]').first().waitFor({ state: 'detached' });
    expect(ui.browser.problems).to.deep.equal([]);
  });
});
