// Following what happens live: Server-Sent Events through a stream ticket (EventSource cannot
// send the bearer token), and, where a stream cannot be had, the long-poll of the same items.
// Neither ever polls in a loop: each request waits on the server until something happens.

import { ApiError, call } from './api.js';

/** @typedef {import('leekha-api').components['schemas']} S */
/** @typedef {S['EventView']} EventView */
/** @typedef {S['NotificationView']} NotificationView */

/** The event types a game stream names in `event:` (EventSource wants a listener per name). */
const GAME_EVENTS = [
  'game_started', 'round_dealt', 'pass_committed', 'passes_exchanged', 'card_played',
  'trick_won', 'round_scored', 'game_finished', 'seat_changed', 'turn_timed_out',
  'game_aborted', 'chat_message',
];
/** The notification types of the feed stream. */
const FEED_EVENTS = [
  'your_turn', 'invited', 'game_started', 'game_finished', 'turn_reminder',
  'seat_taken_by_bot', 'friend_request', 'chat_message',
];

/**
 * @typedef {{stop: () => void, mode: () => 'stream' | 'long-poll' | 'stopped'}} Following
 */

/**
 * Delivers each item after `after`, in order and once, until `stop()` or an ending item.
 * @template {{seq: number, type: string}} T
 * @param {object} source
 * @param {string} source.stream   the stream's path under /api/v1
 * @param {(after: number) => string} source.poll  the long-poll's path after a seq
 * @param {(page: any) => T[]} source.items  the items of a long-poll page
 * @param {string[]} source.types  the `event:` names the stream uses
 * @param {(item: T) => boolean} source.ends  whether nothing follows this item
 * @param {number} after
 * @param {(item: T) => void} onItem
 * @returns {Following}
 */
function subscribe(source, after, onItem) {
  let last = after;
  let stopped = false;
  let failures = 0;
  /** @type {'stream' | 'long-poll' | 'stopped'} */
  let mode = typeof EventSource === 'function' ? 'stream' : 'long-poll';
  /** @type {EventSource | null} */
  let es = null;
  const abort = new AbortController();

  /** @param {T} item */
  const deliver = (item) => {
    if (item.seq <= last) return;
    last = item.seq;
    failures = 0;
    onItem(item);
    if (source.ends(item)) stop();
  };

  const stream = async () => {
    /** @type {S['StreamTicket']} */
    const { ticket } = await call('POST', '/auth/stream-ticket', { signal: abort.signal });
    if (stopped) return;
    const open = new EventSource(`/api/v1${source.stream}?after=${last}&ticket=${encodeURIComponent(ticket)}`);
    es = open;
    /** @param {Event} e */
    const handle = (e) => deliver(JSON.parse(/** @type {MessageEvent} */ (e).data));
    source.types.forEach((type) => open.addEventListener(type, handle));
    open.onerror = () => {
      // A ticket works once, so EventSource's own reconnect would be refused: reconnect
      // ourselves with a new ticket, from the last item we have.
      open.close();
      if (es === open) es = null;
      if (!stopped) retry();
    };
  };

  const longPoll = async () => {
    while (!stopped) {
      const page = await call('GET', source.poll(last), { signal: abort.signal });
      source.items(page).forEach(deliver);
    }
  };

  const run = () => {
    if (stopped) return;
    (mode === 'stream' ? stream() : longPoll()).catch((e) => {
      // No such game, or not ours to read: asking again cannot change that.
      if (e instanceof ApiError && (e.status === 403 || e.status === 404)) stop();
      else if (!stopped) retry();
    });
  };

  const retry = () => {
    failures += 1;
    // Three streams in a row that broke before delivering anything: something in the way
    // (a proxy that buffers or cuts event streams) keeps them from working; long-poll.
    if (mode === 'stream' && failures >= 3) mode = 'long-poll';
    setTimeout(run, Math.min(30_000, 500 * 2 ** Math.min(failures, 6)));
  };

  const stop = () => {
    stopped = true;
    mode = 'stopped';
    es?.close();
    abort.abort();
  };

  run();
  return { stop, mode: () => mode };
}

/**
 * Calls `onEvent` for each event of the game after `after`, in order, until `stop()` or the
 * game's end.
 * @param {string} gameId
 * @param {number} after
 * @param {(event: EventView) => void} onEvent
 * @returns {Following}
 */
export function follow(gameId, after, onEvent) {
  return subscribe({
    stream: `/games/${gameId}/events/stream`,
    poll: (seq) => `/games/${gameId}/events?after=${seq}&wait=30`,
    items: (/** @type {S['EventsPage']} */ page) => page.events,
    types: GAME_EVENTS,
    ends: (/** @type {EventView} */ e) => e.type === 'game_finished' || e.type === 'game_aborted',
  }, after, onEvent);
}

/**
 * Calls `onNotification` for each new notification of the caller's feed, from now on, and
 * `onResume` when the feed could be reached only after failing (what it shows may be stale).
 * @param {(n: NotificationView) => void} onNotification
 * @param {() => void} [onResume]
 * @returns {Following}
 */
export function followFeed(onNotification, onResume = () => {}) {
  /** @type {Following | null} */
  let inner = null;
  let stopped = false;
  let failures = 0;
  // Where the feed stands now; tried again, less and less often, while the server cannot be
  // reached, so that a page opened offline or during a restart catches up by itself.
  const start = () => call('GET', '/me/notifications?limit=1').then((/** @type {S['FeedPage']} */ page) => {
    if (stopped) return;
    if (failures > 0) onResume();
    inner = subscribe({
      stream: '/me/notifications/stream',
      poll: (seq) => `/me/notifications?after=${seq}&wait=30`,
      items: (/** @type {S['FeedPage']} */ p) => p.notifications,
      types: FEED_EVENTS,
      ends: () => false,
    }, page.last_seq, onNotification);
  }, () => {
    failures += 1;
    if (!stopped) setTimeout(start, Math.min(30_000, 500 * 2 ** Math.min(failures, 6)));
  });
  start();
  return {
    stop: () => { stopped = true; inner?.stop(); },
    mode: () => inner?.mode() ?? 'stopped',
  };
}
