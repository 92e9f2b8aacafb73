// The marketplace's request-signing keys, read from its
// /.well-known/crtx.json and kept: fetched once per hour at most, shared by
// the requests that arrive meanwhile, asked again after a failure, and read
// again, at most once a minute, when a signature verifies against none of
// them (the marketplace rotated its key).

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
 * signing_public_key, then, while it rotates its key, next_signing_public_key.
 */
export async function fetchMarketplaceKeys(url, fetchFn = globalThis.fetch) {
  const where = `${url.replace(/\/+$/, '')}/.well-known/crtx.json`;
  const res = await fetchFn(where, { headers: { Accept: 'application/json' } });
  if (!res.ok) throw new Error(`crtx: GET ${where}: HTTP ${res.status}`);
  const wk = await res.json();
  const keys = [key(wk, 'signing_public_key', where)];
  if (wk.next_signing_public_key !== undefined) keys.push(key(wk, 'next_signing_public_key', where));
  return keys;
}

/** Reads signing_public_key from the marketplace at url. */
export async function fetchMarketplaceKey(url, fetchFn = globalThis.fetch) {
  return (await fetchMarketplaceKeys(url, fetchFn))[0];
}

/**
 * The marketplace's keys, kept for ttlMs: keys() answers them; refresh()
 * reads them again unless they were read less than refreshMs ago, and
 * answers the keys read, or undefined when it did not read.
 */
export function cachedMarketplaceKeys(url, { ttlMs = HOUR, refreshMs = MINUTE, fetch: fetchFn, now = Date.now } = {}) {
  let pending, at = -Infinity;
  const read = () => {
    at = now();
    const p = fetchMarketplaceKeys(url, fetchFn);
    p.catch(() => {
      if (pending === p) pending = undefined;
    });
    pending = p;
    return p;
  };
  return {
    keys: () => (!pending || now() - at > ttlMs ? read() : pending),
    refresh: () => (now() - at < refreshMs ? Promise.resolve(undefined) : read()),
  };
}

/** A function answering the marketplace's key, cached for ttlMs. */
export function cachedMarketplaceKey(url, options = {}) {
  const cache = cachedMarketplaceKeys(url, options);
  return async () => (await cache.keys())[0];
}
