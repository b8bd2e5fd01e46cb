// The service worker: shows pushed notifications (the payload is the notification JSON with
// `title`, `body` and `silent`), opens the game on a click, and keeps the app shell for
// offline starts. The API is never cached: a game view must be fresh.

const worker = /** @type {ServiceWorkerGlobalScope} */ (/** @type {unknown} */ (self));
const SHELL = 'leekha-shell-v2';
const FILES = ['/', '/app/app.css', '/app/icon.svg', '/app/manifest.webmanifest',
  '/app/js/main.js', '/app/js/api.js', '/app/js/live.js', '/app/js/cards.js', '/app/js/i18n.js',
  '/app/js/dom.js', '/app/js/table.js', '/app/js/lobby.js', '/app/js/admin.js', '/app/js/push.js',
  '/app/i18n/en.json', '/app/i18n/ar.json'];

worker.addEventListener('install', (event) => {
  event.waitUntil(caches.open(SHELL).then((cache) => cache.addAll(FILES)).then(() => worker.skipWaiting()));
});

worker.addEventListener('activate', (event) => {
  event.waitUntil(worker.clients.claim());
});

// Network first (assets revalidate by ETag), the cached shell when offline.
worker.addEventListener('fetch', (event) => {
  const url = new URL(event.request.url);
  if (event.request.method !== 'GET' || url.origin !== worker.location.origin) return;
  if (url.pathname !== '/' && !url.pathname.startsWith('/app/')) return;
  event.respondWith(
    fetch(event.request)
      .then((res) => {
        if (res.ok) {
          const copy = res.clone();
          caches.open(SHELL).then((cache) => cache.put(event.request, copy));
        }
        return res;
      })
      .catch(() => caches.match(event.request).then((hit) => hit || Response.error())),
  );
});

worker.addEventListener('push', (event) => {
  /** @type {{title?: string, body?: string, silent?: boolean, game_id?: string | null, type?: string}} */
  let data = {};
  try {
    data = event.data ? event.data.json() : {};
  } catch {
    data = { title: 'Leekha', body: event.data ? event.data.text() : '' };
  }
  // One notification per game and kind on screen, as the pushes collapse on the server.
  const tag = data.game_id ? `${data.game_id}:${data.type ?? ''}` : undefined;
  event.waitUntil(
    worker.registration.showNotification(data.title || 'Leekha', {
      body: data.body || '',
      tag,
      silent: Boolean(data.silent),
      icon: '/app/icon.svg',
      data: { game_id: data.game_id },
    }),
  );
});

worker.addEventListener('notificationclick', (event) => {
  event.notification.close();
  const id = event.notification.data && event.notification.data.game_id;
  const target = id ? `/#/game/${id}` : '/';
  event.waitUntil(
    worker.clients.matchAll({ type: 'window', includeUncontrolled: true }).then((list) => {
      const [open] = list;
      if (open) return open.navigate(target).then((c) => (c ?? open).focus());
      return worker.clients.openWindow(target);
    }),
  );
});
