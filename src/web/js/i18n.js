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

/** @param {string} key */
function template(key) {
  return (lang === 'ar' ? ar : en)[key] ?? en[key] ?? key;
}

/**
 * The text for `key`, with `{name}` placeholders filled in. An unknown key shows itself, so a
 * missing translation is visible rather than blank.
 * @param {string} key
 * @param {Record<string, string | number>} [params]
 */
export function t(key, params = {}) {
  return template(key).replace(/\{(\w+)\}/g, (_, name) => String(params[name] ?? `{${name}}`));
}

/**
 * `t`, as pieces for an element: a parameter that is a node (a player's name in a `<bdi>`,
 * a row of cards) is put in as it is, so that a name written left to right keeps its place
 * among Arabic words and numbers.
 * @param {string} key
 * @param {Record<string, string | number | Node>} [params]
 * @returns {(string | Node)[]}
 */
export function tp(key, params = {}) {
  return template(key).split(/(\{\w+\})/).filter(Boolean).map((piece) => {
    const name = /^\{(\w+)\}$/.exec(piece)?.[1];
    if (name === undefined) return piece;
    const value = params[name];
    return value instanceof Node ? value : String(value ?? piece);
  });
}

/** @type {Map<string, Intl.PluralRules>} */
const pluralRules = new Map();

/**
 * The key for `n` of something: `<key>_<category>` when the language's dictionary has it
 * (the categories of `Intl.PluralRules`: English `one`; Arabic `zero`, `one`, `two`, `few`
 * for 3–10, `many` for 11–99), else `key` itself.
 * @param {string} key @param {number} n
 */
export function plural(key, n) {
  let rules = pluralRules.get(lang);
  if (!rules) pluralRules.set(lang, (rules = new Intl.PluralRules(lang)));
  const form = `${key}_${rules.select(n)}`;
  return (lang === 'ar' ? ar : en)[form] !== undefined ? form : key;
}

/**
 * `t` for a count, in the form the language gives that number ("took 1 point", "31 نقطة",
 * "5 نقاط"); `{n}` is the count.
 * @param {string} key @param {number} n @param {Record<string, string | number>} [params]
 */
export function tn(key, n, params = {}) {
  return t(plural(key, n), { ...params, n });
}

/**
 * `tp` for a count (see `tn`).
 * @param {string} key @param {number} n @param {Record<string, string | number | Node>} [params]
 */
export function tpn(key, n, params = {}) {
  return tp(plural(key, n), { ...params, n });
}

/**
 * A text that came from elsewhere (a username, the server's English detail) set apart from
 * the words around it (Unicode isolates), for the places that take only a string: a Latin
 * name beside a number in an Arabic sentence would otherwise swap places with it.
 * @param {string} text
 */
export function isolate(text) {
  return `\u2068${text}\u2069`;
}

/**
 * What a problem `code` of the API means, in the page's language, when the dictionary has it
 * (`problem.<code>`); `null` otherwise. Only Arabic uses them here: in English the server's
 * own `detail` says it best, being particular to the request (the English dictionary has
 * the same keys, for the pages that say a problem in their own words).
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
