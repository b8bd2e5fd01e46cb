// Screenshots of the landing page, the table and the result, on a desktop and on a phone,
// into tests/web/screenshots/ (`npm run screenshots`; the same server options as the tests).

import { mkdirSync } from 'node:fs';
import { launch, open, playToTheEnd, startServer } from './harness.js';

const OUT = new URL('./screenshots/', import.meta.url).pathname;
const DEVICES = {
  desktop: { viewport: { width: 1280, height: 800 } },
  phone: { viewport: { width: 390, height: 844 }, deviceScaleFactor: 2, isMobile: true, hasTouch: true },
};

mkdirSync(OUT, { recursive: true });
const server = await startServer();
const browser = await launch();
try {
  for (const [name, options] of Object.entries(DEVICES)) {
    const { page, context } = await open(browser, server.url, options);
    await page.screenshot({ path: `${OUT}${name}-landing.png`, fullPage: true });
    await page.click('#play-guest');
    await page.waitForSelector('#send-pass');
    // Mid-pass: two cards chosen, so the highlight and the inert cards show.
    for (let i = 0; i < 2; i++) await page.locator('.hand button.card:not([disabled]):not(.chosen)').first().click();
    await page.screenshot({ path: `${OUT}${name}-table.png`, fullPage: true });
    await playToTheEnd(page);
    await page.waitForTimeout(300);
    await page.screenshot({ path: `${OUT}${name}-result.png`, fullPage: true });
    await context.close();
    console.log(`${name}: landing, table, result`);
  }
  console.log(`screenshots in ${OUT}`);
} finally {
  await browser.close();
  await server.stop();
}
