// The client's entry: routes on the URL fragment (`#/game/<id>`), so the server serves one
// page and every other path keeps its API meaning.

import { currentUser, onAnswer, onSession, reloadMe, takeEnded } from './api.js';
import { applyLang, currentLang, setLang, t } from './i18n.js';
import { byId, h, reached, replace, say } from './dom.js';
import { landing, lobby, myGames, createGame, account } from './lobby.js';
import { table, replay } from './table.js';
import { admin } from './admin.js';
import { registerWorker } from './push.js';

/** @typedef {(root: HTMLElement, param: string) => (void | (() => void))} View */

/** @type {Record<string, View>} */
const ROUTES = {
  '': home,
  lobby,
  mine: myGames,
  create: createGame,
  account,
  game: table,
  replay,
  admin,
};

/** @type {void | (() => void)} */
let cleanup;

/** @type {View} */
function home(root, param) {
  return currentUser() ? myGames(root, param) : landing(root, param);
}

function nav() {
  const user = currentUser();
  const links = user
    ? [
        ['mine', 'nav.mine'],
        ['lobby', 'nav.lobby'],
        ['create', 'nav.create'],
        ['account', 'nav.account'],
        ...(user.role === 'admin' ? [['admin', 'nav.admin']] : []),
      ]
    : [];
  const here = location.hash.slice(2).split('/')[0] || (user ? 'mine' : '');
  replace(
    byId('nav'),
    ...links.map(([path, key]) =>
      h('a', { href: `#/${path}`, 'aria-current': here === path ? 'page' : null }, t(key)),
    ),
  );
  byId('lang').textContent = t('lang.switch');
  byId('brand-name').textContent = t('app.title');
}

function render() {
  if (typeof cleanup === 'function') cleanup();
  cleanup = undefined;
  say('');
  const [name = '', ...rest] = location.hash.replace(/^#\/?/, '').split('/');
  const view = ROUTES[name] ?? home;
  const needsUser = name !== '' && !currentUser();
  const root = byId('main');
  root.replaceChildren();
  nav();
  // A link followed before signing in is kept: the landing page opens it once signed in.
  const wanted = ROUTES[name] ? [name, ...rest].join('/') : '';
  cleanup = needsUser ? landing(root, wanted) : view(root, rest.join('/'));
}

applyLang();
byId('lang').addEventListener('click', () => {
  setLang(currentLang() === 'ar' ? 'en' : 'ar');
  render();
});
window.addEventListener('hashchange', render);
// A message that the server cannot be reached goes once it answers again.
onAnswer(reached);

// Whose pages are on screen: when that account signs out (here or in another tab) or gives
// way to another, they go, hand and all, and so does the route: the game that was open was
// that account's, not a link someone sent, so the start page does not offer to open it.
// Signing in is followed by the page that asked.
let shownFor = currentUser()?.id ?? null;
onSession(() => {
  const now = currentUser()?.id ?? null;
  const gone = shownFor !== null && now !== shownFor;
  shownFor = now;
  // The session ended (a ban, a deleted account, a refresh refused, signed out in another
  // tab): back to the start, saying why.
  const why = takeEnded();
  if (why || gone) {
    if (location.hash.replace(/^#\/?/, '') !== '') history.replaceState(null, '', '#/');
    render();
    if (why) say(t(`session.${why}`));
    return;
  }
  nav();
});
render();
if (currentUser()) reloadMe().catch(() => {});
registerWorker();
