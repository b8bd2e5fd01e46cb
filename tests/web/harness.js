// Shared by the browser tests and the screenshots: the server under test, Debian's chromium
// driven by playwright-core, and the checks every page gets (no console error, no request to
// another host).

import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { chromium } from 'playwright-core';

const ROOT = new URL('../../', import.meta.url).pathname;
export const CHROMIUM = process.env.CHROMIUM ?? '/usr/bin/chromium';

/**
 * Starts the debug server on a throwaway SQLite database (or uses LEEKHA_WEB_URL).
 * @returns {Promise<{url: string, stop: () => Promise<void>, db: string}>}
 */
export async function startServer() {
  if (process.env.LEEKHA_WEB_URL) {
    return { url: process.env.LEEKHA_WEB_URL, stop: async () => {}, db: process.env.LEEKHA_WEB_DB ?? '' };
  }
  const dir = mkdtempSync(join(tmpdir(), 'leekha-web-'));
  const port = 20000 + Math.floor(Math.random() * 20000);
  const bin = process.env.LEEKHA_BIN ?? join(process.env.CARGO_TARGET_DIR ?? join(ROOT, 'target'), 'debug/leekha');
  const db = join(dir, 'web.db');
  const child = spawn(bin, [], {
    env: {
      ...process.env,
      DATABASE_URL: db,
      LEEKHA_BIND: `127.0.0.1:${port}`,
      LEEKHA_AUTH_RATE_PER_MINUTE: '10000',
      // The push test's subscription names a local endpoint (no push service is reachable).
      LEEKHA_WEBHOOK_ALLOW_PRIVATE: '1',
      RUST_LOG: process.env.RUST_LOG ?? 'warn',
    },
    stdio: ['ignore', 'inherit', 'inherit'],
  });
  const url = `http://127.0.0.1:${port}`;
  for (let i = 0; i < 300; i++) {
    try {
      if ((await fetch(`${url}/readyz`)).ok) break;
    } catch {
      // not listening yet
    }
    if (child.exitCode !== null) throw new Error(`the server exited with ${child.exitCode}`);
    await new Promise((r) => setTimeout(r, 100));
  }
  return {
    url,
    db,
    stop: async () => {
      child.kill('SIGTERM');
      await new Promise((r) => child.once('exit', r));
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

export async function launch() {
  return chromium.launch({
    executablePath: CHROMIUM,
    // CI runs as root, where chromium's sandbox cannot start.
    args: ['--no-sandbox', '--disable-dev-shm-usage'],
  });
}

/**
 * A fresh browser context whose pages record console errors, page errors and requests to
 * any other origin than the server's.
 * @param {import('playwright-core').Browser} browser
 * @param {string} url
 * @param {import('playwright-core').BrowserContextOptions} [options]
 */
export async function open(browser, url, options = {}) {
  const context = await browser.newContext({ serviceWorkers: 'block', ...options });
  const page = await context.newPage();
  /** @type {string[]} */
  const problems = [];
  const origin = new URL(url).origin;
  page.on('console', (m) => { if (m.type() === 'error') problems.push(`console: ${m.text()}`); });
  page.on('pageerror', (e) => problems.push(`page error: ${e.message}`));
  context.on('request', (r) => {
    const u = new URL(r.url());
    if (u.origin !== origin && u.protocol !== 'data:') problems.push(`foreign request: ${r.url()}`);
  });
  page.setDefaultTimeout(20_000);
  await page.goto(url);
  await appDrawn(page);
  return { context, page, problems };
}

/**
 * Waits for the app's first view. The load event does not wait for the modules' top-level
 * await (the dictionaries): a click on the static header before then would be lost.
 * @param {import('playwright-core').Page} page
 */
export async function appDrawn(page) {
  await page.waitForSelector('#main > :not(noscript)');
}

/**
 * Plays the caller's turns (a legal pass, a legal card) until the game is over, or until
 * `until` shows.
 * @param {import('playwright-core').Page} page
 * @param {{deadline?: number, until?: string}} [options]
 */
export async function playToTheEnd(page, { deadline = Date.now() + 240_000, until = '#result' } = {}) {
  // The table redraws whenever the game moves, so an element found a moment ago may be
  // gone: each step has a short timeout, and a step that missed is tried afresh.
  const quick = { timeout: 2_000 };
  while (Date.now() < deadline) {
    if (await page.locator(until).count()) return;
    try {
      if (await page.locator('#send-pass').count()) {
        // Choose cards the page offers, one at a time: a selection built so is legal.
        const chosen = await page.locator('.hand button.chosen').count();
        if (chosen < 3) {
          await page.locator('.hand button.card:not([disabled]):not(.chosen)').first().click(quick);
        } else {
          await page.locator('#send-pass').click(quick);
        }
        continue;
      }
      const legal = page.locator('.hand button.card.legal:not([disabled])');
      if (await legal.count()) {
        await legal.first().click(quick);
        continue;
      }
    } catch {
      // redrawn under us: look again
    }
    await page.waitForTimeout(100);
  }
  throw new Error(`${until} did not show in time`);
}
