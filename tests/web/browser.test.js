// The web client in a real browser (Debian's chromium through playwright-core) against the
// real server: the pages a player and an administrator use, played to the end.
// Run with `npm test` (the server binary: $LEEKHA_BIN, else $CARGO_TARGET_DIR or
// ../../target, debug/leekha; or a running server at $LEEKHA_WEB_URL).

import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { createECDH, randomBytes } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { after, before, test } from 'node:test';
import { appDrawn, launch, open, playToTheEnd, startServer } from './harness.js';

/** @type {Awaited<ReturnType<typeof startServer>>} */
let server;
/** @type {import('playwright-core').Browser} */
let browser;

before(async () => {
  server = await startServer();
  browser = await launch();
});

after(async () => {
  await browser?.close();
  await server?.stop();
});

/**
 * The game view as the page's signed-in user sees it, read through the API.
 * @param {import('playwright-core').Page} page
 */
function gameView(page) {
  return page.evaluate(async () => {
    const id = location.hash.split('/')[2];
    const session = JSON.parse(localStorage.getItem('leekha.session') ?? '{}');
    const res = await fetch(`/api/v1/games/${id}`, { headers: { authorization: `Bearer ${session.access_token}` } });
    return res.json();
  });
}

/**
 * Calls the API as the page's signed-in user.
 * @param {import('playwright-core').Page} page
 * @param {string} method @param {string} path @param {unknown} [body]
 */
