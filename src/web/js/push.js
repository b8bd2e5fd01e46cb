// The service worker and Web Push: "your turn" reaches a phone's browser with the tab
// closed. The subscription uses the server's VAPID key (GET /push/config) and is registered
// as a device (POST /me/devices, platform webpush).

import { call } from './api.js';
import { currentLang } from './i18n.js';

/** @typedef {import('leekha-api').components['schemas']} S */

/** Registers /sw.js (it controls the whole origin); quietly does nothing where unsupported. */
export function registerWorker() {
  if (!('serviceWorker' in navigator)) return;
  navigator.serviceWorker.register('/sw.js', { scope: '/' }).catch(() => {});
}

function supported() {
  return 'serviceWorker' in navigator && 'PushManager' in window && 'Notification' in window;
}

/** @returns {Promise<'on' | 'off' | 'unavailable'>} */
export async function pushState() {
  if (!supported()) return 'unavailable';
  const reg = await navigator.serviceWorker.getRegistration('/');
  const sub = await reg?.pushManager.getSubscription();
  return sub ? 'on' : 'off';
}

/** @param {string} base64url */
function keyBytes(base64url) {
  const b64 = base64url.replace(/-/g, '+').replace(/_/g, '/');
  const raw = atob(b64 + '='.repeat((4 - (b64.length % 4)) % 4));
  return Uint8Array.from(raw, (c) => c.charCodeAt(0));
}

/**
 * Asks for permission, subscribes and registers the device: `on`; `denied` when permission
 * was refused; `unavailable` when the browser or the server cannot push.
 * @returns {Promise<'on' | 'denied' | 'unavailable'>}
 */
export async function enablePush() {
  if (!supported()) return 'unavailable';
  /** @type {S['PushConfigView']} */
  const config = await call('GET', '/push/config', { auth: false });
  if (!config.vapid_public_key) return 'unavailable';
  if ((await Notification.requestPermission()) !== 'granted') return 'denied';
  const reg = await navigator.serviceWorker.ready;
  const sub = await reg.pushManager.subscribe({
    userVisibleOnly: true,
    applicationServerKey: keyBytes(config.vapid_public_key),
  });
  const json = sub.toJSON();
  /** @type {S['DeviceRequest']} */
  const body = {
    platform: 'webpush',
    subscription: {
      endpoint: String(json.endpoint),
      keys: { p256dh: String(json.keys?.p256dh), auth: String(json.keys?.auth) },
    },
    locale: currentLang(),
  };
  try {
    await call('POST', '/me/devices', { body });
  } catch (err) {
    // Without the server's device the browser's subscription pushes nothing: drop it, so
    // that the page does not say notifications are on.
    await sub.unsubscribe().catch(() => {});
    throw err;
  }
  return 'on';
}
