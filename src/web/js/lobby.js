// Everything before the table: the landing page (guest play, sign-in), the lobby, my games,
// creating a game with every rule option, and the account.

import { call, currentUser, guest, signIn, signOut, updateMe } from './api.js';
import { duration, fail, go, h, list as joined, onceAtATime, replace, say, who } from './dom.js';
import { t, tp } from './i18n.js';
import { enablePush, pushState } from './push.js';
import { followFeed } from './live.js';

/** @typedef {import('leekha-api').components['schemas']} S */
/** @typedef {S['BotLevel']} BotLevel */
/** @typedef {(root: HTMLElement, param: string) => (void | (() => void))} View */

const LEVELS = /** @type {const} */ (['random', 'easy', 'heuristic', 'expert']);

/**
 * Starts a game against three bots of one level, with the caller at seat 0.
 * @param {BotLevel} level
 */
export async function playBots(level) {
  /** @type {S['CreateGame']} */
  const body = {
    seats: [{ kind: 'me' }, { kind: 'bot', level }, { kind: 'bot', level }, { kind: 'bot', level }],
    visibility: 'private',
  };
  /** @type {S['GameView']} */
  const game = await call('POST', '/games', { body });
  go(`game/${game.id}`);
}

/** @param {string} name @param {string} key @param {string} [value] */
function levelSelect(name, key, value = 'heuristic') {
  return h('label', {}, t(key), ' ',
    h('select', { name }, ...LEVELS.map((l) => h('option', { value: l, selected: l === value }, t(`level.${l}`)))));
}

/**
 * The page for whoever is not signed in. `wanted` is the route they were sent to (a game's
 * link): signing in, or continuing as a guest, then opens it rather than a game of one's own.
 * @type {View}
 */
export function landing(root, wanted) {
  const level = levelSelect('level', 'guest.level');
  const play = h('button', { type: 'button', class: 'primary big', id: 'play-guest' }, t(wanted ? 'guest.continue' : 'guest.play'));
  play.addEventListener('click', async () => {
    play.disabled = true;
    try {
      if (!currentUser()) await guest();
      if (wanted) go(wanted);
      else await playBots(/** @type {BotLevel} */ (level.querySelector('select')?.value ?? 'heuristic'));
    } catch (e) {
      fail(e);
      play.disabled = false;
    }
  });
  replace(root,
    h('section', { class: 'hero' },
      h('h1', {}, t('app.title')),
      h('p', {}, t('app.tagline')),
      wanted ? h('p', { id: 'pending-link' }, t('guest.pending')) : null,
      h('div', { class: 'row' }, play, wanted ? null : level)),
    h('section', { class: 'auth' }, authForm('login', wanted), authForm('register', wanted)));
}

/** @param {'login' | 'register'} which @param {string} wanted where to go once signed in */
function authForm(which, wanted) {
  const form = h('form', { class: 'card-panel', 'aria-label': t(`auth.${which}`) },
    h('h2', {}, t(`auth.${which}`)),
    h('label', {}, t('auth.username'), h('input', { name: 'username', required: true, autocomplete: 'username', pattern: '[A-Za-z0-9_]{3,32}' })),
    h('label', {}, t('auth.password'), h('input', { name: 'password', type: 'password', required: true, minlength: 8, autocomplete: which === 'login' ? 'current-password' : 'new-password' })),
    h('button', { class: 'primary' }, t(`auth.${which}`)));
  onceAtATime(form, 'submit', async () => {
    const data = new FormData(form);
    try {
      await signIn(which, String(data.get('username')), String(data.get('password')));
      go(wanted || 'mine');
    } catch (err) {
      fail(err);
    }
  });
  return form;
}

/**
 * @param {S['SeatEntry'] | S['SeatBrief']} seat
 */
export function seatLabel(seat) {
  if (seat.player) return seat.player.username;
  // People count seats from 1; the API's numbers start at 0.
  if (seat.bot) return t('table.bot', { n: seat.seat + 1, level: t(`level.${seat.bot}`) });
  if ('invited' in seat && seat.invited) return t('table.invited', { name: seat.invited.username });
  // A list's seat does not say for whom it is kept, only that it is not open.
  return t(seat.open ? 'table.open_seat' : 'table.reserved');
}

