// The marketplace's request-signing key, read from its
// /.well-known/crtx.json and kept: fetched once per hour at most, shared by
// the requests that arrive meanwhile, and asked again after a failure.

import { base58Decode } from './base58.js';

const HOUR = 3600_000;

/** Reads signing_public_key from the marketplace at url. */
export async function fetchMarketplaceKey(url, fetchFn = globalThis.fetch) {
  const where = `${url.replace(/\/+$/, '')}/.well-known/crtx.json`;
  const res = await fetchFn(where, { headers: { Accept: 'application/json' } });
  if (!res.ok) throw new Error(`crtx: GET ${where}: HTTP ${res.status}`);
  const key = (await res.json()).signing_public_key;
  if (typeof key !== 'string' || base58Decode(key).length !== 32) throw new Error(`crtx: ${where} has no valid signing_public_key`);
  return key;
}

/** A function answering the marketplace's key, cached for ttlMs. */
export function cachedMarketplaceKey(url, { ttlMs = HOUR, fetch: fetchFn, now = Date.now } = {}) {
  let pending, at = -Infinity;
  return () => {
    if (!pending || now() - at > ttlMs) {
      at = now();
      const p = fetchMarketplaceKey(url, fetchFn);
      p.catch(() => {
        if (pending === p) pending = undefined;
      });
      pending = p;
    }
    return pending;
  };
}
