// The table: the view of one game, kept fresh by its live events, and the player's moves.
// Every event re-reads the game view (one read in flight at a time); the view is the only
// truth the table draws from, so an event the client does not know cannot confuse it.

import { ApiError, call, currentUser, newKey } from './api.js';
import { RANKS, cardBack, cardFace, cardName, cardShort, isLegalPass, parse, passableNext, sortHand } from './cards.js';
import { duration, fail, go, h, list, onceAtATime, replace, say, unreachable, who } from './dom.js';
import { currentLang, t, tn, tp, tpn } from './i18n.js';
import { follow } from './live.js';
import { RULES, seatLabel } from './lobby.js';

/** @typedef {import('leekha-api').components['schemas']} S */
/** @typedef {S['GameView']} GameView */
/** @typedef {S['EventView']} EventView */
/** @typedef {(root: HTMLElement, param: string) => (void | (() => void))} View */

/** Where each seat sits around the table, counted from the caller's seat. */
const PLACES = ['south', 'east', 'north', 'west'];

/** @type {S['PhraseView'][] | null} */
let phrases = null;

/** @type {View} */
export function table(root, id) {
  // A link cut short or mistyped names no game: nothing to ask the server, or to follow.
  if (!/^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i.test(id)) {
    missing(root);
    return undefined;
  }
  /** @type {GameView | null} */
  let view = null;
  /** @type {string[]} */
  let selected = [];
  /** @type {string | null} */
  let hinted = null;
  // The keyboard was in the hand when its cards went inert (the card was played, the turn
  // passed on): the hand takes the focus back as soon as a card can be played again.
  let handWantsFocus = false;
  // The version of the view the action on its way was chosen from (null: none is on its
  // way): until the game moves on, the hand is that decision's, already taken, and does not
  // take another click.
  /** @type {number | null} */
  let sentFrom = null;
  let closed = false;
  /** @type {S['ActionRequest'] | null} */
  let queued = null;
  let reading = false;
  let stale = false;
  /** @type {{seat: number, text: string}[]} */
  const chat = [];
  /** @type {{seat: number, points: number}[]} */
  const tricks = [];
  /** @type {S['TrickWonData'] | null} */
  let lastTrickWon = null;
  // Passes the server made for a seat whose time ran out, as `<round>:<seat>`: its
  // `turn_timed_out` comes just before the `pass_committed` made for it.
  /** @type {Set<string>} */
  const passedForLate = new Set();
  /** @type {Set<number>} */
  const late = new Set();
  let dealt = 0;
  // The round that ended last, from its `round_scored` event (the view has moved on to the
  // next deal by then): shown until the next round's first card, so a player who comes back
  // hours later still sees how the round went.
  /** @type {{round: number, points: number[], totals: number[], last: S['TrickWonData'] | null} | null} */
  let ended = null;

  const board = h('section', { class: 'table', 'aria-label': t('app.title') });
  const chatBox = h('section', { class: 'chat', 'aria-label': t('chat.title') });
  // The turn line is one live region for the table's whole life, its text changed only when
  // it says something new: a region drawn afresh at every redraw may never be announced.
  const turnLine = h('p', { class: 'turn-line', id: 'turn-line', role: 'status', 'aria-live': 'polite' });
  const top = h('div', { class: 'table-top' });
  const rest = h('div', { class: 'table-rest' });
  replace(board, top, turnLine, rest);
  replace(root, board, chatBox);

  const read = async () => {
    if (reading) {
      stale = true;
      return;
    }
    reading = true;
    try {
      do {
        stale = false;
        show(await call('GET', `/games/${id}`));
      } while (stale);
    } catch (e) {
      // No such game (or no such id), or no longer ours to see: its events will not come
      // either.
      if (e instanceof ApiError && [400, 403, 404].includes(e.status)) {
        live.stop();
        closed = true;
        missing(root);
      } else {
        fail(e);
      }
    } finally {
      reading = false;
    }
  };

  /** @param {GameView} next */
  const show = (next) => {
    if (view && next.version < view.version) return;
    if (!view || view.round?.number !== next.round?.number || view.round?.phase !== next.round?.phase) {
      selected = [];
    }
    if (view?.version !== next.version) hinted = null;
    const statusChanged = view?.status !== next.status || view?.my_seat !== next.my_seat;
    view = next;
    draw();
    // Seating and the game's end open and close the chat's inputs.
    if (statusChanged) drawChat();
  };

  /** @param {EventView} event */
  const onEvent = (event) => {
    if (event.type === 'chat_message') {
      const d = event.data;
      const text = d.hidden ? '…' : d.text ?? phraseText(d.phrase ?? null);
      chat.push({ seat: d.seat, text });
      drawChat();
      return;
    }
    if (event.type === 'trick_won') {
      tricks.push({ seat: event.data.seat, points: event.data.points });
      lastTrickWon = event.data;
    }
    if (event.type === 'round_scored') {
      const d = event.data;
      ended = { round: d.round, points: d.round_points, totals: d.totals, last: lastTrickWon };
    }
    if (event.type === 'round_dealt') {
      tricks.length = 0;
      dealt = event.data.round;
    }
    if (event.type === 'turn_timed_out') late.add(event.data.seat);
    if (event.type === 'card_played') late.delete(event.data.seat);
    if (event.type === 'pass_committed' && late.delete(event.data.seat)) passedForLate.add(`${dealt}:${event.data.seat}`);
    read();
  };

  /** @param {S['PhraseKey'] | null} key */
  const phraseText = (key) => {
    const p = phrases?.find((x) => x.key === key);
    return p ? (currentLang() === 'ar' ? p.ar : p.en) : String(key);
  };

  /** @param {number} seat */
  const nameOf = (seat) => {
    if (!view) return '';
    if (seat === view.my_seat) return t('table.you');
    return seatLabel(view.seats[seat]);
  };
  /** A seat's name for a sentence (see `who`). @param {number} seat */
  const whoOf = (seat) => who(nameOf(seat));
  /**
   * `key`, or its `_you` form when `seat` is the caller's ("You took", Arabic "أخذتَ").
   * @param {string} key @param {number} seat
   */
  const own = (key, seat) => (view && seat === view.my_seat ? `${key}_you` : key);
  /** A seat's name in a few letters, for under a card: the full one in its title. @param {number} seat */
  const shortName = (seat) => {
    const s = view?.seats[seat];
    if (!s || seat === view?.my_seat) return who(t('table.you'));
    if (s.bot) return who(t('table.bot_short', { n: seat + 1 }), nameOf(seat));
    return who(nameOf(seat), nameOf(seat));
  };
  /**
   * A trick as it was played, each card with who played it (in play order), and who took it.
   * @param {{seat: number, card: string}[]} plays @param {number} winner @param {number} points
   */
  const trickBox = (plays, winner, points) => {
    const said = tn(own('table.last_trick', winner), points, { name: nameOf(winner) });
    const cards = plays.map((p) => t('table.played', { name: nameOf(p.seat), card: cardName(p.card) })).join(t('list.sep'));
    return h('div', { class: 'last-trick', role: 'group', 'aria-label': `${said}. ${cards}` },
      h('span', {}, ...tpn(own('table.last_trick', winner), points, { name: whoOf(winner) })),
      h('span', { class: 'mini' }, ...plays.map((p) => h('span', { class: 'mini-play', 'data-seat': p.seat },
        miniCard(p.card), h('span', { class: 'mini-name' }, shortName(p.seat))))));
  };

  /**
   * Sends an action; the answer is the new view.
   * @param {S['ActionRequest']} action
   */
  const act = async (action) => {
    if (!view) return;
    // The stream can show the next trick before the answer to our last action is in; a card
    // chosen then is held and sent after that answer, if it is still legal, not dropped.
    if (sentFrom !== null) {
      if (view.version !== sentFrom) queued = action;
      return;
    }
    sentFrom = view.version;
    draw();
    // No expected_version: the server judges the action against the latest state, and
    // while it is our move only a chat line or a seat change can move the game, which
    // must not refuse the card. The key makes sending it again after no answer harmless.
    const key = newKey();
    try {
      for (let attempt = 0; ; attempt++) {
        try {
          show(await call('POST', `/games/${id}/actions`, {
            body: action,
            headers: { 'idempotency-key': key },
          }));
          break;
        } catch (e) {
          // No answer at all (offline, the server restarting): the move is not dropped but
          // sent again, with the same key, for as long as the table is open, while the
          // status line says the server cannot be reached.
          if (!unreachable(e) || closed) throw e;
          fail(e);
          await new Promise((resolve) => setTimeout(resolve, Math.min(1000 * 2 ** attempt, 15_000)));
          if (closed) throw e;
        }
      }
    } catch (e) {
      // Someone moved first: the fresh view tells what is legal now.
      if (e instanceof ApiError && e.code === 'version_conflict') read();
      else if (!closed) fail(e);
    } finally {
      sentFrom = null;
      const next = queued;
      queued = null;
      if (next && stillLegal(next)) act(next);
      else if (!closed) draw();
    }
  };

  /** @param {S['ActionRequest']} action */
  const stillLegal = (action) => {
    const legal = view?.legal_actions;
    if (!legal) return false;
    if (action.type === 'play') return legal.type === 'play' && legal.cards.includes(action.card);
    return legal.type === 'pass' && isLegalPass(action.cards, view?.round?.hand ?? [], legal);
  };

  /** @param {string} path @param {unknown} [body] */
  const post = async (path, body = {}) => {
    try {
      const answer = await call('POST', `/games/${id}/${path}`, { body });
      if (answer && 'seats' in answer && answer.id === id) show(answer);
      return answer;
    } catch (e) {
      fail(e);
      return undefined;
    }
  };

  const countdown = h('span', { class: 'countdown', 'aria-live': 'off' });
  const tick = () => {
    const deadline = view?.turn?.deadline;
    countdown.textContent = deadline ? t('table.deadline', { time: duration(Date.parse(deadline) - Date.now()) }) : '';
  };
  // Only the clock on screen ticks; the game itself changes through its events.
  const clock = setInterval(tick, 1000);

  const draw = () => {
    if (!view) return;
    const v = view;
    const me = v.my_seat;
    const round = v.round;
    const legal = v.legal_actions;
    const hand = sortHand(round?.hand ?? []);
    const place = (/** @type {number} */ seat) => PLACES[(seat - (me ?? 0) + 4) % 4];

    // While the game waits, its creator changes the seats no player holds.
    const host = v.status === 'waiting' && me !== null && v.created_by === currentUser()?.id;
    /** @param {GameView['seats'][number]} s */
    const seatControls = (s) => {
      if (!host || s.player) return null;
      /** @param {{ kind: 'open' | 'bot' } | { kind: 'invite', username: string }} body */
      const change = async (body) => {
        try {
          show(await call('PUT', `/games/${id}/seats/${s.seat}`, { body }));
        } catch (e) {
          fail(e);
        }
      };
      return h('div', { class: 'seat-controls', role: 'group', 'aria-label': t('table.seat_controls', { n: s.seat + 1 }) },
        s.open ? null : button(t('table.seat_open'), () => change({ kind: 'open' }), { class: 'small', 'data-change': 'open' }),
        v.rated || s.bot ? null : button(t('table.seat_bot'), () => change({ kind: 'bot' }), { class: 'small', 'data-change': 'bot' }),
        button(t('table.seat_invite'), () => {
          const username = prompt(t('table.seat_invite_prompt'))?.trim();
          if (username) change({ kind: 'invite', username });
        }, { class: 'small', 'data-change': 'invite' }));
    };

    const seats = v.seats.map((s) => {
      const turn = v.turn?.seats.includes(s.seat) ?? false;
      return h('div', { class: `seat ${place(s.seat)} ${turn ? 'turn' : ''}`, 'data-seat': s.seat, role: 'group', 'aria-label': `${nameOf(s.seat)}${turn ? `, ${t('table.turn')}` : ''}` },
        // A bot's level goes on a line of its own in smaller type: "(Intermediate)" beside the
        // name was broken mid-word on a 320 px phone (the level is "Medium" now, for the same
        // reason).
        h('div', { class: 'name' }, s.bot && s.seat !== me ? t('table.bot_short', { n: s.seat + 1 }) : who(nameOf(s.seat), nameOf(s.seat)),
          s.team !== null && v.rules.mode === 'partnership' ? ` (${s.team === 0 ? 'A' : 'B'})` : '',
          s.bot && s.seat !== me ? h('span', { class: 'level' }, t(`level.${s.bot}`)) : null,
          round && round.dealer === s.seat ? h('span', { class: 'dealer', title: t('table.dealer'), role: 'img', 'aria-label': t('table.dealer') }, t('table.dealer_mark')) : null),
        h('div', { class: 'score' }, tn('table.score', s.total_score, { total: s.total_score }), s.round_points > 0 ? ` · ${t('table.round_points', { n: s.round_points })}` : ''),
        s.seat !== me && round ? h('div', { class: 'backs', role: 'img', 'aria-label': tn('table.cards', s.cards_in_hand) },
          ...Array.from({ length: Math.min(s.cards_in_hand, 13) }, () => cardBack())) : null,
        round?.phase === 'passing' && round.passes_committed[s.seat] ? h('div', { class: 'passed-mark' }, '✓') : null,
        seatControls(s));
    });

    const trickCards = (round?.trick.cards ?? []).map((c) =>
      h('div', { class: `played ${place(c.seat)}`, role: 'img', 'aria-label': `${nameOf(c.seat)}: ${cardName(c.card)}` }, cardFace(c.card)));

    const last = round?.last_trick;
    const lastBox = last ? trickBox(last.cards, last.winner, last.points) : null;

    // The round just over, until the next one's first card (or for good, at the game's end).
    const endedLast = ended?.last;
    const over = ended && round && (
      (v.status === 'finished' && ended.round === round.number)
      || (v.status === 'active' && ended.round === round.number - 1 && round.tricks_played === 0 && round.trick.cards.length === 0))
      ? roundSummary(ended, whoOf, !last && endedLast
        ? trickBox(endedLast.cards.map((card, i) => ({ seat: (endedLast.leader + i) % 4, card })), endedLast.seat, endedLast.points)
        : null) : null;

    // The three cards the player gave away, and to whom, until the first trick is taken (as
    // long as the ones received are marked); said so when the server passed them because the
    // time ran out.
    const to = me !== null && round?.pass_direction ? (me + (round.pass_direction === 'right' ? 1 : 3)) % 4 : null;
    const passedLine = round?.passed?.length && round.tricks_played === 0 && to !== null
      ? h('p', { class: 'passed-line', id: 'passed-cards' },
        ...tp(passedForLate.has(`${round.number}:${me}`) ? 'table.passed_for_you' : 'table.you_passed', {
          // Spaces between the cards, for a copy of the text (the flexbox lays them out).
          cards: h('span', { class: 'mini' }, ...sortHand(round.passed).flatMap((c, i) => (i ? [' ', miniCard(c)] : [miniCard(c)]))),
          name: whoOf(to),
        }))
      : null;

    // The cards the exchange brought stay marked until the first trick is taken.
    const received = new Set(round?.tricks_played === 0 ? round.received ?? [] : []);
    const passing = legal?.type === 'pass' ? legal : null;
    const playable = legal?.type === 'play' ? new Set(legal.cards) : new Set();
    const open = passing ? passableNext(selected, hand, passing) : new Set();
    // The move chosen from this very view is on its way: nothing more to choose from it.
    const waiting = sentFrom === v.version;
    const cards = hand.map((code) => {
      const chosen = selected.includes(code);
      const enabled = !waiting && (passing ? chosen || open.has(code) : playable.has(code));
      const btn = h('button', {
        type: 'button',
        class: `card ${enabled ? 'legal' : 'inert'} ${chosen ? 'chosen' : ''} ${hinted === code ? 'hinted' : ''} ${received.has(code) ? 'received' : ''}`,
        'data-card': code,
        'aria-label': received.has(code) ? `${cardName(code)}, ${t('table.received_card')}` : cardName(code),
        'aria-pressed': passing ? String(chosen) : null,
        'aria-disabled': enabled ? null : 'true',
        disabled: !enabled,
      }, cardFace(code));
      btn.addEventListener('click', () => {
        if (passing) {
          selected = chosen ? selected.filter((c) => c !== code) : [...selected, code];
          draw();
          focusCard(code);
        } else if (playable.has(code)) {
          act({ type: 'play', card: /** @type {S['CardCode']} */ (code) });
        }
      });
      return btn;
    });
    const handRow = h('div', { class: 'hand', role: 'toolbar', 'aria-label': t('table.hand') }, ...cards);
    handRow.addEventListener('keydown', (e) => {
      if (e.key !== 'ArrowLeft' && e.key !== 'ArrowRight') return;
      const buttons = [...handRow.querySelectorAll('button:not([disabled])')];
      const at = buttons.indexOf(/** @type {Element} */ (document.activeElement));
      const forward = (e.key === 'ArrowRight') !== (document.documentElement.dir === 'rtl');
      const next = buttons[(at + (forward ? 1 : -1) + buttons.length) % buttons.length];
      if (next instanceof HTMLElement) { roving(handRow, next); next.focus(); e.preventDefault(); }
    });

    /** @type {(HTMLElement | null)[]} */
    const actions = [];
    /** @type {(string | Node)[]} */
    let status = [];
    if (v.status === 'waiting') {
      status = [t('table.waiting', { n: v.seats.filter((s) => !s.open && !s.invited).length })];
      if (me === null) actions.push(button(t('table.join'), () => post('join')));
      else actions.push(button(t('table.leave'), async () => { await post('leave'); go('lobby'); }));
    } else if (v.status === 'active' && round) {
      if (passing) {
        status = [t('table.passing', { dir: t(`dir.${round.pass_direction ?? 'right'}`) })];
        const ok = isLegalPass(selected, hand, passing);
        actions.push(button(t('table.pass'), () => act({ type: 'pass', cards: /** @type {S['CardCode'][]} */ (selected) }), { id: 'send-pass', class: 'primary', disabled: !ok }));
      } else if (round.phase === 'passing' && me !== null) {
        status = [t('table.passed')];
      } else if (v.turn?.seat !== null && v.turn?.seat !== undefined) {
        status = v.turn.seat === me ? [t('table.your_turn')] : tp('table.waiting_for', { name: whoOf(v.turn.seat) });
      }
      if (legal) actions.push(button(t('table.hint'), hint, { id: 'hint' }));
      if (me !== null && v.seats[me].bot) actions.push(button(t('table.reclaim'), () => post('reclaim')));
      else if (me !== null) actions.push(button(t('table.resign'), () => { if (confirm(t('table.resign_confirm'))) post('resign'); }, { id: 'resign' }));
    }
    // An invitee reads the waiting game before taking the seat kept for them: not a spectator.
    const invited = me === null && v.seats.some((s) => s.invited?.id === currentUser()?.id);
    if (invited) status = [t('table.invited_you'), ' ', ...status];
    else if (me === null) status = [t('table.spectating'), ' ', ...status];
    if (v.spectators > 0) status = [...status, status.length ? ' · ' : '', tn('table.watchers', v.spectators)];

    const teams = teamsOf(v, whoOf);
    const result = v.status === 'finished' && v.result ? resultPanel(v, whoOf, teams) : null;
    if (v.status === 'finished' && me !== null) {
      // Once someone asked for it, the rematch is there to open (the same request joins it).
      actions.push(button(t(v.rematch_id ? 'table.rematch_open' : 'table.rematch'), async () => {
        const next = await post('rematch');
        if (next) go(`game/${next.id}`);
      }, { id: 'rematch', class: 'primary' }));
    }
    // The replay reveals every hand: the players' alone (a spectator would be refused).
    if (v.status === 'finished' && me !== null) actions.push(h('a', { href: `#/replay/${id}`, class: 'button', id: 'replay' }, t('table.replay')));
    if (v.status === 'aborted') status = [t('table.aborted'), v.abort_reason ? ': ' : '', v.abort_reason ? h('bdi', {}, v.abort_reason) : ''];

    // Completed tricks are face down (rule book §4): the last one shows in its box; of the
    // earlier ones, only who took how many points.
    const log = tricks.slice(-4).reverse().map((tr) =>
      h('li', {}, ...tpn(own('table.took', tr.seat), tr.points, { name: whoOf(tr.seat) })));

    // A redraw (another seat acted, a stream event) must not take the keyboard's place away:
    // the focused card or button keeps the focus in the new board.
    const had = document.activeElement;
    const inBoard = had instanceof HTMLElement && board.contains(had);
    const kept = inBoard ? selectorOf(had) : null;
    const oldHand = board.querySelector('.hand');
    // The rules stay unfolded across redraws once the player has opened them.
    const rulesOpen = board.querySelector('#rules')?.hasAttribute('open') ?? false;
    const handAt = had instanceof HTMLElement && had.dataset.card && oldHand
      ? [...oldHand.querySelectorAll('button.card')].indexOf(had)
      : -1;
    const line = h('span', {}, ...status);
    if (line.textContent !== turnLine.textContent) replace(turnLine, ...line.childNodes);
    replace(top,
      h('div', { class: 'info' },
        h('span', {}, round ? t('table.round', { n: round.number }) : ''),
        h('span', {}, t(`mode.${v.rules.mode}`), ' · ', t('table.target', { n: v.rules.target_score })),
        teams ? h('span', { class: 'team-totals', id: 'team-totals' },
          teams.map((team) => t('table.team_total', { team: team.letter, total: team.total })).join(' · ')) : null,
        countdown),
      rulesBox(v.rules, rulesOpen));
    replace(rest,
      h('div', { class: 'felt' }, ...seats,
        h('div', { class: 'trick', role: 'group', 'aria-label': t('table.trick') }, ...trickCards)),
      passedLine,
      lastBox,
      over,
      result,
      handRow,
      h('div', { class: 'actions' }, ...actions),
      log.length ? h('ul', { class: 'trick-log' }, ...log) : null);
    const enabled = [...handRow.querySelectorAll('button.card:not([disabled])')];
    roving(handRow, enabled[0] ?? null);
    const again = kept ? board.querySelector(kept) : null;
    if (again instanceof HTMLElement && !again.hasAttribute('disabled')) {
      if (handRow.contains(again)) roving(handRow, again);
      again.focus();
    } else if (handAt >= 0 || handWantsFocus || inBoard) {
      // What had the keyboard is gone (a card played, the pass sent, the hint's button once
      // the turn passed on): the hand takes it, now or at the next turn.
      // The focused card is gone or inert: the nearest card that can be played takes the
      // focus, or the first one once there is one again.
      const all = [...handRow.querySelectorAll('button.card')];
      const near = enabled.sort((a, b) => Math.abs(all.indexOf(a) - handAt) - Math.abs(all.indexOf(b) - handAt))[0];
      const idle = !document.activeElement || document.activeElement === document.body;
      if (near instanceof HTMLElement && (handAt >= 0 || idle)) {
        roving(handRow, near);
        near.focus();
        handWantsFocus = false;
      } else {
        handWantsFocus = near === undefined;
      }
    }
    tick();
  };

  /**
   * One Tab stop for the hand (a toolbar): `card` (or none), the arrow keys for the rest.
   * @param {HTMLElement} hand @param {Element | null} card
   */
  const roving = (hand, card) => {
    for (const b of hand.querySelectorAll('button.card')) b.setAttribute('tabindex', b === card ? '0' : '-1');
  };

  /** @param {string} code */
  const focusCard = (code) => {
    const el = board.querySelector(`button[data-card="${code}"]`);
    if (el instanceof HTMLElement) el.focus();
  };

  const hint = async () => {
    try {
      /** @type {S['HintView']} */
      const answer = await call('GET', `/games/${id}/hint`);
      if (answer.type === 'pass') selected = [...answer.cards];
      else hinted = answer.card;
      draw();
      focusCard(answer.type === 'pass' ? answer.cards[0] : answer.card);
    } catch (e) {
      fail(e);
    }
  };

  const drawChat = () => {
    const list = h('ol', { class: 'messages' }, ...chat.slice(-30).map((m) =>
      h('li', {}, h('b', {}, whoOf(m.seat)), ': ', h('bdi', {}, m.text))));
    const input = h('input', { name: 'text', maxlength: 200, placeholder: t('chat.placeholder'), 'aria-label': t('chat.placeholder') });
    const form = h('form', { class: 'say' }, input, h('button', {}, t('chat.send')));
    onceAtATime(form, 'submit', async () => {
      if (!input.value.trim()) return;
      const ok = await post('chat', { text: input.value });
      if (ok) input.value = '';
    });
    const quick = h('div', { class: 'phrases' }, ...(phrases ?? []).slice(0, 6).map((p) =>
      button(currentLang() === 'ar' ? p.ar : p.en, () => post('chat', { phrase: p.key }), { class: 'small' })));
    const seated = view?.my_seat !== null && view?.my_seat !== undefined;
    const live = view?.status === 'waiting' || view?.status === 'active';
    replace(chatBox, h('h2', {}, t('chat.title')), list, seated && live ? quick : null, seated && live ? form : null);
  };

  read();
  if (!phrases) {
    call('GET', '/chat/phrases').then((/** @type {S['PhrasesView']} */ p) => { phrases = p.items; drawChat(); }, () => {});
  }
  const live = follow(id, 0, onEvent);
  const keys = (/** @type {KeyboardEvent} */ e) => {
    if (e.target instanceof HTMLInputElement) return;
    if (e.key === 'h' && view?.legal_actions) hint();
  };
  document.addEventListener('keydown', keys);
  say('');
  return () => {
    closed = true;
    live.stop();
    clearInterval(clock);
    document.removeEventListener('keydown', keys);
  };
}

