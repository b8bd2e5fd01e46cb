import { isolate, problemText, t } from './i18n.js';

// Small DOM helpers: every element is built with textContent and properties, never from an
// HTML string, so nothing a player typed can become markup.

/**
 * @typedef {{[key: string]: string | number | boolean | null | undefined | EventListener}} Attrs
 * @typedef {Node | string | null | undefined | false} Child
 */

/**
 * Creates an element. Keys starting with `on` add listeners; `class`, `aria-*`, `data-*`
 * and the rest become attributes (a `false`, `null` or `undefined` value leaves it out).
 * @template {keyof HTMLElementTagNameMap} K
 * @param {K} tag
 * @param {Attrs} [attrs]
 * @param {...(Child | Child[])} children
 * @returns {HTMLElementTagNameMap[K]}
 */
export function h(tag, attrs = {}, ...children) {
  const el = document.createElement(tag);
  for (const [key, value] of Object.entries(attrs)) {
    if (typeof value === 'function') {
      el.addEventListener(key.slice(2), value);
    } else if (value === true) {
      el.setAttribute(key, '');
    } else if (value !== false && value !== null && value !== undefined) {
      el.setAttribute(key, String(value));
    }
  }
  append(el, children);
  return el;
}

/**
 * @param {Element} el
 * @param {(Child | Child[])[]} children
 */
export function append(el, children) {
  for (const child of children.flat()) {
    if (child === null || child === undefined || child === false) continue;
    el.append(typeof child === 'string' ? document.createTextNode(child) : child);
  }
}

/**
 * Replaces an element's children.
 * @param {Element} el
 * @param {...(Child | Child[])} children
 */
export function replace(el, ...children) {
  el.replaceChildren();
  append(el, children);
}

/**
 * The element with this id; throws when the page lacks it.
 * @param {string} id
 * @returns {HTMLElement}
 */
export function byId(id) {
  const el = document.getElementById(id);
  if (!el) throw new Error(`#${id} is missing`);
  return el;
}

/** Whether the status line says the server cannot be reached (see `reached`). */
let offline = false;

/**
 * Shows a message in the status line (errors, mostly); empty clears it.
 * @param {string} text
 * @param {'error' | 'ok'} [tone] `ok` for what went as asked, not in an error's colours
 */
export function say(text, tone = 'error') {
  offline = false;
  const status = byId('status');
  status.textContent = text;
  status.classList.toggle('ok', tone === 'ok');
}

/** @param {unknown} err */
export function fail(err) {
  // A request that ended the session has already brought back the start page, which says
  // why in the user's language; the server's sentence would only replace it.
  const code = err instanceof Error && 'code' in err ? err.code : null;
  if (code === 'banned' || code === 'account_deleted') return;
  if (err instanceof Error && 'ended' in err && err.ended) return;
  // fetch's own failure (no answer at all) says "Failed to fetch" in English whatever the
  // page's language: say that the server cannot be reached, in the user's.
  if (unreachable(err)) {
    say(t('error.offline'));
    offline = true;
    return;
  }
  const local = typeof code === 'string' ? problemText(code) : null;
  const detail = err instanceof Error ? err.message : String(err);
  // A 400 is about what was asked (`no user named "x" to invite`): the translation says what
  // kind of problem it is, the server's own words which one.
  const status = err instanceof Error && 'status' in err ? err.status : null;
  const text = local && status === 400 && detail && detail !== local ? `${local} ${isolate(detail)}` : local ?? detail;
  say(t('error.generic', { detail: text }));
}

/**
 * A player's name, kept apart from the words and numbers around it (a Latin name in an
 * Arabic sentence, an Arabic one in English), and allowed to wrap anywhere: a name of 32
 * letters must not widen a phone's page.
 * @param {string} name
 * @param {string} [title] the full name, where CSS may shorten it
 */
export function who(name, title) {
  return h('bdi', { class: 'who', title }, name);
}

/**
 * Items one after the other with the language's separator ("a, b" / "a، b").
 * @param {(string | Node)[]} items
 * @returns {(string | Node)[]}
 */
export function list(items) {
  return items.flatMap((item, i) => (i === 0 ? [item] : [t('list.sep'), item]));
}

/**
 * Whether a request failed without any answer (offline, the server restarting), as fetch
 * says it: such a request may be sent again.
 * @param {unknown} err
 */
export function unreachable(err) {
  return err instanceof TypeError && /fetch|network|load failed/i.test(err.message);
}

/**
 * Runs `work` for each `type` event on `el`, one at a time: while one runs, the next are
 * dropped and `el`'s buttons are disabled, so that a double click does not create two games,
 * post a message twice or take a seat twice. A form's submit never navigates.
 * @param {HTMLElement} el a button, or a form
 * @param {'click' | 'submit'} type
 * @param {(e: Event) => unknown} work
 */
export function onceAtATime(el, type, work) {
  let running = false;
  el.addEventListener(type, async (e) => {
    if (type === 'submit') e.preventDefault();
    if (running) return;
    running = true;
    const controls = el instanceof HTMLButtonElement ? [el] : [...el.querySelectorAll('button')];
    const were = controls.map((b) => b.disabled);
    controls.forEach((b) => { b.disabled = true; });
    try {
      await work(e);
    } finally {
      running = false;
      controls.forEach((b, i) => { b.disabled = were[i]; });
    }
  });
}

/** The server answered again: a status line that said it could not be reached is cleared. */
export function reached() {
  if (offline) say('');
}

/**
 * Navigates to a view, e.g. `game/<id>`; the same view again renders it afresh.
 * @param {string} path
 */
export function go(path) {
  if (location.hash === `#/${path}`) window.dispatchEvent(new HashChangeEvent('hashchange'));
  else location.hash = `#/${path}`;
}

/**
 * A duration for people: `2d 3h`, `4h 05m`, `3:07`.
 * @param {number} ms
 */
export function duration(ms) {
  const s = Math.max(0, Math.floor(ms / 1000));
  const d = Math.floor(s / 86400);
  const hh = Math.floor((s % 86400) / 3600);
  const mm = Math.floor((s % 3600) / 60);
  const ss = s % 60;
  if (d > 0) return t('duration.days', { d, h: hh });
  if (hh > 0) return t('duration.hours', { h: hh, m: String(mm).padStart(2, '0') });
  return `${mm}:${String(ss).padStart(2, '0')}`;
}
