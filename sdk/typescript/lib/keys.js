// Ed25519 keys on Web Crypto: a signing key made from its 32-byte seed (or
// the 64 bytes of a Solana CLI key file), and verification against a
// base58 public key.

import { base58Decode, base58Encode } from './base58.js';
import { concat, utf8 } from './bytes.js';

const ED25519 = { name: 'Ed25519' };
// The fixed PKCS #8 header of an Ed25519 private key, before its seed.
const PKCS8_PREFIX = Uint8Array.of(0x30, 0x2e, 0x02, 0x01, 0x00, 0x30, 0x05, 0x06, 0x03, 0x2b, 0x65, 0x70, 0x04, 0x22, 0x04, 0x20);

const fromBase64url = (s) => Uint8Array.from(atob(s.replace(/-/g, '+').replace(/_/g, '/')), (c) => c.charCodeAt(0));

/**
 * A signing key from its seed (32 bytes) or a Solana secret key (64 bytes:
 * the seed, then the public key, which must match).
 * @param {Uint8Array | number[]} secret
 */
export async function signingKey(secret) {
  const bytes = Uint8Array.from(secret);
  if (bytes.length !== 32 && bytes.length !== 64) throw new Error(`an Ed25519 secret key is 32 or 64 bytes, not ${bytes.length}`);
  const seed = bytes.slice(0, 32);
  const key = await crypto.subtle.importKey('pkcs8', concat(PKCS8_PREFIX, seed), ED25519, true, ['sign']);
  const pub = fromBase64url((await crypto.subtle.exportKey('jwk', key)).x);
  if (bytes.length === 64 && base58Encode(bytes.slice(32)) !== base58Encode(pub)) {
    throw new Error('the secret key\'s last 32 bytes are not its public key');
  }
  const publicKey = base58Encode(pub);
  return Object.freeze({
    publicKey,
    /** Ed25519 signature of text (UTF-8) or bytes, base58. */
    async sign(message) {
      return base58Encode(new Uint8Array(await crypto.subtle.sign(ED25519, key, utf8(message))));
    },
    /** The 64 bytes a Solana CLI key file holds, as a JSON array. */
    secretKeyBytes: () => concat(seed, pub),
    toJSON: () => ({ publicKey }),
  });
}

/** A new random signing key. */
export const generateSigningKey = () => signingKey(crypto.getRandomValues(new Uint8Array(32)));

/**
 * A signing key from the text of a Solana CLI key file (a JSON array of 64 bytes).
 * @param {string} text
 */
export function signingKeyFromFile(text) {
  const arr = JSON.parse(text);
  if (!Array.isArray(arr) || arr.length !== 64 || !arr.every((b) => Number.isInteger(b) && b >= 0 && b < 256)) {
    throw new Error('not a Solana key file: a JSON array of 64 bytes');
  }
  return signingKey(arr);
}

/**
 * Whether signature (base58, an "ed25519:" prefix allowed) verifies over
 * message with the base58 public key; false for a malformed key or signature.
 */
export async function verifySignature(publicKey, message, signature) {
  try {
    const pub = base58Decode(publicKey);
    const sig = base58Decode(signature.startsWith('ed25519:') ? signature.slice(8) : signature);
    if (pub.length !== 32 || sig.length !== 64) return false;
    const key = await crypto.subtle.importKey('raw', pub, ED25519, false, ['verify']);
    return await crypto.subtle.verify(ED25519, key, sig, utf8(message));
  } catch {
    return false;
  }
}