/**
 * `seatLabel` for the page: a player's name in a `<bdi>` (see `who`).
 * @param {S['SeatEntry'] | S['SeatBrief']} seat
 * @returns {string | Node}
 */
export function seatNode(seat) {
  if (seat.player) return who(seat.player.username);
  if ('invited' in seat && seat.invited) return h('span', {}, ...tp('table.invited', { name: who(seat.invited.username) }));
  return seatLabel(seat);
}

/** @type {View} */
export function lobby(root) {
  const list = h('ul', { class: 'games', 'aria-label': t('nav.lobby') });
  replace(root, h('h1', {}, t('nav.lobby')), list);
  const me = currentUser();
  call('GET', '/games?status=waiting&limit=50').then((/** @type {S['LobbyPage']} */ page) => {
    if (page.items.length === 0) replace(list, h('li', { class: 'empty' }, t('lobby.empty')));
    else replace(list, ...page.items.map((game) => {
      const seated = game.seats.some((s) => s.player?.id === me?.id);
      const join = h('button', { type: 'button', class: 'primary' }, seated ? t('mine.open') : t('lobby.join'));
      onceAtATime(join, 'click', async () => {
        try {
          if (!seated) await call('POST', `/games/${game.id}/join`, { body: {} });
          go(`game/${game.id}`);
        } catch (e) {
          fail(e);
        }
      });
      return h('li', { class: 'game' },
        h('span', { class: 'mode' }, t(`mode.${game.rules.mode}`), ' · ', t('table.target', { n: game.rules.target_score })),
        h('span', { class: 'seats' }, joined(game.seats.map(seatNode))),
        join,
        seated ? null : h('a', { href: `#/game/${game.id}`, class: 'button watch' }, t('lobby.watch')));
    }));
  }, fail);
}

/** @type {View} */
export function myGames(root) {
  const list = h('ul', { class: 'games', 'aria-label': t('nav.mine') });
  const quick = h('button', { type: 'button', class: 'primary', id: 'quick' }, t('nav.quick'));
  const level = levelSelect('level', 'guest.level');
  quick.addEventListener('click', () => {
    quick.disabled = true;
    playBots(/** @type {BotLevel} */ (level.querySelector('select')?.value ?? 'heuristic')).catch((e) => {
      quick.disabled = false;
      fail(e);
    });
  });
  replace(root, h('div', { class: 'row' }, quick, level), h('h1', {}, t('nav.mine')), list);
  const load = () => call('GET', '/me/games?status=active,waiting,finished&limit=50').then((/** @type {S['MyGamesPage']} */ page) => {
    if (page.items.length === 0) replace(list, h('li', { class: 'empty' }, t('mine.empty')));
    else replace(list, ...page.items.map((g) =>
      h('li', { class: `game ${g.my_turn ? 'urgent' : ''}` },
        h('a', { href: `#/game/${g.id}` },
          g.my_turn ? h('span', { class: 'badge' }, t('mine.your_turn')) : null,
          g.invited ? h('span', { class: 'badge invited' }, t('mine.invited')) : null,
          h('span', { class: 'mode' }, t(`status.${g.status}`), ' · ', t(`mode.${g.mode}`)),
          h('span', { class: 'seats' }, joined(g.seats.map(seatNode))),
          g.deadline ? h('span', { class: 'deadline' }, t('table.deadline', { time: duration(Date.parse(g.deadline) - Date.now()) })) : null))));
  }, fail);
  load();
  // Your turn, an invitation, a game that started or ended: the list re-sorts itself.
  /** @type {ReturnType<typeof setTimeout> | undefined} */
  let soon;
  const feed = followFeed(() => {
    // A move often brings several notifications at once: one reload for them all.
    clearTimeout(soon);
    soon = setTimeout(load, 150);
  }, load);
  return () => { clearTimeout(soon); feed.stop(); };
}

