import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { chromium, type Browser, type BrowserContext, type Page } from 'playwright-core';
import { serve, type Served } from '../cli/status-flow';

export const CHROMIUM = '/usr/bin/chromium';

/**
 * Debian's chromium, installed by scripts/install-peers (which .ci/run
 * calls): missing, a suite is skipped locally with the command that installs
 * it, and fails under CI.
 */
export function requireChromium(ctx: Mocha.Context): void {
  if (existsSync(CHROMIUM)) return;
  const message = `chromium is not installed at ${CHROMIUM}: run scripts/install-peers`;
  if (process.env.CI) throw new Error(message);
  console.warn(`skipped: ${message}`);
  ctx.skip();
}

export interface Headless {
  browser: Browser;
  context: BrowserContext;
  page: Page;
  /** what the page logged as an error, and requests it made beyond the API */
  problems: string[];
  close(): Promise<void>;
}

/** Headless chromium with a fresh profile, one page, and a record of page errors and foreign requests. */
export async function openBrowser(apiBase: string, viewport = { width: 1280, height: 800 }): Promise<Headless> {
  const profile = mkdtempSync(join(tmpdir(), 'eddy-chromium-'));
  const context = await chromium.launchPersistentContext(profile, {
    executablePath: CHROMIUM,
    headless: true,
    viewport,
    args: ['--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run', '--disable-background-networking', '--disable-component-update', '--disable-sync'],
  });
  const page = context.pages()[0] ?? (await context.newPage());
  // a locator that never appears fails the step with its selector, before mocha's timeout
  page.setDefaultTimeout(12_000);
  const problems: string[] = [];
  page.on('pageerror', (err) => problems.push(`page error: ${err.message}`));
  page.on('console', (msg) => {
    // an API answering 4xx is logged by chromium as a failed load; the page shows those itself
    if (msg.type() === 'error' && !msg.text().startsWith("Failed to load resource")) problems.push(`console: ${msg.text()}`);
  });
  page.on('request', (req) => {
    if (!req.url().startsWith(apiBase) && !req.url().startsWith('data:')) problems.push(`request beyond the API: ${req.url()}`);
  });
  return {
    browser: context.browser()!,
    context,
    page,
    problems,
    async close() {
      await context.close();
      rmSync(profile, { recursive: true, force: true });
    },
  };
}

/** What a describe block of browser tests works with: filled in by its `before` hook. */
export interface BrowserSession {
  server: Served;
  browser: Headless;
  /** a temporary directory of its own, removed afterwards */
  dir: string;
}

/**
 * Registers the describe block's hooks: a runtime with its API of its own
 * (needing `token` when given), headless chromium on it and a temporary
 * directory (`dirPrefix…`), all closed and removed afterwards; skipped
 * without chromium (requireChromium).
 */
export function browserSession(dirPrefix: string, options: { viewport?: { width: number; height: number }; token?: string } = {}): BrowserSession {
  const session = {} as BrowserSession;
  before(async function () {
    requireChromium(this);
    session.server = await serve(options.token);
    session.browser = await openBrowser(session.server.base, options.viewport);
    session.dir = mkdtempSync(join(tmpdir(), dirPrefix));
  });
  after(async () => {
    await session.browser?.close();
    await session.server?.stop();
    if (session.dir) rmSync(session.dir, { recursive: true, force: true });
  });
  return session;
}
