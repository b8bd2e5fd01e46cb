// English and Arabic. The page's `lang` and `dir` follow the chosen language, so the layout
// mirrors for Arabic (CSS uses logical properties: inline-start, not left).

/** @typedef {'en' | 'ar'} Lang */

/**
 * The dictionary of `name`, from `/app/i18n/<name>.json` (data, so that a translator edits
 * JSON rather than code; the service worker keeps both for offline starts).
 * @param {Lang} name
 * @returns {Promise<Record<string, string>>}
 */
async function dictionary(name) {
  const res = await fetch(new URL(`../i18n/${name}.json`, import.meta.url));
  if (!res.ok) throw new Error(`i18n/${name}.json: ${res.status}`);
  return res.json();
}

const STORE = 'leekha.lang';

/** @type {Lang} */
let lang = localStorage.getItem(STORE) === 'ar' ? 'ar' : 'en';

// The direction is set before the dictionaries are awaited: the page's load event does not
// wait for a module's top-level await, and an Arabic page must never show a frame laid out
// left to right.
applyDirection();

const [en, ar] = await Promise.all([dictionary('en'), dictionary('ar')]);

/** The language in use. */
export function currentLang() {
  return lang;
}

/**
 * The text for `key`, with `{name}` placeholders filled in. An unknown key shows itself, so a
 * missing translation is visible rather than blank.
 * @param {string} key
 * @param {Record<string, string | number>} [params]
 */
export function t(key, params = {}) {
  const text = (lang === 'ar' ? ar : en)[key] ?? en[key] ?? key;
  return text.replace(/\{(\w+)\}/g, (_, name) => String(params[name] ?? `{${name}}`));
}

/**
 * `t` for a count: the key's `_one` form when `n` is 1 and the language has one ("took 1
 * point"), else the key itself.
 * @param {string} key @param {number} n @param {Record<string, string | number>} [params]
 */
export function tn(key, n, params = {}) {
  const one = `${key}_one`;
  const has = (lang === 'ar' ? ar : en)[one] !== undefined;
  return t(n === 1 && has ? one : key, { ...params, n });
}

/**
 * What a problem `code` of the API means, in the page's language, when the dictionary has it
 * (`problem.<code>`); `null` otherwise. Only Arabic has such texts: in English the server's
 * own `detail` says it best, being particular to the request.
 * @param {string} code
 */
export function problemText(code) {
  return lang === 'ar' ? ar[`problem.${code}`] ?? null : null;
}

/** Sets `lang` and `dir` on the page, and its title. */
export function applyLang() {
  applyDirection();
  document.title = t('app.title');
}

/** Sets `lang` and `dir` on the page (no dictionary needed). */
function applyDirection() {
  document.documentElement.lang = lang;
  document.documentElement.dir = lang === 'ar' ? 'rtl' : 'ltr';
}

/**
 * @param {Lang} next
 */
export function setLang(next) {
  lang = next;
  localStorage.setItem(STORE, next);
  applyLang();
}