/** Every rule option and its values, as the OpenAPI document enumerates them. */
export const RULES = /** @type {const} */ ({
  mode: ['solo', 'partnership'],
  pass_direction: ['right', 'left', 'alternate', 'none'],
  pass_restriction: ['on', 'off'],
  forced_leekha: ['both', 'queen_only', 'off'],
  talbees: ['off', 'on'],
  dealer_rotation: ['queen_of_spades_taker', 'rotate_right'],
  solo_tie: ['co_winners', 'sudden_death'],
  team_loss: ['busted_team_loses', 'team_sum_reaches_target'],
});

const TIMEOUTS = [30, 120, 600, 3600, 86400, 259200];

/** @type {View} */
export function createGame(root) {
  /** @param {string} name @param {readonly string[]} values @param {string} label */
  const select = (name, values, label) =>
    h('label', {}, label, h('select', { name },
      h('option', { value: '' }, t('create.default')),
      ...values.map((v) => h('option', { value: v }, t(`value.${name}.${v}`)))));
  // A game with a bot is never rated (API: `rated` needs four humans): say so rather than
  // drop the box's tick without a word.
  const rated = /** @type {HTMLInputElement} */ (h('input', { name: 'rated', type: 'checkbox', checked: true }));
  const ratedNote = h('p', { class: 'note', id: 'rated-note', hidden: true }, t('create.rated_bots'));
  /** @type {HTMLSelectElement[]} */
  const kinds = [];
  const syncRated = () => {
    const bots = kinds.some((kind) => kind.value === 'bot');
    rated.disabled = bots;
    ratedNote.hidden = !bots;
  };
  const seats = [1, 2, 3].map((seat) => {
    // The API's seat `seat`, shown counted from 1.
    const n = seat + 1;
    const kind = h('select', { name: `seat${seat}`, 'aria-label': t('create.seat', { n }) },
      ...['open', 'bot', 'invite'].map((k) => h('option', { value: k }, t(`create.kind.${k}`))));
    const level = h('select', { name: `level${seat}`, 'aria-label': `${t('create.seat', { n })}: ${t('create.kind.bot')}` }, ...LEVELS.map((l) => h('option', { value: l, selected: l === 'heuristic' }, t(`level.${l}`))));
    const user = h('input', { name: `user${seat}`, 'aria-label': `${t('create.seat', { n })}: ${t('auth.username')}`, placeholder: t('auth.username'), pattern: '[A-Za-z0-9_]{3,32}' });
    const sync = () => {
      level.hidden = kind.value !== 'bot';
      user.hidden = kind.value !== 'invite';
      user.required = kind.value === 'invite';
    };
    kind.addEventListener('change', sync);
    kinds.push(/** @type {HTMLSelectElement} */ (kind));
    kind.addEventListener('change', syncRated);
    sync();
    return h('fieldset', { class: 'seat' }, h('legend', {}, t('create.seat', { n })), kind, level, user);
  });
  const form = h('form', { class: 'create', 'aria-label': t('nav.create') },
    h('h1', {}, t('nav.create')),
    h('fieldset', {}, h('legend', {}, t('create.rules')),
      h('label', {}, t('create.preset'), h('select', { name: 'preset' },
        h('option', { value: 'classic' }, t('preset.classic')), h('option', { value: 'partnership' }, t('preset.partnership')))),
      h('label', {}, t('rule.target_score'), h('input', { name: 'target_score', type: 'number', min: 1, max: 1000, placeholder: '101' })),
      ...Object.entries(RULES).map(([name, values]) => select(name, values, t(`rule.${name}`)))),
    h('fieldset', {}, h('legend', {}, t('create.seats')),
      h('p', {}, t('create.seat', { n: 1 }), ': ', t('create.kind.me')), ...seats),
    h('label', {}, t('create.visibility'), h('select', { name: 'visibility' },
      h('option', { value: 'public' }, t('visibility.public')), h('option', { value: 'private' }, t('visibility.private')))),
    h('label', {}, t('create.timeout'), h('select', { name: 'timeout' },
      ...TIMEOUTS.map((s) => h('option', { value: s, selected: s === 86400 }, duration(s * 1000))))),
    h('label', { class: 'check' }, rated, t('create.rated')),
    ratedNote,
    h('label', { class: 'check' },
      h('input', { name: 'allow_spectators', type: 'checkbox', checked: true }), t('create.spectators')),
    h('button', { class: 'primary' }, t('create.submit')));
  onceAtATime(form, 'submit', async () => {
    const data = new FormData(form);
    const text = (/** @type {string} */ k) => String(data.get(k) ?? '');
    /** @type {Record<string, unknown>} */
    const rules = { preset: text('preset') };
    for (const name of Object.keys(RULES)) if (text(name)) rules[name] = text(name);
    if (text('target_score')) rules.target_score = Number(text('target_score'));
    /** @type {S['SeatRequest'][]} */
    const seatList = [{ kind: 'me' }];
    for (const n of [1, 2, 3]) {
      const kind = /** @type {S['SeatKind']} */ (text(`seat${n}`));
      if (kind === 'bot') seatList.push({ kind, level: /** @type {BotLevel} */ (text(`level${n}`)) });
      else if (kind === 'invite') seatList.push({ kind, username: text(`user${n}`) });
      else seatList.push({ kind });
    }
    const hasBot = seatList.some((s) => s.kind === 'bot');
    /** @type {S['CreateGame']} */
    const body = {
      rules: /** @type {S['RulesInput']} */ (rules),
      seats: seatList,
      visibility: /** @type {S['Visibility']} */ (text('visibility')),
      turn_timeout_seconds: Number(text('timeout')),
      rated: data.get('rated') === 'on' && !hasBot,
      allow_spectators: data.get('allow_spectators') === 'on',
    };
    try {
      /** @type {S['GameView']} */
      const game = await call('POST', '/games', { body });
      go(`game/${game.id}`);
    } catch (err) {
      fail(err);
    }
  });
  replace(root, form);
}

