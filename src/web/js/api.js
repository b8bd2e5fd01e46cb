// The public API, same-origin, typed by openapi/api.d.ts (generated from openapi/openapi.json,
// imported as `leekha-api`).
// Tokens live in localStorage; an access token is refreshed shortly before it expires, or
// once after a 401, with one refresh in flight at a time (a refresh token works once).

/** @typedef {import('leekha-api').components['schemas']} S */
/** @typedef {S['TokenResponse']} TokenResponse */
/** @typedef {S['UserView']} UserView */
/** @typedef {S['GameView']} GameView */
/** @typedef {S['Problem']} Problem */

const BASE = '/api/v1';
const STORE = 'leekha.session';

/**
 * @typedef {object} Session
 * @property {string} access_token
 * @property {string} refresh_token
 * @property {number} expires_at  milliseconds since the epoch
 * @property {UserView} user
 */

/** An error answer of the API: its problem+json body. */
export class ApiError extends Error {
  /**
   * @param {number} status
   * @param {Partial<Problem>} problem
   */
  constructor(status, problem) {
    super(problem.detail ?? problem.title ?? `HTTP ${status}`);
    this.status = status;
    this.code = problem.code ?? 'unknown';
    /** Whether this answer ended the session (the start page says why). */
    this.ended = false;
  }
}

/** @type {Session | null} */
let session = load();
/** @type {Promise<void> | null} */
let refreshing = null;
/** @type {Set<() => void>} */
const listeners = new Set();
/** @type {Set<() => void>} */
const answered = new Set();

/** @param {() => void} f called whenever the server answers a call (it can be reached) */
export function onAnswer(f) {
  answered.add(f);
}

/** @returns {Session | null} */
function load() {
  try {
    const raw = localStorage.getItem(STORE);
    return raw ? JSON.parse(raw) : null;
  } catch {
    return null;
  }
}

/**
 * Why the session ended, until the page has said it (see `takeEnded`): the server ended it
 * (`banned`, `account_deleted`, `expired` when its refresh token was refused), or another
 * tab signed out (`signed_out`).
 */
/** @type {string | null} */
let ended = null;

// The session is kept twice. localStorage is read at once when a page starts and tells other
// tabs of a change (`storage` events), but another tab's copy of it catches up only a moment
// after a write: two tabs refreshing at the same instant could both read the token already
// spent, and a refresh token spent twice ends the session. IndexedDB is consistent across
// tabs (a read sees every transaction committed before it), so the tab holding the refresh
// lock reads the pair from there before it spends one.
const IDB_NAME = 'leekha';
const IDB_STORE = 'session';
/** @type {Promise<IDBDatabase | null> | null} */
let idb = null;
/** The last write of the session to IndexedDB, awaited before the refresh lock is let go. */
/** @type {Promise<void>} */
let remembered = Promise.resolve();

/** @returns {Promise<IDBDatabase | null>} */
function openIdb() {
  idb ??= new Promise((resolve) => {
    if (!('indexedDB' in window)) {
      resolve(null);
      return;
    }
    const req = indexedDB.open(IDB_NAME, 1);
    req.onupgradeneeded = () => req.result.createObjectStore(IDB_STORE);
    req.onsuccess = () => resolve(req.result);
    req.onerror = () => resolve(null);
    req.onblocked = () => resolve(null);
  });
  return idb;
}

/** @param {Session | null} next */
async function remember(next) {
  const db = await openIdb();
  if (!db) return;
  await new Promise((resolve) => {
    const tx = db.transaction(IDB_STORE, 'readwrite');
    if (next) tx.objectStore(IDB_STORE).put(next, 'current');
    else tx.objectStore(IDB_STORE).delete('current');
    tx.oncomplete = tx.onerror = tx.onabort = () => resolve(undefined);
  });
}

/**
 * The newest session any tab has written: IndexedDB's, or localStorage's where that is newer
 * (IndexedDB unavailable, or a write to it that failed).
 * @returns {Promise<Session | null>}
 */
async function newest() {
  const local = load();
  const db = await openIdb();
  if (!db) return local;
  /** @type {Session | null} */
  const stored = await new Promise((resolve) => {
    const req = db.transaction(IDB_STORE, 'readonly').objectStore(IDB_STORE).get('current');
    req.onsuccess = () => resolve(req.result ?? null);
    req.onerror = () => resolve(null);
  });
  if (!stored) return local;
  if (!local) return stored;
  return stored.expires_at >= local.expires_at ? stored : local;
}

/** @param {Session | null} next */
function save(next) {
  session = next;
  if (next) localStorage.setItem(STORE, JSON.stringify(next));
  else localStorage.removeItem(STORE);
  remembered = remember(next);
  listeners.forEach((f) => f());
}

/** @param {TokenResponse} tokens */
function fromTokens(tokens) {
  save({
    access_token: tokens.access_token,
    refresh_token: tokens.refresh_token,
    expires_at: Date.now() + tokens.expires_in * 1000,
    user: tokens.user,
  });
}

/** The signed-in user, or null. */
export function currentUser() {
  return session?.user ?? null;
}

