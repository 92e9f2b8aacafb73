// A result's content id: CIDv1, raw codec, SHA-256 (docs/verify.md, step 2),
// "b" + RFC 4648 base32 (lowercase, unpadded) of 01 55 12 20 ‖ digest.

const ALPHABET = 'abcdefghijklmnopqrstuvwxyz234567';

/** @param {Uint8Array} digest the SHA-256 of the bytes */
export function cidOf(digest) {
  let out = 'b', bits = 0, value = 0;
  for (const b of [0x01, 0x55, 0x12, 0x20, ...digest]) {
    value = (value << 8) | b;
    bits += 8;
    while (bits >= 5) {
      out += ALPHABET[(value >>> (bits - 5)) & 31];
      bits -= 5;
    }
    value &= (1 << bits) - 1;
  }
  if (bits > 0) out += ALPHABET[(value << (5 - bits)) & 31];
  return out;
}