/** @type {View} */
export function account(root) {
  const user = currentUser();
  if (!user) return;
  const form = h('form', { class: 'card-panel', 'aria-label': t('nav.account') },
    h('p', {}, user.is_guest ? t('account.claim') : user.username),
    h('label', {}, t('auth.username'), h('input', { name: 'username', value: user.username, pattern: '[A-Za-z0-9_]{3,32}', required: true })),
    h('label', {}, t('auth.password'), h('input', { name: 'password', type: 'password', minlength: 8, autocomplete: 'new-password', required: user.is_guest })),
    user.is_guest ? null : h('label', {}, t('auth.current_password'), h('input', { name: 'current_password', type: 'password', autocomplete: 'current-password' })),
    h('button', { class: 'primary' }, t('account.save')));
  onceAtATime(form, 'submit', async () => {
    const data = new FormData(form);
    /** @type {S['UpdateMe']} */
    const change = { username: String(data.get('username')) };
    if (data.get('password')) change.password = String(data.get('password'));
    if (data.get('current_password')) change.current_password = String(data.get('current_password'));
    try {
      await updateMe(change);
      // Drawn again from the account as it is now: its name, and no password left typed.
      account(root, '');
      say(t('account.saved'), 'ok');
    } catch (err) {
      fail(err);
    }
  });
  const push = h('button', { type: 'button', id: 'push' }, t('account.push'));
  const pushNote = h('p', { class: 'note' });
  pushState().then((state) => {
    if (state === 'unavailable') { push.disabled = true; pushNote.textContent = t('account.push_unavailable'); }
    if (state === 'on') pushNote.textContent = t('account.push_on');
  });
  push.addEventListener('click', async () => {
    try {
      pushNote.textContent = t(`account.push_${await enablePush()}`);
    } catch (err) {
      fail(err);
    }
  });
  const out = h('button', { type: 'button' }, t('auth.logout'));
  out.addEventListener('click', async () => {
    // A guest has no password: once signed out, nobody can sign in to that account again.
    if (currentUser()?.is_guest && !confirm(t('account.guest_logout_confirm'))) return;
    await signOut();
    go('');
  });
  replace(root, h('h1', {}, t('nav.account')), form, h('div', { class: 'card-panel' }, push, pushNote), out);
}
