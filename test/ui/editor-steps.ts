// The user's steps in the flow editor, by clicks and typing only, shared by
// the editor's browser tests.
import type { Headless } from './browser';

export type Page = Headless['page'];
type Locator = ReturnType<Page['locator']>;

/** Adds a type from the palette with its + button and gives the node `id` through its form. */
export async function addNode(page: Page, kind: string, type: string, id: string): Promise<void> {
  await page.locator(`#palette li[data-kind="${kind}"][data-type="${type}"] button.add`).click();
  await page.fill('#node-id', id);
  await page.press('#node-id', 'Enter');
  await page.locator(`#canvas g.enode[data-id="${id}"]`).waitFor();
}

/** Selects a node by clicking its title. */
export async function select(page: Page, id: string): Promise<void> {
  await page.locator(`#canvas g.enode[data-id="${id}"] text.title`).click();
  await page.locator('#node-id').and(page.locator(`[value="${id}"]`)).waitFor();
}

/** Where a port is on the page, once it is drawn (boundingBox alone answers null for one not shown yet). */
async function box(port: Locator): Promise<{ x: number; y: number; width: number; height: number }> {
  await port.waitFor({ state: 'visible' });
  const found = await port.boundingBox();
  if (!found) throw new Error(`${port.toString()} has no box on the page`);
  return found;
}

/** Drags from an output port of `from` to the input port of `to`, with the mouse. */
export async function wire(page: Page, from: string, port: string, to: string): Promise<void> {
  const a = await box(page.locator(`#canvas g.enode[data-id="${from}"] circle.port.out[data-port="${port}"]`));
  const b = await box(page.locator(`#canvas g.enode[data-id="${to}"] circle.port.in`));
  await page.mouse.move(a.x + a.width / 2, a.y + a.height / 2);
  await page.mouse.down();
  await page.mouse.move((a.x + b.x) / 2, (a.y + b.y) / 2, { steps: 4 });
  await page.mouse.move(b.x + b.width / 2, b.y + b.height / 2, { steps: 4 });
  await page.mouse.up();
  await page.locator(`#canvas g.wire[data-from="${from}"][data-port="${port}"][data-to="${to}"]`).waitFor();
}

/** Types into the field of the selected node's form at `path` (`window.size`), and leaves it. */
export async function field(page: Page, path: string, value: string): Promise<void> {
  const input = page.locator(`#inspector [data-path="${path}"]`).first();
  await input.fill(value);
  await input.press('Tab');
}

/** Fills the last row of a map field (`aggregate`), after adding a row with its + button when that one is taken. */
export async function mapEntry(page: Page, path: string, key: string, value: string): Promise<void> {
  const map = page.locator(`#inspector .field.map[data-path="${path}"]`);
  if (await map.locator('.map-row input.map-key').last().inputValue()) await map.locator('button.map-add').click();
  const row = map.locator('.map-row').last();
  await row.locator('input.map-key').fill(key);
  await row.locator('input.map-value').fill(value);
  await row.locator('input.map-value').press('Tab');
}

/** Deploy…, then Apply; fails with what the side panel said when there is nothing to apply. */
export async function deploy(page: Page): Promise<void> {
  await page.click('#ed-deploy');
  await page.locator('#deploy-apply').click({ timeout: 5000 }).catch(async (err: unknown) => {
    throw new Error(`${(err as Error).message}\nthe side panel said: ${await page.locator('#inspector').innerText()}`);
  });
  await page.locator('#inspector .deploy-ok').waitFor();
}

/** GET `path` from the API as JSON. */
export async function json(base: string, path: string): Promise<{ status: number; body: Record<string, unknown> }> {
  const res = await fetch(`${base}${path}`, { headers: { accept: 'application/json' } });
  return { status: res.status, body: (await res.json()) as Record<string, unknown> };
}