/**
 * A selector that finds `el` again in the redrawn board, if it has one.
 * @param {HTMLElement} el
 */
function selectorOf(el) {
  if (el.dataset.card) return `button[data-card="${el.dataset.card}"]`;
  if (el.id) return `#${el.id}`;
  const seat = el.closest('.seat')?.getAttribute('data-seat');
  if (el.dataset.change && seat) return `.seat[data-seat="${seat}"] [data-change="${el.dataset.change}"]`;
  if (el.matches('#rules > summary')) return '#rules > summary';
  return null;
}

/**
 * A card in a few letters ("Q♠"), named for screen readers.
 * @param {string} code
 */
function miniCard(code) {
  return h('span', { class: `mini-card suit-${parse(code).suit}`, role: 'img', 'aria-label': cardName(code) }, cardShort(code));
}

/**
 * In place of a game that cannot be shown (no such game, a link cut short, or not the
 * account's to see): says so, with the way back to the lobby.
 * @param {HTMLElement} root
 */
export function missing(root) {
  say('');
  replace(root, h('section', { class: 'card-panel missing', id: 'game-missing' },
    h('h1', {}, t('game.missing_title')),
    h('p', {}, t('game.missing')),
    h('a', { href: '#/lobby', class: 'button primary', id: 'to-lobby' }, t('game.to_lobby'))));
}

