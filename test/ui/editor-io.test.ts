import { expect } from 'chai';
import { readdirSync } from 'node:fs';
import { join } from 'node:path';
import { parse } from 'yaml';
import { serve, type Served } from '../cli/status-flow';
import { openBrowser, requireChromium, type Headless } from './browser';

type Page = Headless['page'];

const EXAMPLES = join(__dirname, '../../../examples');
/** Every config file and pipeline file in examples/ (the `.cases.yaml` files are `eddy test`'s, not configs). */
const FILES = [
  ...readdirSync(EXAMPLES).map((f) => join(EXAMPLES, f)),
  ...readdirSync(join(EXAMPLES, 'pipelines')).map((f) => join(EXAMPLES, 'pipelines', f)),
].filter((f) => f.endsWith('.yaml') && !f.endsWith('.cases.yaml'));

/** Opens a file (a path, or a text) through the Open file… input; resolves once the canvas says it opened it. */
async function open(page: Page, file: string | { name: string; text: string }): Promise<void> {
  await page.locator('#ed-message').evaluate((el) => (el.textContent = ''));
  await page.setInputFiles('#ed-open-file', typeof file === 'string' ? file : { name: file.name, mimeType: 'application/yaml', buffer: Buffer.from(file.text) });
  await page.locator('#ed-message', { hasText: /opened|:/ }).waitFor();
  const said = await page.locator('#ed-message').innerText();
  if (!said.startsWith('opened')) throw new Error(`opening ${typeof file === 'string' ? file : file.name}: ${said}`);
}

async function exported(page: Page): Promise<string> {
  await page.click('#ed-export');
  return page.locator('#export-text').inputValue();
}

interface Drawn {
  id: string;
  kind: string;
  x: number;
  y: number;
  w: number;
  h: number;
  sink: boolean;
}

/** The wires drawn, as `from port → to`. */
const wiresOf = (page: Page): Promise<string[]> =>
  page.locator('#canvas g.wire').evaluateAll((gs) => gs.map((g) => `${g.getAttribute('data-from')} ${g.getAttribute('data-port')} → ${g.getAttribute('data-to')}`));

/** Every node drawn, with its box in canvas units and whether it feeds nothing. */
async function drawn(page: Page): Promise<Drawn[]> {
  const wires = await wiresOf(page);
  const nodes = await page.locator('#canvas g.enode').evaluateAll((gs) =>
    gs.map((g) => ({
      id: g.getAttribute('data-id')!,
      kind: g.getAttribute('data-kind')!,
      transform: g.getAttribute('transform')!,
      w: Number(g.querySelector('rect.box')!.getAttribute('width')),
      h: Number(g.querySelector('rect.box')!.getAttribute('height')),
    })),
  );
  return nodes.map(({ transform, ...n }) => {
    const [x, y] = /translate\(([-\d.]+),([-\d.]+)\)/.exec(transform)!.slice(1).map(Number);
    return { ...n, x, y, sink: !wires.some((w) => w.startsWith(`${n.id} `)) };
  });
}

