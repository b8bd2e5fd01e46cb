// Following a game live: Server-Sent Events through a stream ticket (EventSource cannot
// send the bearer token), and, where a stream cannot be had, the events long-poll. Neither
// ever polls in a loop: each request waits on the server until something happens.

import { call } from './api.js';

/** @typedef {import('../api').components['schemas']['EventView']} EventView */
/** @typedef {import('../api').components['schemas']['EventsPage']} EventsPage */
/** @typedef {import('../api').components['schemas']['StreamTicket']} StreamTicket */

/** The event types a stream names in `event:` (EventSource wants a listener per name). */
const TYPES = [
  'game_started', 'round_dealt', 'pass_committed', 'passes_exchanged', 'card_played',
  'trick_won', 'round_scored', 'game_finished', 'seat_changed', 'turn_timed_out',
  'game_aborted', 'chat_message',
];
const ENDS = new Set(['game_finished', 'game_aborted']);

/**
 * Calls `onEvent` for each event of the game after `after`, in order, until `stop()`.
 * @param {string} gameId
 * @param {number} after
 * @param {(event: EventView) => void} onEvent
 * @returns {{stop: () => void, mode: () => 'stream' | 'long-poll' | 'stopped'}}
 */
export function follow(gameId, after, onEvent) {
  let last = after;
  let stopped = false;
  let failures = 0;
  /** @type {'stream' | 'long-poll' | 'stopped'} */
  let mode = typeof EventSource === 'function' ? 'stream' : 'long-poll';
  /** @type {EventSource | null} */
  let source = null;
  const abort = new AbortController();

  /** @param {EventView} event */
  const deliver = (event) => {
    if (event.seq <= last) return;
    last = event.seq;
    failures = 0;
    onEvent(event);
    if (ENDS.has(event.type)) stop();
  };

  const stream = async () => {
    /** @type {StreamTicket} */
    const { ticket } = await call('POST', '/auth/stream-ticket', { signal: abort.signal });
    if (stopped) return;
    const url = `/api/v1/games/${gameId}/events/stream?after=${last}&ticket=${encodeURIComponent(ticket)}`;
    const es = new EventSource(url);
    source = es;
    /** @param {Event} e */
    const handle = (e) => deliver(JSON.parse(/** @type {MessageEvent} */ (e).data));
    TYPES.forEach((type) => es.addEventListener(type, handle));
    es.onerror = () => {
      // A ticket works once, so EventSource's own reconnect would be refused: reconnect
      // ourselves with a new ticket, from the last event we have.
      es.close();
      if (source === es) source = null;
      if (!stopped) retry();
    };
  };

  const longPoll = async () => {
    while (!stopped) {
      /** @type {EventsPage} */
      const page = await call('GET', `/games/${gameId}/events?after=${last}&wait=30`, { signal: abort.signal });
      page.events.forEach(deliver);
    }
  };

  const run = () => {
    if (stopped) return;
    (mode === 'stream' ? stream() : longPoll()).catch(() => {
      if (!stopped) retry();
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
    source?.close();
    abort.abort();
  };

  run();
  return { stop, mode: () => mode };
}