/**
 * @param {string} label
 * @param {() => unknown} onClick
 * @param {Record<string, string | boolean>} [attrs]
 */
function button(label, onClick, attrs = {}) {
  const b = h('button', { type: 'button', ...attrs }, label);
  onceAtATime(b, 'click', onClick);
  return b;
}

/**
 * A partnership's two teams (rule book §7: partners sit across, a team's total is the sum of
 * its players'), or null in solo.
 * @param {GameView} v
 * @param {(seat: number) => Node} whoOf
 * @returns {{team: number, letter: string, names: Node, total: number}[] | null}
 */
function teamsOf(v, whoOf) {
  if (v.rules.mode !== 'partnership') return null;
  return [0, 1].map((team) => {
    const members = v.seats.filter((s) => s.team === team);
    return {
      team,
      letter: team === 0 ? 'A' : 'B',
      names: h('span', {}, ...tp('list.pair', { a: whoOf(members[0].seat), b: whoOf(members[1].seat) })),
      total: members.reduce((sum, s) => sum + s.total_score, 0),
    };
  });
}

/**
 * Every rule the game is played by, folded away: the options beyond mode and target change
 * what is legal (a pass restriction, a forced Leekha), so a player may need to look them up.
 * @param {S['RulesView']} rules
 * @param {boolean} open
 */
