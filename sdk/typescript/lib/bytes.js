// Conversions between text, bytes and hex, and SHA-256, on Web Crypto so
// that the package runs unchanged in Node, Deno, Bun and Workers.

const encoder = new TextEncoder();

/** @param {string | Uint8Array} v */
export const utf8 = (v) => (typeof v === 'string' ? encoder.encode(v) : v);

/** @param {Uint8Array} b */
export const toHex = (b) => Array.from(b, (x) => x.toString(16).padStart(2, '0')).join('');

/** @param {string} s */
export function fromHex(s) {
  if (!/^(?:[0-9a-f]{2})*$/.test(s)) throw new Error(`not lowercase hex: ${JSON.stringify(s)}`);
  return Uint8Array.from(s.match(/../g) ?? [], (h) => parseInt(h, 16));
}

/** @param {...Uint8Array} parts */
export function concat(...parts) {
  const out = new Uint8Array(parts.reduce((n, p) => n + p.length, 0));
  let off = 0;
  for (const p of parts) {
    out.set(p, off);
    off += p.length;
  }
  return out;
}

/** SHA-256 of text (UTF-8) or bytes. @param {string | Uint8Array} v */
export async function sha256(v) {
  return new Uint8Array(await crypto.subtle.digest('SHA-256', utf8(v)));
}
