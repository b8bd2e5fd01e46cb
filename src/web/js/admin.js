// The administrators' console (role admin): users (search, ban, unban), games (search, the
// full state, abort, a seat to a bot) and the audit log. Every action is audited server-side.

import { call, currentUser } from './api.js';
import { fail, h, replace, say } from './dom.js';
import { t } from './i18n.js';

/** @typedef {import('leekha-api').components['schemas']} S */
/** @typedef {(root: HTMLElement, param: string) => (void | (() => void))} View */

/**
 * A search form that calls `run` with its text.
 * @param {string} label
 * @param {(query: string) => void} run
 */
function search(label, run) {
  const input = h('input', { name: 'q', type: 'search', 'aria-label': label, placeholder: label });
  const form = h('form', { class: 'row' }, input, h('button', {}, t('admin.search')));
  form.addEventListener('submit', (e) => { e.preventDefault(); run(input.value.trim()); });
  return form;
}

/**
 * @param {string} label
 * @param {() => Promise<unknown>} action
 * @param {() => void} after
 */
function act(label, action, after) {
  const b = h('button', { type: 'button' }, label);
  b.addEventListener('click', async () => {
    b.disabled = true;
    try {
      await action();
      after();
    } catch (e) {
      fail(e);
      b.disabled = false;
    }
  });
  return b;
}

/** @type {View} */
export function admin(root) {
  if (currentUser()?.role !== 'admin') {
    replace(root, h('p', {}, t('admin.forbidden')));
    return;
  }
  const users = h('ul', { class: 'admin-list', id: 'admin-users' });
  const games = h('ul', { class: 'admin-list', id: 'admin-games' });
  const detail = h('pre', { class: 'state', id: 'admin-state' });
  const audit = h('ol', { class: 'admin-list', id: 'admin-audit' });
  const reason = h('input', { name: 'reason', 'aria-label': t('admin.reason'), placeholder: t('admin.reason'), value: 'moderation' });

  /** @param {string} q */
  const findUsers = (q) => call('GET', `/admin/users?limit=50&query=${encodeURIComponent(q)}`).then((/** @type {S['AdminUsersPage']} */ page) => {
    replace(users, ...page.items.map((u) => h('li', { 'data-user': u.username },
      h('b', {}, u.username), ` ${t(`role.${u.role}`)}${u.is_guest ? ` · ${t('admin.guest')}` : ''}`,
      u.banned_at ? h('span', { class: 'badge' }, t('admin.banned')) : null, ' ',
      u.banned_at
        ? act(t('admin.unban'), () => call('POST', `/admin/users/${u.id}/unban`, { body: {} }), () => { findUsers(q); loadAudit(); })
        : act(t('admin.ban'), () => call('POST', `/admin/users/${u.id}/ban`, { body: { reason: reason.value || 'moderation' } }), () => { findUsers(q); loadAudit(); }))));
  }, fail);

  /** @param {string} q */
  const findGames = (q) => {
    const filter = ['waiting', 'active', 'finished', 'aborted'].includes(q) ? `status=${q}` : q ? `player=${encodeURIComponent(q)}` : '';
    call('GET', `/admin/games?limit=50&${filter}`).then((/** @type {S['AdminGamesPage']} */ page) => {
      replace(games, ...page.items.map((g) => h('li', {},
        h('code', {}, g.id.slice(0, 8)), ` ${g.status} · ${g.seats.map((s) => s.player?.username ?? s.bot ?? '—').join(', ')} `,
        act(t('admin.inspect'), () => inspect(g.id), () => {}),
        g.status === 'active' || g.status === 'waiting'
          ? act(t('admin.abort'), () => call('POST', `/admin/games/${g.id}/abort`, { body: { reason: reason.value || 'moderation' } }), () => { findGames(q); loadAudit(); })
          : null,
        ...(g.status === 'active' ? g.seats.filter((s) => s.player).map((s) =>
          act(t('admin.to_bot', { n: s.seat + 1 }), () => call('POST', `/admin/games/${g.id}/seats/${s.seat}/bot`, { body: { reason: reason.value || null } }), () => { findGames(q); loadAudit(); })) : []))));
    }, fail);
  };

  /** @param {string} id */
  const inspect = async (id) => {
    /** @type {S['AdminGameView']} */
    const state = await call('GET', `/admin/games/${id}`);
    detail.textContent = JSON.stringify({ ...state, actions: `${state.actions.length} actions` }, null, 2);
  };

  const loadAudit = () => call('GET', '/admin/audit?limit=30').then((/** @type {S['AuditPage']} */ page) => {
    replace(audit, ...page.items.map((a) => h('li', {}, `${a.created_at.slice(0, 19)} ${a.admin.username} ${a.action} ${a.target_type} ${a.target_id.slice(0, 8)} ${a.reason ?? ''}`)));
  }, fail);

  replace(root,
    h('h1', {}, t('nav.admin')),
    reason,
    h('section', { 'aria-label': t('admin.users') }, h('h2', {}, t('admin.users')), search(t('auth.username'), findUsers), users),
    h('section', { 'aria-label': t('admin.games') }, h('h2', {}, t('admin.games')), search(t('admin.games_query'), findGames), games, detail),
    h('section', { 'aria-label': t('admin.audit') }, h('h2', {}, t('admin.audit')), audit));
  findUsers('');
  findGames('');
  loadAudit();
  say('');
}