function rulesBox(rules, open) {
  const rows = [
    h('dt', {}, t('rule.target_score')), h('dd', {}, String(rules.target_score)),
    ...Object.keys(RULES).flatMap((name) => {
      const value = /** @type {Record<string, string>} */ (/** @type {unknown} */ (rules))[name];
      return [h('dt', {}, t(`rule.${name}`)), h('dd', { 'data-rule': name }, t(`value.${name}.${value}`))];
    }),
  ];
  return h('details', { class: 'rules', id: 'rules', open }, h('summary', {}, t('table.rules')), h('dl', {}, ...rows));
}

/**
 * @param {GameView} v
 * @param {(seat: number) => Node} whoOf
 * @param {{team: number, letter: string, names: Node, total: number}[] | null} teams
 */
function resultPanel(v, whoOf, teams) {
  const result = /** @type {S['ResultView']} */ (v.result);
  return h('section', { class: 'result', id: 'result', 'aria-label': t('table.finished') },
    h('h2', {}, t('table.finished')),
    h('p', {}, ...tpn('table.winners', result.winners.length, { names: h('span', {}, ...list(result.winners.map(whoOf))) })),
    teams ? h('ul', { class: 'teams' }, ...teams.map((team) => {
      const lost = result.losing_team === team.team;
      return h('li', { class: lost ? '' : 'winner', 'data-team': team.team },
        ...tp(lost ? 'table.team_lost' : 'table.team_won', { team: team.letter, names: team.names, total: team.total }));
    })) : null,
    h('ul', { class: 'ranking' }, ...result.ranking.map((r) =>
      h('li', { class: result.winners.includes(r.seat) ? 'winner' : '' }, ...tp('table.rank', { rank: r.rank, name: whoOf(r.seat), total: r.total_score })))));
}