describe('the flow editor opens and exports config files, in headless chromium', function () {
  this.timeout(120_000);
  let server: Served;
  let browser: Headless;

  before(async function () {
    requireChromium(this);
    server = await serve();
    browser = await openBrowser(server.base, { width: 1400, height: 900 });
    await browser.page.goto(`${server.base}/ui/#editor`);
    await browser.page.locator('#palette li').first().waitFor();
  });

  after(async () => {
    await browser?.close();
    await server?.stop();
  });

  afterEach(() => {
    expect(browser.problems).to.deep.equal([]);
  });

  it('draws every file of examples/ in columns (onramps left, sinks right, no node over another), and export → open → export is stable', async () => {
    const { page } = browser;
    expect(FILES.length).to.be.greaterThan(20);
    for (const file of FILES) {
      await open(page, file);
      const nodes = await drawn(page);
      expect(nodes.length, file).to.be.greaterThan(0);
      for (const a of nodes) {
        for (const b of nodes) {
          const apart = a === b || a.x + a.w <= b.x || b.x + b.w <= a.x || a.y + a.h <= b.y || b.y + b.h <= a.y;
          expect(apart, `${file}: ${a.id} over ${b.id}`).to.equal(true);
        }
      }
      const left = Math.min(...nodes.map((n) => n.x));
      const right = Math.max(...nodes.map((n) => n.x));
      for (const n of nodes.filter((n) => n.kind === 'onramp')) expect(n.x, `${file}: onramp ${n.id} in the first column`).to.equal(left);
      for (const n of nodes.filter((n) => n.kind === 'offramp' && n.sink && nodes.some((m) => m.kind !== 'offramp')))
        expect(n.x, `${file}: sink ${n.id} in the last column`).to.equal(right);

      const first = await exported(page);
      await open(page, { name: 'first.yaml', text: first });
      const second = await exported(page);
      expect(second, `${file}: the second export`).to.equal(first);
    }
  });

  it('draws what a file links: the pipelines flattened, a linked offramp answering into two pipelines, the system stdout', async () => {
    const { page } = browser;
    await open(page, join(EXAMPLES, 'elastic.yaml'));
    const wires = await wiresOf(page);
    expect(wires).to.have.members([
      'books out → route',
      'route out → batch',
      'batch out → search',
      'search out → show',
      'search err → rejected_show',
      'show out → system::stdout',
      'rejected_show out → system::stderr',
    ]);
    const nodes = await drawn(page);
    const x = (id: string) => nodes.find((n) => n.id === id)!.x;
    expect(x('books')).to.be.below(x('route'));
    expect(x('route')).to.be.below(x('batch'));
    expect(x('batch')).to.be.below(x('search'));
    expect(x('search')).to.be.below(x('show'));
    expect(x('show')).to.be.below(x('system::stdout'));
    // written back as a binding (a linked offramp's replies and a system offramp are no compact flow), the system offramp not declared
    const doc = parse(await exported(page)) as { offramp: { id: string; linked?: boolean }[]; binding: { links: Record<string, string[]> }[]; flow?: unknown };
    expect(doc.flow).to.equal(undefined);
    expect(doc.offramp.map((o) => [o.id, o.linked])).to.deep.equal([['search', true]]);
    expect(doc.binding[0].links['/offramp/search/{instance}/err']).to.deep.equal(['/pipeline/books/{instance}/from_search_err']);
    expect(doc.binding[0].links['/pipeline/books/{instance}/to_system::stdout']).to.deep.equal(['/offramp/system::stdout/system/in']);
  });

  it('opens a running flow from the API as the file that deployed it, taps its wire with a filter, and writes a test case skeleton of what it caught', async () => {
    const { page } = browser;
    const config = [
      'onramp:',
      '  - { id: ticks, type: metronome, config: { interval: 20 } }',
      'offramp:',
      '  - { id: drop, type: blackhole }',
      'pipeline:',
      '  - id: tagged',
      '    interface: { inputs: [in], outputs: [out] }',
      '    nodes: [{ id: tag, type: runtime::cel, config: { set: { seen: "true" } } }]',
      '    links: { in: [tag], tag: [out] }',
      'flow:',
      '  - { id: tagged, from: ticks, via: tagged, to: drop }',
      '',
    ].join('\n');
    await open(page, { name: 'tagged.yaml', text: config });
    const fromFile = await exported(page);
    const res = await fetch(`${server.base}/config`, { method: 'POST', headers: { 'content-type': 'application/yaml', accept: 'application/json' }, body: config });
    expect(res.status, await res.clone().text()).to.equal(201);

    await page.locator('#ed-message').evaluate((el) => (el.textContent = ''));
    await page.click('#ed-open-running');
    await page.selectOption('#running-flow', 'tagged');
    await page.click('#running-open');
    await page.locator('#ed-message', { hasText: 'opened tagged' }).waitFor().catch(async (err: unknown) => {
      throw new Error(`${(err as Error).message}\nthe editor said: ${await page.locator('#ed-message').innerText()}; the panel: ${await page.locator('#inspector').innerText()}`);
    });
    expect(await exported(page)).to.equal(fromFile);

    // the wire from the metronome into the pipeline, tapped with a filter the server evaluates
    await page.locator('#canvas g.wire[data-from="ticks"][data-to="tag"] path.hit').click({ force: true });
    await page.fill('#tap-filter', 'event.id % 2 == 0');
    await page.press('#tap-filter', 'Enter');
    await page.locator('#inspector .tap-state', { hasText: /^[3-9]\d* events|^\d{2,} events/ }).waitFor();
    await page.click('#inspector .tap-pause');
    const ids = await page.$$eval('#inspector .tap-list li', (lis) => lis.map((li) => (JSON.parse(li.textContent) as { id: number }).id));
    expect(ids.length).to.be.greaterThan(2);
    for (const id of ids) expect(id % 2).to.equal(0);
    // a filter that does not parse is the server's 400, shown where the events would be
    await page.fill('#tap-filter', 'event.id +');
    await page.press('#tap-filter', 'Enter');
    await page.locator('#inspector .tap-state.field-error', { hasText: "query parameter 'filter'" }).waitFor();
    await page.fill('#tap-filter', 'event.id % 2 == 0');
    await page.press('#tap-filter', 'Enter');
    await page.locator('#inspector .tap-state', { hasText: /^[3-9] events|^\d{2,} events/ }).waitFor();

    await page.click('#inspector .tap-case');
    const text = await page.locator('#case-text').inputValue();
    const skeleton = parse(text) as { pipeline: string; cases: { name: string; values: Record<string, { id: number }>; in: Record<string, string>; out: Record<string, string> }[] };
    expect(skeleton.pipeline).to.equal('tagged.yaml');
    const [only] = skeleton.cases;
    const letters = Object.keys(only.values);
    expect(letters.length).to.be.greaterThan(2);
    expect(only.in).to.deep.equal({ in: `${letters.join('')}|` });
    expect(only.out).to.deep.equal({ out: '|' });
    for (const letter of letters) expect(only.values[letter].id % 2).to.equal(0);

    const gone = await fetch(`${server.base}/binding/tagged/main`, { method: 'DELETE' });
    expect(gone.status).to.equal(200);
  });
});
