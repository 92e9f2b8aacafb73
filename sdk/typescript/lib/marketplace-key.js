// The marketplace's request-signing keys, read from its
// /.well-known/crtx.json and kept: read again after an hour, and when a
// signature verifies against none of them (the marketplace rotated its
// key); never more than once a minute, a read shared by the requests that
// arrive meanwhile, and one that fails keeping the keys read before.

import { base58Decode } from './base58.js';

const HOUR = 3600_000;
const MINUTE = 60_000;

function key(wk, field, where) {
  const k = wk[field];
  if (typeof k !== 'string' || base58Decode(k).length !== 32) throw new Error(`crtx: ${where} has no valid ${field}`);
  return k;
}

/**
 * Reads the keys requests may be signed with from the marketplace at url:
 * signing_public_key, then, while it rotates its key, next_signing_public_key,
 * and for a while after the switch previous_signing_public_key.
 */
export async function fetchMarketplaceKeys(url, fetchFn = globalThis.fetch) {
  const where = `${url.replace(/\/+$/, '')}/.well-known/crtx.json`;
  const res = await fetchFn(where, { headers: { Accept: 'application/json' } });
  if (!res.ok) throw new Error(`crtx: GET ${where}: HTTP ${res.status}`);
  const wk = await res.json();
  const keys = [key(wk, 'signing_public_key', where)];
  for (const field of ['next_signing_public_key', 'previous_signing_public_key']) {
    if (wk[field] !== undefined) keys.push(key(wk, field, where));
  }
  return keys;
}

/** Reads signing_public_key from the marketplace at url. */
export async function fetchMarketplaceKey(url, fetchFn = globalThis.fetch) {
  return (await fetchMarketplaceKeys(url, fetchFn))[0];
}

/**
 * The marketplace's keys, kept for ttlMs: keys() answers them, read first
 * when there are none or they are older; refresh() reads them again and
 * answers them as they stand (undefined while none could be read): another
 * request may have just read the key a signature needs. No read starts
 * within refreshMs of the last (5 s until keys were first read); one that
 * fails keeps the keys read before.
 */
export function cachedMarketplaceKeys(url, { ttlMs = HOUR, refreshMs = MINUTE, fetch: fetchFn, now = Date.now } = {}) {
  let keys, readAt = -Infinity, attempt = -Infinity, pending, failure;
  const read = () => {
    if (pending) return pending;
    if (now() - attempt < (keys === undefined ? Math.min(refreshMs, 5000) : refreshMs)) return Promise.resolve(keys);
    attempt = now();
    pending = fetchMarketplaceKeys(url, fetchFn).then(
      (k) => { keys = k; readAt = now(); failure = undefined; return k; },
      (e) => { failure = e; return keys; },
    ).finally(() => { pending = undefined; });
    return pending;
  };
  return {
    keys: async () => {
      if (keys === undefined || now() - readAt > ttlMs) await read();
      if (keys === undefined) throw failure ?? new Error(`crtx: the keys of ${url} are not read yet`);
      return keys;
    },
    refresh: read,
  };
}

/** A function answering the marketplace's key, cached for ttlMs. */
export function cachedMarketplaceKey(url, options = {}) {
  const cache = cachedMarketplaceKeys(url, options);
  return async () => (await cache.keys())[0];
}