/**
 * How the round that just ended went: each seat's points in it and total after it, and its
 * last trick (completed tricks are face down, rule book §4, but the last one may be seen).
 * @param {{round: number, points: number[], totals: number[]}} ended
 * @param {(seat: number) => Node} whoOf
 * @param {HTMLElement | null} lastTrick its last trick (not when the view still shows it)
 */
function roundSummary(ended, whoOf, lastTrick) {
  return h('section', { class: 'round-summary', id: 'round-summary', 'aria-label': t('table.round_over', { n: ended.round }) },
    h('h2', {}, t('table.round_over', { n: ended.round })),
    h('ul', {}, ...ended.points.map((points, seat) =>
      h('li', { 'data-seat': seat }, ...tpn('table.round_took', points, { name: whoOf(seat), total: ended.totals[seat] })))),
    lastTrick);
}

/**
 * The replay's actions cut into rounds (every round has 52 plays, its passes before them)
 * and each round's plays into tricks of four.
 * @param {S['ReplayAction'][]} actions
 * @returns {{passes: S['ReplayActionPass'][], tricks: S['ReplayActionPlay'][][]}[]}
 */
function byRound(actions) {
  /** @type {{passes: S['ReplayActionPass'][], tricks: S['ReplayActionPlay'][][]}[]} */
  const rounds = [];
  let plays = 0;
  for (const a of actions) {
    // A round begins with its first pass, or with its first play when it has no passing.
    let round = rounds.at(-1);
    if (!round || plays === 52 || (a.type === 'pass' && plays > 0)) {
      round = { passes: [], tricks: [] };
      rounds.push(round);
      plays = 0;
    }
    if (a.type === 'pass') {
      round.passes.push(a);
    } else {
      if (plays % 4 === 0) round.tricks.push([]);
      round.tricks[round.tricks.length - 1].push(a);
      plays += 1;
    }
  }
  return rounds;
}