function api(page, method, path, body) {
  return page.evaluate(async ({ method, path, body }) => {
    const session = JSON.parse(localStorage.getItem('leekha.session') ?? '{}');
    const res = await fetch(`/api/v1${path}`, {
      method,
      headers: { authorization: `Bearer ${session.access_token}`, 'content-type': 'application/json' },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    return res.json();
  }, { method, path, body });
}

/**
 * Whether the page is no wider than its viewport (nothing scrolls sideways).
 * @param {import('playwright-core').Page} page
 */
function pageWidth(page) {
  return page.evaluate(() => document.documentElement.scrollWidth);
}

/** @param {string[]} problems */
function clean(problems) {
  assert.deepEqual(problems, [], 'no console error, no page error, no request to another host');
}

test('a guest plays a whole game against three bots from the landing page, live over SSE', async () => {
  const { page, problems, context } = await open(browser, server.url);
  /** @type {string[]} */
  const streams = [];
  page.on('request', (r) => { if (r.url().includes('/events/stream?')) streams.push(r.url()); });
  await page.selectOption('select[name=level]', 'random');
  await page.click('#play-guest');
  await page.waitForSelector('.hand button.card');
  assert.match(page.url(), /#\/game\/[0-9a-f-]{36}$/);
  await playToTheEnd(page);
  await page.waitForSelector('#result li');
  assert.equal(await page.locator('#result .ranking li').count(), 4);
  assert.ok(await page.locator('#rematch').isVisible());
  assert.ok(streams.length >= 1, 'the table followed the game over an event stream');
  assert.ok(streams.every((u) => u.includes('ticket=st_')), 'streams are opened with a ticket');
  const view = await gameView(page);
  assert.equal(view.status, 'finished');
  // The last round's summary stays beside the result.
  assert.equal(await page.locator('#round-summary li').count(), 4);
  await page.click('#replay');
  await page.waitForSelector('.replay-actions li');
  // The replay is cut into rounds of 13 tricks, each trick saying who took it.
  const tricks = await page.locator('.replay-round').evaluateAll((rounds) =>
    rounds.map((r) => [...r.querySelectorAll('.replay-actions li')].filter((li) => li.textContent?.includes('→')).length));
  assert.ok(tricks.length >= 1 && tricks.every((n) => n === 13), `13 taken tricks a round: ${tricks}`);
  // Back at the table, a rematch against the same bots starts at once.
  await page.goBack();
  await page.click('#rematch');
  await page.waitForFunction((old) => !location.hash.endsWith(old), view.id);
  await page.waitForSelector('#send-pass');
  // The finished table says the rematch is there, and opens it.
  const rematch = page.url();
  await page.goBack();
  await page.waitForFunction(() => document.querySelector('#rematch')?.textContent === 'Open the rematch');
  await page.click('#rematch');
  await page.waitForFunction((url) => location.href === url, rematch);
  clean(problems);
  await context.close();
});

test('the table marks the dealer and the cards received, and shows how a round went until the next one starts', async () => {
  const { page, problems, context } = await open(browser, server.url);
  await page.selectOption('select[name=level]', 'random');
  await page.click('#play-guest');
  await page.waitForSelector('#send-pass');
  assert.equal(await page.locator('.seat .dealer').count(), 1);
  const dealer = Number(await page.locator('.seat:has(.dealer)').getAttribute('data-seat'));
  const first = await gameView(page);
  assert.equal(dealer, first.round.dealer);
  assert.equal(await page.locator('.hand button.card.received').count(), 0);
  for (let i = 0; i < 3; i++) await page.locator('.hand button.card:not([disabled]):not(.chosen)').first().click();
  await page.click('#send-pass');
  // The three cards the exchange brought are marked, for the eye and for a screen reader.
  await page.waitForFunction(() => document.querySelectorAll('.hand button.card.received').length === 3);
  const received = (await gameView(page)).round.received;
  const marked = await page.locator('.hand button.card.received').evaluateAll((cards) => cards.map((c) => c.getAttribute('data-card')));
  assert.deepEqual([...marked].sort(), [...received].sort());
  assert.match(await page.locator('.hand button.card.received').first().getAttribute('aria-label') ?? '', /received in the exchange/);
  // Play to the end of the round: the summary shows each seat's points (36 in all).
  await playToTheEnd(page, { until: '#round-summary' });
  assert.match(await page.locator('#round-summary h2').innerText(), /Round 1 is over/);
  const points = await page.locator('#round-summary li').evaluateAll((items) =>
    items.map((li) => Number(/: (\d+) point/.exec(li.textContent ?? '')?.[1])));
  assert.equal(points.length, 4);
  assert.equal(points.reduce((a, b) => a + b, 0), 36);
  const view = await gameView(page);
  assert.equal(view.round.number, 2);
  assert.deepEqual(points, view.seats.map((/** @type {{total_score: number}} */ s) => s.total_score));
  // It goes once the next round's first card is on the table.
  await playToTheEnd(page, { until: '.trick .played' });
  await page.waitForSelector('#round-summary', { state: 'detached' });
  clean(problems);
  await context.close();
});

test('a game that does not exist says so once and is not asked for again', async () => {
  const { page, problems, context } = await open(browser, server.url);
  await page.click('#play-guest');
  await page.waitForSelector('.hand button.card');
  /** @type {string[]} */
  const asked = [];
  page.on('request', (r) => { if (/\/api\/v1\/(games\/[^/]+\/events|auth\/stream-ticket)/.test(r.url())) asked.push(r.url()); });
  const missing = '00000000-0000-4000-8000-000000000000';
  await page.goto(`${server.url}/#/game/${missing}`);
  // Said in the page, with the way back to the lobby, not above an empty page.
  await page.waitForSelector('#game-missing:has-text("No such game")');
  assert.equal(await page.locator('#game-missing a[href="#/lobby"]').count(), 1);
  assert.equal(await page.textContent('#status'), '');
  // Without the stop, the stream is retried after 1, 2 and 4 s, then long-polled.
  await page.waitForTimeout(5_000);
  assert.ok(asked.length <= 2, `no retries after the 404: ${asked.join(' ')}`);
  // A link cut short says the same, in English too, without asking the server.
  await page.goto(`${server.url}/#/game/abc`);
  await page.waitForSelector('#game-missing:has-text("No such game")');
  await page.click('#game-missing a[href="#/lobby"]');
  await page.waitForSelector('ul.games[aria-label="Lobby"]');
  // The page logs the 404s of the first attempts; nothing else.
  assert.deepEqual(problems.filter((p) => !/404/.test(p)), []);
  await context.close();
});

test('without EventSource the table follows the game by long-polling, to the end', async () => {
  const { page, problems, context } = await open(browser, server.url);
  await page.addInitScript(() => { Reflect.deleteProperty(window, 'EventSource'); });
  await page.reload();
  /** @type {string[]} */
  const polls = [];
  page.on('request', (r) => { if (/\/events\?after=\d+&wait=30/.test(r.url())) polls.push(r.url()); });
  await page.click('#play-guest');
  await playToTheEnd(page);
  assert.ok(polls.length >= 1, 'the events were long-polled');
  clean(problems);
  await context.close();
});

test('an illegal pass cannot be selected', async () => {
  const { page, problems, context } = await open(browser, server.url);
  await page.click('#play-guest');
  // Hearts and clubs have no guards: a pass may never take the last of them. Deal until the
  // hand holds three or fewer of one of them (nearly every deal does).
  for (let attempt = 0; attempt < 20; attempt++) {
    await page.waitForSelector('#send-pass');
    const view = await gameView(page);
    const hand = /** @type {string[]} */ (view.round.hand);
    const mayEmpty = new Set(view.legal_actions.may_empty_suit);
    const short = ['H', 'C', 'S', 'D']
      .map((suit) => hand.filter((c) => c.endsWith(suit)))
      .find((cards) => cards.length > 0 && cards.length <= 3 && cards.some((c) => !mayEmpty.has(c)));
    if (!short) {
      await page.goto(`${server.url}/#/mine`);
      await page.click('#quick');
      await page.waitForSelector('.hand button.card');
      continue;
    }
    // The suit's cards that may go are chosen first, the one that would empty it last.
    const ordered = [...short.filter((c) => mayEmpty.has(c)), ...short.filter((c) => !mayEmpty.has(c))];
    for (const card of ordered.slice(0, -1)) await page.click(`.hand button[data-card="${card}"]`);
    const last = page.locator(`.hand button[data-card="${ordered.at(-1)}"]`);
    assert.ok(await last.isDisabled(), `${ordered.at(-1)} would empty its suit and is inert`);
    assert.equal(await last.getAttribute('aria-disabled'), 'true');
    // A click where the card is, as a player's would land: the bots' passes redraw the hand
    // at any moment, and a forced click on the button found before a redraw meets a detached
    // element ("not visible"); the redrawn card sits at the same place.
    const box = await last.boundingBox();
    assert.ok(box, `${ordered.at(-1)} is on screen`);
    await page.mouse.click(box.x + box.width / 2, box.y + box.height / 2);
    assert.equal(await page.locator('.hand button.chosen').count(), ordered.length - 1);
    // Whatever else is picked, the selection stays completable and ends legal.
    while ((await page.locator('.hand button.chosen').count()) < 3) {
      await page.locator('.hand button.card:not([disabled]):not(.chosen)').first().click();
    }
    assert.ok(await page.locator('#send-pass').isEnabled());
    await page.click('#send-pass');
    await page.waitForSelector('#send-pass', { state: 'detached' });
    clean(problems);
    await context.close();
    return;
  }
  assert.fail('no deal in 20 had a short suit');
});

test('a card on its way freezes the hand, and a card the server did not answer is sent again until it is in', async () => {
  const { page, problems, context } = await open(browser, server.url);
  await page.selectOption('select[name=level]', 'random');
  await page.click('#play-guest');
  await page.waitForSelector('#send-pass');
  while ((await page.locator('.hand button.chosen').count()) < 3) {
    await page.locator('.hand button.card:not([disabled]):not(.chosen)').first().click();
  }
  await page.click('#send-pass');
  const myTurn = () => page.waitForFunction(() => !document.getElementById('send-pass')
    && document.querySelectorAll('.hand button.card.legal:not([disabled])').length > 0, undefined, { timeout: 30_000 });
  await myTurn();

  // A slow answer: until it is in, no other card of that hand can be chosen (it would be
  // sent on its own into the next trick, which the player has not seen).
  /** @type {string[]} */
  const posts = [];
  const actions = '**/api/v1/games/*/actions';
  await page.route(actions, async (route) => {
    posts.push(route.request().postData() ?? '');
    await new Promise((resolve) => setTimeout(resolve, 1_500));
    await route.continue();
  });
  await page.locator('.hand button.card.legal:not([disabled])').first().click();
  await page.waitForTimeout(500);
  assert.equal(await page.locator('.hand button.card:not([disabled])').count(), 0, 'the hand waits for the answer');
  await page.waitForFunction(() => document.querySelectorAll('.hand button.card:not([disabled])').length > 0
    || !document.querySelector('.hand button.card'), undefined, { timeout: 30_000 }).catch(() => {});
  await page.unroute(actions);
  assert.equal(posts.length, 1, 'one card sent');

  // No answer at all: the card is sent again, with its key, once the server can be reached.
  await myTurn();
  const card = String(await page.locator('.hand button.card.legal:not([disabled])').first().getAttribute('data-card'));
  await context.setOffline(true);
  await page.locator(`.hand button[data-card="${card}"]`).click();
  await page.waitForFunction(() => (document.getElementById('status')?.textContent ?? '').length > 0);
  await page.waitForTimeout(1_500);
  await context.setOffline(false);
  await page.waitForFunction((c) => !document.querySelector(`.hand button[data-card="${c}"]`), card, { timeout: 30_000 });
  const view = await gameView(page);
  assert.ok(!view.round.hand.includes(card), `${card} was played`);
  assert.deepEqual(problems.filter((p) => !p.includes('ERR_INTERNET_DISCONNECTED')), []);
  await context.close();
});

test('a double click creates one game and a signed-out tab leaves the table', async () => {
  const stamp = Date.now().toString(36);
  const { page, problems, context } = await open(browser, server.url);
  await signUp(page, `dbl_${stamp}`);
  await page.click('a[href="#/create"]');
  await page.dblclick('form.create button.primary');
  await page.waitForSelector('.table');
  await page.waitForTimeout(500);
  const mine = await page.evaluate(async () => {
    const session = JSON.parse(localStorage.getItem('leekha.session') ?? '{}');
    const res = await fetch('/api/v1/me/games?status=waiting', { headers: { authorization: `Bearer ${session.access_token}` } });
    return res.json();
  });
  assert.equal(mine.items.length, 1, 'one game');
  // The same account signs out in another tab: this one leaves the table.
  const other = await context.newPage();
  await other.goto(`${server.url}/#/account`);
  await other.getByRole('button', { name: 'Log out' }).click();
  await page.waitForSelector('#play-guest');
  assert.equal(await page.locator('.table').count(), 0);
  // The plain start page, saying why: the game that was open is not a link someone sent.
  assert.equal(await page.locator('#pending-link').count(), 0);
  assert.equal(await page.textContent('#play-guest'), 'Play as guest');
  assert.equal(await page.textContent('#status'), 'You were signed out in another tab.');
  assert.equal(new URL(page.url()).hash, '#/');
  clean(problems);
  await context.close();
});

test('a partnership table shows its rules, its team totals and which team won', async () => {
  const { page, problems, context } = await open(browser, server.url);
  page.on('dialog', (d) => d.accept());
  await signUp(page, `team_${Date.now().toString(36)}`);
  await page.click('a[href="#/create"]');
  await page.selectOption('select[name=preset]', 'partnership');
  await page.fill('input[name=target_score]', '20');
  await page.selectOption('select[name=forced_leekha]', 'queen_only');
  for (const seat of [1, 2, 3]) await page.selectOption(`select[name=seat${seat}]`, 'bot');
  await page.click('form.create button.primary');
  await page.waitForSelector('#send-pass');
  // Every option of the game, folded; the one chosen reads as chosen.
  await page.click('#rules summary');
  assert.equal(await page.locator('#rules dt').count(), 9);
  assert.equal(await page.locator('#rules dd[data-rule=forced_leekha]').innerText(), 'queen only');
  assert.equal(await page.locator('#rules dd[data-rule=mode]').innerText(), 'partnership');
  // A redraw (the bots' passes) keeps the rules open.
  await page.click('#hint');
  await page.click('#send-pass');
  await page.waitForFunction(() => !document.querySelector('#send-pass'));
  assert.equal(await page.locator('#rules').getAttribute('open'), '');
  assert.match(await page.locator('#team-totals').innerText(), /^Team A: \d+ · Team B: \d+$/);
  await page.click('#resign');
  await page.waitForSelector('#result .teams li', { timeout: 60_000 });
  const view = await gameView(page);
  const totals = [0, 1].map((team) => view.seats
    .filter((/** @type {{team: number}} */ s) => s.team === team)
    .reduce((/** @type {number} */ sum, /** @type {{total_score: number}} */ s) => sum + s.total_score, 0));
  const lines = await page.locator('#result .teams li').evaluateAll((items) =>
    items.map((li) => ({ team: li.getAttribute('data-team'), text: li.textContent, winner: li.classList.contains('winner') })));
  assert.equal(lines.length, 2);
  for (const [team, line] of lines.entries()) {
    const lost = view.result.losing_team === team;
    assert.equal(line.winner, !lost);
    assert.match(line.text ?? '', new RegExp(`^Team ${team === 0 ? 'A' : 'B'} \\(.+ & .+\\): ${totals[team]}, ${lost ? 'lost' : 'won'}$`));
  }
  assert.equal(await page.locator('#team-totals').innerText(), `Team A: ${totals[0]} · Team B: ${totals[1]}`);
  clean(problems);
  await context.close();
});

test('a hint picks a legal pass, chat shows a phrase, and resigning lets the bots finish', async () => {
  const { page, problems, context } = await open(browser, server.url);
  page.on('dialog', (d) => d.accept());
  await page.click('#play-guest');
  await page.waitForSelector('#send-pass');
  await page.click('#hint');
  await page.waitForFunction(() => document.querySelectorAll('.hand button.chosen').length === 3);
  assert.ok(await page.locator('#send-pass').isEnabled());
  await page.getByRole('button', { name: 'Good luck!' }).click();
  await page.waitForSelector('.chat .messages li:has-text("Good luck!")');
  await page.click('#send-pass');
  await page.click('#resign');
  await page.waitForSelector('#result', { timeout: 60_000 });
  clean(problems);
  await context.close();
});

test('the keyboard alone passes and plays: arrows through the hand, Enter to choose', async () => {
  const { page, problems, context } = await open(browser, server.url);
  await page.click('#play-guest');
  await page.waitForSelector('#send-pass');
  await page.locator('.hand button.card:not([disabled])').first().focus();
  for (let i = 0; i < 3; i++) {
    await page.keyboard.press('Enter');
    await page.waitForFunction((n) => document.querySelectorAll('.hand button.chosen').length === n, i + 1);
    await page.keyboard.press('ArrowRight');
  }
  // The hand is one Tab stop: the next one is the pass's button.
  await page.keyboard.press('Tab');
  assert.equal(await page.evaluate(() => document.activeElement?.id), 'send-pass');
  await page.keyboard.press('Enter');
  // While passing, the cards that may be passed are `.legal` too: wait for the play. The
  // pass's button is gone, and the hand takes the focus when the turn comes, as after a card.
  await page.waitForSelector('#send-pass', { state: 'detached' });
  await page.waitForFunction(() => document.activeElement?.matches('.hand button.card.legal:not([disabled])'), null, { timeout: 30_000 });
  const before = await page.locator('.hand button.card').count();
  await page.keyboard.press('Enter');
  await page.waitForFunction((n) => document.querySelectorAll('.hand button.card').length === n - 1, before);
  // The played card is gone, but the keyboard stays in the hand: at the next turn a card
  // that can be played has the focus, and the hand is one Tab stop.
  await page.waitForFunction(() => document.activeElement?.matches('.hand button.card:not([disabled])'), null, { timeout: 30_000 });
  assert.equal(await page.locator('.hand button.card[tabindex="0"]').count(), 1);
  await page.keyboard.press('Enter');
  await page.waitForFunction((n) => document.querySelectorAll('.hand button.card').length === n - 2, before);
  clean(problems);
  await context.close();
});

test('a card chosen while the answer to the pass is still on its way is played once it is in', async () => {
  const { page, problems, context } = await open(browser, server.url);
  // The server takes the pass at once, but its answer reaches the page only when released:
  // meanwhile the stream shows the page the first trick, and our turn in it.
  /** @type {() => void} */
  let release = () => {};
  const held = new Promise((resolve) => { release = () => resolve(undefined); });
  await page.route('**/actions', async (route) => {
    if (route.request().method() !== 'POST' || !String(route.request().postData()).includes('"pass"')) {
      await route.continue();
      return;
    }
    const response = await route.fetch();
    await held;
    await route.fulfill({ response });
  });
  await page.click('#play-guest');
  await page.waitForSelector('#send-pass');
  await page.click('#hint');
  await page.waitForFunction(() => document.querySelectorAll('.hand button.chosen').length === 3);
  await page.click('#send-pass');
  await page.waitForSelector('#send-pass', { state: 'detached' });
  await page.waitForSelector('.hand button.card.legal');
  const before = await page.locator('.hand button.card').count();
  await page.locator('.hand button.card.legal').first().click();
  release();
  await page.waitForFunction((n) => document.querySelectorAll('.hand button.card').length === n - 1, before);
  clean(problems);
  await context.close();
});

test('the Arabic page is right-to-left and speaks Arabic', async () => {
  const { page, problems, context } = await open(browser, server.url);
  await page.click('#lang');
  assert.equal(await page.getAttribute('html', 'dir'), 'rtl');
  assert.equal(await page.getAttribute('html', 'lang'), 'ar');
  assert.equal(await page.textContent('#play-guest'), 'العب كضيف');
  assert.equal(await page.evaluate(() => getComputedStyle(document.body).direction), 'rtl');
  await page.click('#play-guest');
  await page.waitForSelector('.hand button.card');
  const label = await page.locator('.hand button.card').first().getAttribute('aria-label');
  assert.match(String(label), /[\u0600-\u06FF]/, 'cards are named in Arabic');
  // The countdown speaks Arabic too.
  assert.doesNotMatch(String(await page.textContent('.countdown')), /[a-z]/);
  // The table is not mirrored: the next player, to whom a right pass goes, sits on the right.
  // Read in the page in one go: a redraw between two reads of the board (the bots' passes
  // arrive as events) would leave a locator's box null.
  const rightOfWest = () => page.evaluate(() => {
    const x = (/** @type {string} */ place) => document.querySelector(`.felt > .${place}`)?.getBoundingClientRect().x ?? NaN;
    return x('east') > x('west');
  });
  assert.ok(await rightOfWest(), 'the next seat is drawn on the right');
  // So is the card the next seat plays: the trick's grid is not mirrored either.
  const trickDirection = await page.evaluate(() => getComputedStyle(/** @type {Element} */ (document.querySelector('.trick'))).direction);
  assert.equal(trickDirection, 'ltr', 'each card of the trick lies on the side of its player');
  // The server's refusals read in Arabic as well (the API's English detail is for English).
  const table = page.url();
  await page.goto(`${server.url}/#/game/00000000-0000-4000-8000-000000000000`);
  await page.waitForSelector('#game-missing a[href="#/lobby"]');
  assert.doesNotMatch(String(await page.textContent('#game-missing')), /[A-Za-z]/);
  await page.goto(`${server.url}/#/game/abc`);
  await page.waitForSelector('#game-missing');
  assert.match(String(await page.textContent('#game-missing')), /لا توجد لعبة كهذه/);
  await page.goto(table);
  await page.waitForSelector('.hand button.card');
  // The choice survives a reload, and the page is right-to-left from its first frame, even
  // while the dictionaries are slow to come (the load event does not wait for them).
  await page.route('**/app/i18n/*.json', async (route) => {
    await new Promise((resolve) => setTimeout(resolve, 1_000));
    await route.continue();
  });
  await page.reload();
  assert.equal(await page.getAttribute('html', 'dir'), 'rtl');
  await appDrawn(page);
  await page.unroute('**/app/i18n/*.json');
  // The missing game's 404s were logged by the browser; nothing else.
  clean(problems.filter((p) => !/404/.test(p)));
  await context.close();
});

test('a guest keeps the account by choosing a name, then logs in with it', async () => {
  const { page, problems, context } = await open(browser, server.url);
  await page.click('#play-guest');
  await page.waitForSelector('.hand button.card');
  await page.click('a[href="#/account"]');
  const name = `kept_${Date.now().toString(36)}`;
  const form = page.locator('form[aria-label="Account"]');
  await form.locator('input[name=username]').fill(name);
  await form.locator('input[name=password]').fill('correct horse battery');
  await form.locator('button').click();
  await page.waitForSelector('#status:has-text("Saved.")');
  await page.getByRole('button', { name: 'Log out' }).click();
  const login = page.locator('form[aria-label="Log in"]');
  await login.locator('input[name=username]').fill(name);
  await login.locator('input[name=password]').fill('correct horse battery');
  await login.locator('button').click();
  // The guest's game is still theirs, first in the list.
  await page.waitForSelector('.games li.game a[href^="#/game/"]');
  clean(problems);
  await context.close();
});

test('the app is installable: a manifest and a service worker controlling the origin', async () => {
  const { page, problems, context } = await open(browser, server.url, { serviceWorkers: 'allow' });
  const manifest = await page.evaluate(async () => {
    const link = document.querySelector('link[rel=manifest]');
    return (await fetch(link?.getAttribute('href') ?? '')).json();
  });
  assert.equal(manifest.start_url, '/');
  assert.equal(manifest.display, 'standalone');
  const scope = await page.evaluate(async () => (await navigator.serviceWorker.ready).scope);
  assert.equal(scope, `${server.url}/`);
  clean(problems);
  await context.close();
});

test('turning notifications on subscribes with the server\'s VAPID key and registers a webpush device', async () => {
  // Headless chromium has no push service to reach, so the browser's subscribe is replaced
  // by one that records the key it was given and answers a well-formed subscription.
  const ecdh = createECDH('prime256v1');
  ecdh.generateKeys();
  const keys = { p256dh: ecdh.getPublicKey('base64url'), auth: randomBytes(16).toString('base64url') };
  const { page, problems, context } = await open(browser, server.url, { serviceWorkers: 'allow' });
  await context.grantPermissions(['notifications']);
  await page.addInitScript((k) => {
    PushManager.prototype.subscribe = async function (options) {
      const key = new Uint8Array(/** @type {ArrayBuffer} */ (options?.applicationServerKey));
      localStorage.setItem('test.key', btoa(String.fromCharCode(...key)).replace(/\+/g, '-').replace(/\//g, '_').replace(/=+$/, ''));
      const json = { endpoint: 'http://127.0.0.1:9/push/test', expirationTime: null, keys: k };
      return /** @type {PushSubscription} */ (/** @type {unknown} */ ({ ...json, toJSON: () => json }));
    };
  }, keys);
  await page.reload();
  await page.click('#play-guest');
  await page.waitForSelector('.hand button.card');
  await page.click('a[href="#/account"]');
  await page.click('#push');
  await page.waitForSelector('.note:has-text("Notifications are on")');
  const { vapid_public_key: vapid } = await (await fetch(`${server.url}/api/v1/push/config`)).json();
  assert.equal(await page.evaluate(() => localStorage.getItem('test.key')), vapid);
  const devices = await page.evaluate(async () => {
    const session = JSON.parse(localStorage.getItem('leekha.session') ?? '{}');
    return (await fetch('/api/v1/me/devices', { headers: { authorization: `Bearer ${session.access_token}` } })).json();
  });
  assert.equal(devices.items.length, 1);
  assert.equal(devices.items[0].platform, 'webpush');
  clean(problems);
  await context.close();
});

/**
 * Signs up through the landing page's form.
 * @param {import('playwright-core').Page} page
 * @param {string} name
 */
async function signUp(page, name) {
  const form = page.locator('form[aria-label="Sign up"]');
  await form.locator('input[name=username]').fill(name);
  await form.locator('input[name=password]').fill('correct horse battery');
  await form.locator('button').click();
  await page.waitForSelector('#quick');
}

test('four players in four browsers play one game against each other to the end', async () => {
  const players = await Promise.all([0, 1, 2, 3].map(() => open(browser, server.url)));
  const stamp = Date.now().toString(36);
  await Promise.all(players.map(({ page }, i) => signUp(page, `p${i}_${stamp}`)));
  const host = players[0].page;
  await host.click('a[href="#/create"]');
  await host.fill('input[name=target_score]', '1');
  await host.selectOption('select[name=visibility]', 'public');
  await host.click('form.create button.primary');
  await host.waitForSelector('.table');
  const id = host.url().split('/').at(-1);
  for (const { page } of players.slice(1)) {
    await page.click('a[href="#/lobby"]');
    // The lobby lists the table; taking its seat opens it.
    await page.locator('.games li', { hasText: `p0_${stamp}` }).getByRole('button').click();
    await page.waitForSelector('.table');
    assert.equal(page.url().split('/').at(-1), id);
  }
  // A fifth user watches from the start: no hand, no moves, the same ending.
  const watcher = await open(browser, server.url);
  await signUp(watcher.page, `w_${stamp}`);
  await watcher.page.goto(`${server.url}/#/game/${id}`);
  await watcher.page.waitForSelector('#turn-line:has-text("You are watching")');
  await Promise.all(players.map(({ page }) => playToTheEnd(page)));
  for (const { page, problems } of [...players, watcher]) {
    await page.waitForSelector('#result .ranking li');
    assert.equal(await page.locator('#result .ranking li').count(), 4);
    clean(problems);
  }
  assert.equal(await watcher.page.locator('.hand button').count(), 0);
  await Promise.all([...players, watcher].map(({ context }) => context.close()));
});

test('an invitation by username shows up live in my games, and the invitee takes the seat; the host changes the seats meanwhile', async () => {
  const stamp = Date.now().toString(36);
  const guestPlayer = await open(browser, server.url);
  const host = await open(browser, server.url);
  await signUp(guestPlayer.page, `inv_${stamp}`);
  await signUp(host.page, `host_${stamp}`);
  await host.page.click('a[href="#/create"]');
  await host.page.selectOption('select[name=seat1]', 'invite');
  await host.page.fill('input[name=user1]', `inv_${stamp}`);
  assert.ok(await host.page.locator('input[name=rated]').isEnabled());
  assert.ok(!(await host.page.locator('#rated-note').isVisible()));
  await host.page.selectOption('select[name=seat2]', 'bot');
  // A game with a bot is not rated: the box says so instead of being ignored.
  assert.ok(await host.page.locator('input[name=rated]').isDisabled());
  assert.ok(await host.page.locator('#rated-note').isVisible());
  await host.page.selectOption('select[name=timeout]', '600');
  await host.page.click('form.create button.primary');
  await host.page.waitForSelector('.table');
  // Seats are counted from 1 for people: the bot at the API's seat 2 is the third.
  assert.match(await host.page.locator('.seat[data-seat="2"] .name').innerText(), /^Bot 3\s/);
  // While the game waits, the host changes the seats no player holds, and not their own.
  assert.equal(await host.page.locator('.seat[data-seat="0"] .seat-controls').count(), 0);
  await host.page.click('.seat[data-seat="3"] [data-change=bot]');
  await host.page.waitForFunction(() => document.querySelector('.seat[data-seat="3"] .name')?.textContent?.startsWith('Bot 4'));
  // The invitation is withdrawn, then made again through the prompt.
  await host.page.click('.seat[data-seat="1"] [data-change=open]');
  await host.page.waitForFunction(() => document.querySelector('.seat[data-seat="1"] .name')?.textContent === 'Open seat');
  host.page.once('dialog', (d) => d.accept(`inv_${stamp}`));
  await host.page.click('.seat[data-seat="1"] [data-change=invite]');
  await host.page.waitForFunction((name) => document.querySelector('.seat[data-seat="1"] .name')?.textContent === `Invited: ${name}`, `inv_${stamp}`);
  // No reload: the feed's stream brings the invitation to the open list.
  const item = guestPlayer.page.locator('.games li', { hasText: `host_${stamp}` });
  await item.locator('.badge.invited').waitFor();
  // The seat kept for the invitee is not offered as open, and they are not a spectator.
  assert.match(String(await item.textContent()), /Reserved/);
  await item.locator('a').click();
  await guestPlayer.page.waitForFunction(() => document.querySelector('#turn-line')?.textContent?.startsWith('You are invited'));
  await guestPlayer.page.getByRole('button', { name: 'Take a seat' }).click();
  await guestPlayer.page.waitForSelector('#send-pass');
  clean(guestPlayer.problems);
  clean(host.problems);
  await guestPlayer.context.close();
  await host.context.close();
});

test('my games opened while the server cannot be reached says so, then catches up by itself', async () => {
  const stamp = Date.now().toString(36);
  const player = await open(browser, server.url);
  const host = await open(browser, server.url);
  await signUp(player.page, `off_${stamp}`);
  await signUp(host.page, `offhost_${stamp}`);
  await player.page.click('a[href="#/lobby"]');
  await player.context.setOffline(true);
  await player.page.click('a[href="#/mine"]');
  // In words and in the page's language, not fetch's "Failed to fetch".
  await player.page.waitForFunction(() => document.querySelector('#status')?.textContent === 'The server cannot be reached. Retrying…');
  await player.context.setOffline(false);
  // Nobody reloads: once the server answers, the list fills, the message goes, and an
  // invitation made after the outage arrives live.
  await player.page.waitForFunction(() => document.querySelector('#status')?.textContent === '', null, { timeout: 40_000 });
  await host.page.click('a[href="#/create"]');
  await host.page.selectOption('select[name=seat1]', 'invite');
  await host.page.fill('input[name=user1]', `off_${stamp}`);
  await host.page.click('form.create button.primary');
  await host.page.waitForSelector('.table');
  await player.page.locator('.games li', { hasText: `offhost_${stamp}` }).locator('.badge.invited').waitFor({ timeout: 40_000 });
  clean(host.problems);
  // The player's page logged the refused requests of the outage, and nothing else.
  assert.deepEqual(player.problems.filter((p) => !p.includes('ERR_INTERNET_DISCONNECTED')), []);
  await player.context.close();
  await host.context.close();
});

test("a game's link followed before signing in opens that game once signed in as a guest", async () => {
  const stamp = Date.now().toString(36);
  const host = await open(browser, server.url);
  await signUp(host.page, `link_${stamp}`);
  await host.page.click('a[href="#/create"]');
  await host.page.selectOption('select[name=seat2]', 'bot');
  await host.page.selectOption('select[name=seat3]', 'bot');
  await host.page.click('form.create button.primary');
  await host.page.waitForSelector('.table');
  const link = host.page.url();
  assert.match(link, /#\/game\/[0-9a-f-]{36}$/);
  const friend = await open(browser, server.url);
  await friend.page.goto(link);
  await friend.page.waitForSelector('#pending-link');
  await friend.page.click('#play-guest');
  await friend.page.getByRole('button', { name: 'Take a seat' }).click();
  await friend.page.waitForSelector('#send-pass');
  assert.equal(friend.page.url(), link);
  clean(friend.problems);
  clean(host.problems);
  await friend.context.close();
  await host.context.close();
});

test('an administrator bans a user from the console', async () => {
  const stamp = Date.now().toString(36);
  const bin = process.env.LEEKHA_BIN ?? `${process.env.CARGO_TARGET_DIR ?? new URL('../../target', import.meta.url).pathname}/debug/leekha`;
  execFileSync(bin, ['admin', 'create', `root_${stamp}`], {
    env: { ...process.env, DATABASE_URL: server.db, LEEKHA_ADMIN_PASSWORD: 'correct horse battery', RUST_LOG: 'warn' },
  });
  const victim = await open(browser, server.url);
  await signUp(victim.page, `victim_${stamp}`);

  const { page, problems, context } = await open(browser, server.url);
  const form = page.locator('form[aria-label="Log in"]');
  await form.locator('input[name=username]').fill(`root_${stamp}`);
  await form.locator('input[name=password]').fill('correct horse battery');
  await form.locator('button').click();
  await page.click('a[href="#/admin"]');
  await page.fill('input[type=search] >> nth=0', `victim_${stamp}`);
  await page.locator('form:has(input[type=search]) button').first().click();
  const row = page.locator(`#admin-users li[data-user="victim_${stamp}"]`);
  await row.getByRole('button', { name: 'Ban' }).click();
  await row.locator('.badge').waitFor();
  await page.waitForSelector('#admin-audit li:has-text("ban_user")');

  // The banned player's next request is refused, and the page signs them out, saying why,
  // also when that request is the page's own after a reload.
  await victim.page.click('a[href="#/lobby"]');
  await victim.page.waitForSelector('#status:has-text("banned")');
  await victim.page.waitForSelector('#play-guest');
  assert.match(String(await victim.page.textContent('#status')), /This account is banned/);
  // Every action shows in the audit log at once, not only the ban.
  await row.getByRole('button', { name: 'Unban' }).click();
  await page.waitForSelector('#admin-audit li:has-text("unban_user")');
  clean(problems);
  await context.close();
  await victim.context.close();
});

test('the two dictionaries have the same keys and placeholders, and plural forms the language has', () => {
  const read = (/** @type {string} */ name) => /** @type {Record<string, string>} */ (
    JSON.parse(readFileSync(new URL(`../../src/web/i18n/${name}.json`, import.meta.url), 'utf8')));
  const dicts = { en: read('en'), ar: read('ar') };
  // A count's forms (`key_one`, Arabic `key_few`…) follow each language's own categories.
  const form = /_(zero|one|two|few|many|other)$/;
  const base = (/** @type {Record<string, string>} */ d) =>
    Object.keys(d).filter((k) => !(form.test(k) && d[k.replace(form, '')] !== undefined)).sort();
  assert.deepEqual(base(dicts.en), base(dicts.ar), 'the same keys in en.json and ar.json');
  for (const [lang, d] of Object.entries(dicts)) {
    const categories = new Intl.PluralRules(lang).resolvedOptions().pluralCategories;
    for (const key of Object.keys(d)) {
      const m = form.exec(key);
      if (m && d[key.replace(form, '')] !== undefined) assert.ok(categories.includes(/** @type {Intl.LDMLPluralRule} */ (m[1])), `${lang}: ${key}`);
    }
  }
  const holes = (/** @type {string} */ text) => [...text.matchAll(/\{(\w+)\}/g)].map((m) => m[1]).sort().join();
  for (const key of base(dicts.en)) assert.equal(holes(dicts.ar[key]), holes(dicts.en[key]), `placeholders of ${key}`);
});

test('after the pass the table shows the cards given and to whom until the first trick, and who played each card of the last trick', async () => {
  const { page, problems, context } = await open(browser, server.url);
  await page.selectOption('select[name=level]', 'random');
  await page.click('#play-guest');
  await page.waitForSelector('#send-pass');
  assert.equal(await page.locator('#passed-cards').count(), 0);
  while ((await page.locator('.hand button.chosen').count()) < 3) {
    await page.locator('.hand button.card:not([disabled]):not(.chosen)').first().click();
  }
  const chosen = await page.locator('.hand button.chosen').evaluateAll((cards) => cards.map((c) => c.getAttribute('data-card')));
  await page.click('#send-pass');
  await page.waitForSelector('#passed-cards');
  const view = await gameView(page);
  assert.deepEqual([...view.round.passed].sort(), [...chosen].sort());
  const to = (view.my_seat + (view.round.pass_direction === 'right' ? 1 : 3)) % 4;
  const short = (/** @type {string} */ c) => `${c.slice(0, -1)}${{ S: '♠', H: '♥', C: '♣', D: '♦' }[c.slice(-1)]}`;
  const text = String(await page.locator('#passed-cards').textContent());
  assert.match(text, new RegExp(`^You passed \\S+ \\S+ \\S+ to Bot ${to + 1} \\(Random\\)$`), text);
  for (const card of chosen) assert.ok(text.includes(short(String(card))), `${card} in "${text}"`);
  // Still there with the cards received marked, once the first trick is under way.
  await page.waitForSelector('.hand button.card.received');
  assert.equal(await page.locator('#passed-cards').count(), 1);
  // Gone with the first trick taken; the last trick then shows who played each of its cards.
  await playToTheEnd(page, { until: '.last-trick' });
  await page.waitForSelector('#passed-cards', { state: 'detached' });
  // At our turn the game waits for us: the page and the view agree.
  await page.waitForSelector('.hand button.card.legal:not([disabled])');
  const last = (await gameView(page)).round.last_trick;
  const plays = await page.locator('.last-trick .mini-play').evaluateAll((items) =>
    items.map((item) => ({ seat: Number(item.getAttribute('data-seat')), name: item.querySelector('.mini-name')?.textContent })));
  assert.deepEqual(plays.map((p) => p.seat), last.cards.map((/** @type {{seat: number}} */ c) => c.seat));
  assert.deepEqual(plays.map((p) => p.name), plays.map((p) => (p.seat === 0 ? 'You' : `Bot ${p.seat + 1}`)));
  const label = String(await page.locator('.last-trick').getAttribute('aria-label'));
  for (const c of last.cards) assert.ok(label.includes(`${c.seat === 0 ? 'You' : `Bot ${c.seat + 1}`}`), label);
  clean(problems);
  await context.close();
});

test('a pass the server made when the time ran out is shown, and said so', async () => {
  const { page, problems, context } = await open(browser, server.url);
  await page.click('#play-guest');
  await page.waitForSelector('#send-pass');
  const game = await api(page, 'POST', '/games', {
    seats: [{ kind: 'me' }, { kind: 'bot', level: 'random' }, { kind: 'bot', level: 'random' }, { kind: 'bot', level: 'random' }],
    visibility: 'private',
    turn_timeout_seconds: 5,
  });
  await page.goto(`${server.url}/#/game/${game.id}`);
  await page.waitForSelector('#send-pass');
  // Nothing is chosen: the turn times out and the server passes for us.
  await page.waitForSelector('#passed-cards', { timeout: 30_000 });
  const text = String(await page.locator('#passed-cards').textContent());
  assert.match(text, /^Your time ran out: \S+ \S+ \S+ were passed for you to Bot \d \(Random\)$/, text);
  // So it reads after a reload too: the game's events say it.
  await page.reload();
  await page.waitForSelector('#passed-cards:has-text("Your time ran out")');
  clean(problems);
  await context.close();
});

test('the turn line is one live region, changed only when its text does', async () => {
  const { page, problems, context } = await open(browser, server.url);
  await page.click('#play-guest');
  await page.waitForSelector('#send-pass');
  await page.evaluate(() => {
    const line = /** @type {HTMLElement} */ (document.getElementById('turn-line'));
    Object.assign(window, { turnLine: line, turnChanges: 0 });
    new MutationObserver((records) => {
      Object.assign(window, { turnChanges: /** @type {any} */ (window).turnChanges + records.length });
    }).observe(line, { childList: true, characterData: true, subtree: true });
  });
  // Each chosen card redraws the table; the line says the same and is not touched.
  for (let i = 0; i < 3; i++) await page.locator('.hand button.card:not([disabled]):not(.chosen)').first().click();
  await page.waitForFunction(() => document.querySelectorAll('.hand button.chosen').length === 3);
  const same = () => page.evaluate(() => /** @type {any} */ (window).turnLine === document.getElementById('turn-line'));
  assert.ok(await same(), 'the same element');
  assert.equal(await page.evaluate(() => /** @type {any} */ (window).turnChanges), 0);
  await page.click('#send-pass');
  await page.waitForSelector('.hand button.card.received');
  assert.ok(await same(), 'the same element, its text changed');
  assert.ok(await page.evaluate(() => /** @type {any} */ (window).turnChanges) > 0);
  clean(problems);
  await context.close();
});

test('a guest is asked before logging out, as the account cannot be reached again', async () => {
  const { page, problems, context } = await open(browser, server.url);
  await page.click('#play-guest');
  await page.waitForSelector('.hand button.card');
  await page.click('a[href="#/account"]');
  /** @type {string[]} */
  const asked = [];
  page.once('dialog', (d) => { asked.push(d.message()); d.dismiss(); });
  await page.getByRole('button', { name: 'Log out' }).click();
  await page.waitForTimeout(300);
  assert.equal(asked.length, 1, 'a confirmation');
  assert.match(asked[0], /guest account/);
  assert.match(asked[0], /choose a name and a password in Account/);
  // Declined: still signed in.
  assert.ok(await page.evaluate(() => localStorage.getItem('leekha.session') !== null));
  assert.equal(await page.locator('form[aria-label="Account"]').count(), 1);
  page.once('dialog', (d) => d.accept());
  await page.getByRole('button', { name: 'Log out' }).click();
  await page.waitForSelector('#play-guest');
  clean(problems);
  await context.close();
});

test("a kept link to a game the new account may not see says so, with the way to the lobby", async () => {
  const stamp = Date.now().toString(36);
  const host = await open(browser, server.url);
  await signUp(host.page, `priv_${stamp}`);
  await host.page.click('#quick');
  await host.page.waitForSelector('.table');
  const link = host.page.url();
  const friend = await open(browser, server.url);
  await friend.page.goto(link);
  await friend.page.waitForSelector('#pending-link');
  await friend.page.click('#play-guest');
  // A private game with no open seat is not the guest's to see.
  await friend.page.waitForSelector('#game-missing:has-text("No such game")');
  await friend.page.click('#game-missing a[href="#/lobby"]');
  await friend.page.waitForSelector('ul.games[aria-label="Lobby"]');
  clean(friend.problems.filter((p) => !/404/.test(p)));
  clean(host.problems);
  await friend.context.close();
  await host.context.close();
});

test('Arabic: a refused invitation keeps the server\'s detail, and counts take the right form', async () => {
  const { page, problems, context } = await open(browser, server.url);
  await signUp(page, `ar_${Date.now().toString(36)}`);
  await page.click('#lang');
  await page.click('a[href="#/create"]');
  await page.selectOption('select[name=seat1]', 'invite');
  await page.fill('input[name=user1]', 'nobody_here_xyz');
  await page.click('form.create button.primary');
  await page.waitForFunction(() => (document.getElementById('status')?.textContent ?? '').includes('nobody_here_xyz'));
  assert.match(String(await page.textContent('#status')), /المدخلات غير صالحة/);
  // Arabic numbers: 3–10 take the plural, 11 and above the singular, 1 and 2 their own.
  const said = await page.evaluate(async () => {
    const { tn } = await import('/app/js/i18n.js');
    return {
      p31: tn('table.round_took', 31, { name: 'x', total: 40 }),
      p5: tn('table.round_took', 5, { name: 'x', total: 40 }),
      w1: tn('table.watchers', 1),
      w3: tn('table.watchers', 3),
      you: tn('table.took_you', 4),
      cards: tn('table.cards', 13),
    };
  });
  assert.equal(said.p31, 'x: 31 نقطة (المجموع 40)');
  assert.equal(said.p5, 'x: 5 نقاط (المجموع 40)');
  assert.equal(said.w1, 'مشاهد واحد');
  assert.equal(said.w3, '3 مشاهدين');
  assert.equal(said.you, 'أخذتَ 4 نقاط');
  assert.equal(said.cards, '13 ورقة');
  clean(problems.filter((p) => !/400/.test(p)));
  await context.close();
});

test('a 32-letter name widens no page at 320 px, in English and Arabic, and is kept apart from Arabic words', async () => {
  const stamp = Date.now().toString(36).slice(-8);
  const long = `${'W'.repeat(32 - stamp.length)}${stamp}`;
  const host = await open(browser, server.url);
  const phone = await open(browser, server.url, { viewport: { width: 320, height: 640 } });
  await signUp(host.page, long);
  await signUp(phone.page, `ph_${stamp}`);
  await host.page.click('a[href="#/create"]');
  await host.page.selectOption('select[name=seat1]', 'invite');
  await host.page.fill('input[name=user1]', `ph_${stamp}`);
  await host.page.selectOption('select[name=seat2]', 'bot');
  await host.page.selectOption('select[name=seat3]', 'bot');
  await host.page.selectOption('select[name=visibility]', 'public');
  await host.page.selectOption('select[name=timeout]', '600');
  await host.page.click('form.create button.primary');
  await host.page.waitForSelector('.table');
  // And a table waiting in the lobby, for the lobby's check in both languages.
  await api(host.page, 'POST', '/games', { seats: [{ kind: 'me' }, { kind: 'open' }, { kind: 'open' }, { kind: 'open' }], visibility: 'public' });
  const p = phone.page;
  /** @param {string} where */
  const fits = async (where) => assert.ok(await pageWidth(p) <= 320, `${where}: ${await pageWidth(p)} px wide`);
  await p.reload();
  await p.locator('.games li', { hasText: long }).waitFor();
  await fits('my games');
  await p.click('a[href="#/lobby"]');
  await p.locator('.games li', { hasText: long }).waitFor();
  await fits('lobby');
  await p.click('a[href="#/mine"]');
  await p.locator('.games li a', { hasText: long }).click();
  await p.getByRole('button', { name: 'Take a seat' }).click();
  await p.waitForSelector('#send-pass');
  await host.page.waitForSelector('#send-pass');
  await host.page.click('#hint');
  await host.page.waitForFunction(() => document.querySelectorAll('.hand button.chosen').length === 3);
  await host.page.click('#send-pass');
  // The phone plays until the long name's turn: the turn line waits for them.
  await playToTheEnd(p, { until: `#turn-line:has-text("${long}")` });
  await fits('the table');
  assert.equal(await p.locator('.seat[data-seat="0"] .name .who').getAttribute('title'), long);
  await p.click('#lang');
  await p.waitForSelector(`#turn-line:has-text("${long}")`);
  await fits('the Arabic table');
  // Every name written left to right sits in its own <bdi> among the Arabic words.
  const loose = await p.evaluate((name) => {
    const walker = document.createTreeWalker(document.body, NodeFilter.SHOW_TEXT);
    const found = [];
    for (let node = walker.nextNode(); node; node = walker.nextNode()) {
      if (node.textContent?.includes(name) && !node.parentElement?.closest('bdi')) found.push(node.parentElement?.outerHTML);
    }
    return found;
  }, long);
  assert.deepEqual(loose, []);
  await p.click('a[href="#/mine"]');
  await p.locator('.games li', { hasText: long }).waitFor();
  await fits('my games in Arabic');
  assert.match(String(await p.locator('.games li', { hasText: long }).locator('.seats').textContent()), /، /);
  await p.click('a[href="#/lobby"]');
  await p.locator('.games li', { hasText: long }).waitFor();
  await fits('the lobby in Arabic');
  clean(host.problems);
  clean(phone.problems);
  await host.context.close();
  await phone.context.close();
});