/** @param {() => void} f called when the session changes (sign-in, sign-out, rename) */
export function onSession(f) {
  listeners.add(f);
}

/** Why the session ended (see `ended`), once; null otherwise. */
export function takeEnded() {
  const why = ended;
  ended = null;
  return why;
}

/**
 * Spends the refresh token for a new pair. Tabs share one session, and a refresh token works
 * once (a second use revokes the session): under a lock held across tabs, a tab first looks
 * whether another one already refreshed (in IndexedDB, which every tab sees alike), and
 * takes that pair instead.
 */
async function refresh() {
  if (!refreshing) {
    const spent = session?.refresh_token;
    const run = async () => {
      const stored = await newest();
      if (stored && stored.refresh_token !== spent) {
        // Another tab refreshed meanwhile: its pair is ours too.
        if (stored.refresh_token !== load()?.refresh_token) save(stored);
        else session = stored;
        return;
      }
      if (!spent) throw new ApiError(401, { code: 'invalid_token' });
      const res = await fetch(`${BASE}/auth/refresh`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ refresh_token: spent }),
      });
      if (!res.ok) {
        const problem = await res.json().catch(() => ({}));
        const err = new ApiError(res.status, problem);
        err.ended = true;
        ended = problem.code === 'banned' || problem.code === 'account_deleted' ? problem.code : 'expired';
        save(null);
        throw err;
      }
      fromTokens(await res.json());
      // The next tab to take the lock must find this pair.
      await remembered;
    };
    // The lock's promise settles with the callback's (lib.dom types it one level too deep).
    const locked = navigator.locks
      ? /** @type {Promise<void>} */ (/** @type {unknown} */ (navigator.locks.request('leekha.refresh', run)))
      : run();
    refreshing = locked.finally(() => {
      refreshing = null;
    });
  }
  return refreshing;
}

// Another tab signed in, out, or refreshed: follow it.
window.addEventListener('storage', (e) => {
  if (e.key !== STORE) return;
  const was = session;
  session = load();
  if (was && !session) ended ??= 'signed_out';
  listeners.forEach((f) => f());
});

/**
 * @typedef {object} Options
 * @property {unknown} [body]
 * @property {Record<string, string>} [headers]
 * @property {boolean} [auth]  send the access token (default true)
 * @property {AbortSignal} [signal]
 */

/**
 * Calls the API and returns the parsed JSON body (undefined for 204/304).
 * @param {string} method
 * @param {string} path  under /api/v1
 * @param {Options} [options]
 * @returns {Promise<any>}
 */
export async function call(method, path, options = {}) {
  const { body, auth = true, signal } = options;
  if (auth && session && session.expires_at - Date.now() < 30_000) await refresh();
  const send = () => {
    /** @type {Record<string, string>} */
    const headers = { accept: 'application/json', ...options.headers };
    if (body !== undefined) headers['content-type'] = 'application/json';
    if (auth && session) headers.authorization = `Bearer ${session.access_token}`;
    return fetch(`${BASE}${path}`, {
      method,
      headers,
      body: body === undefined ? undefined : JSON.stringify(body),
      signal,
    });
  };
  let res = await send();
  if (res.status === 401 && auth && session) {
    await refresh();
    res = await send();
  }
  answered.forEach((f) => f());
  if (res.status === 204 || res.status === 304) return undefined;
  const data = await res.json().catch(() => ({}));
  if (!res.ok) {
    const err = new ApiError(res.status, data);
    if (data.code === 'banned' || data.code === 'account_deleted') {
      ended = data.code;
      err.ended = true;
      save(null);
    }
    throw err;
  }
  return data;
}

/** Creates a guest account and signs in with it. */
export async function guest() {
  fromTokens(await call('POST', '/auth/guest', { auth: false }));
}

/**
 * @param {'login' | 'register'} which
 * @param {string} username
 * @param {string} password
 */
export async function signIn(which, username, password) {
  /** @type {S['Credentials']} */
  const body = { username, password };
  fromTokens(await call('POST', `/auth/${which}`, { body, auth: false }));
}

export async function signOut() {
  const token = session?.refresh_token;
  if (token) await call('POST', '/auth/logout', { body: { refresh_token: token } }).catch(() => {});
  save(null);
}

/**
 * Renames the account (and sets a password: how a guest keeps the account).
 * @param {S['UpdateMe']} change
 */
export async function updateMe(change) {
  // Our refresh token rides along, so that a password change keeps this session.
  /** @type {S['UpdatedMe']} */
  const answer = await call('PATCH', '/me', { body: { ...change, refresh_token: session?.refresh_token } });
  if (!session) return;
  const { session_kept, sessions_revoked, ...user } = answer;
  if (!session_kept) save(null);
  else save({ ...session, user });
}

/** Reads the account again (role changes, a rename in another tab). */
export async function reloadMe() {
  /** @type {UserView} */
  const user = await call('GET', '/me');
  if (session) save({ ...session, user });
}

/** A fresh key for `Idempotency-Key`. */
export function newKey() {
  return crypto.randomUUID();
}