/**
 * Who takes a complete trick: the highest card of the suit led (Leekha has no trumps).
 * @param {S['ReplayActionPlay'][]} trick
 */
function taker(trick) {
  const led = parse(trick[0].card).suit;
  let best = trick[0];
  for (const p of trick) {
    const c = parse(p.card);
    if (c.suit === led && RANKS.indexOf(c.rank) > RANKS.indexOf(parse(best.card).rank)) best = p;
  }
  return best.seat;
}

/** @type {View} */
export function replay(root, id) {
  replace(root, h('p', {}, '…'));
  /** @type {Promise<[S['ReplayView'], GameView]>} */
  const both = Promise.all([call('GET', `/games/${id}/replay`), call('GET', `/games/${id}`)]);
  both.then(
    ([r, v]) => {
      const whoOf = (/** @type {number} */ seat) => who(seat === v.my_seat ? t('table.you') : seatLabel(v.seats[seat]));
      /** `key`, or its `_you` form for the caller's own seat. @param {string} key @param {number} seat */
      const own = (key, seat) => (seat === v.my_seat ? `${key}_you` : key);
      const rounds = byRound(r.actions);
      replace(root,
        h('h1', {}, t('table.replay')),
        h('a', { href: `#/game/${id}` }, '←'),
        ...r.rounds.map((round, i) => {
          const played = rounds[i] ?? { passes: [], tricks: [] };
          return h('section', { class: 'replay-round' },
            h('h2', {}, ...tp('replay.round', { n: round.round, name: whoOf(round.dealer) })),
            h('ul', {}, ...round.hands.map((hand, seat) =>
              h('li', {}, h('b', {}, whoOf(seat)), ': ', h('bdi', {}, sortHand(hand).map(cardShort).join(' '))))),
            played.passes.length ? h('ul', { class: 'replay-passes' }, ...played.passes.map((a) =>
              h('li', {}, ...tp(own('replay.pass', a.seat), { name: whoOf(a.seat), cards: h('bdi', {}, a.cards.map(cardShort).join(' ')) })))) : null,
            h('ol', { class: 'replay-actions' }, ...played.tricks.map((trick) =>
              h('li', {},
                list(trick.map((a) => h('span', {}, ...tp(own('replay.play', a.seat), { name: whoOf(a.seat), card: h('bdi', {}, cardShort(a.card)) })))),
                trick.length === 4 ? [' ', ...tp('replay.taken', { name: whoOf(taker(trick)) })] : ''))));
        }));
    }, (e) => {
      if (e instanceof ApiError && [400, 403, 404].includes(e.status)) missing(root);
      else fail(e);
    });
}
