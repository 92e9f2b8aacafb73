// The creator protocol's hashes and signatures (docs/creators.md).

import { concat, sha256, toHex, utf8 } from './bytes.js';
import { verifySignature } from './keys.js';

/** The largest request body a creator's service reads: 1 MiB, as the Go handler. */
export const MAX_BODY = 1 << 20;

export const HEADER_TIMESTAMP = 'x-crtx-timestamp';
export const HEADER_SIGNATURE = 'x-crtx-signature';
export const HEADER_AGENT_ID = 'x-crtx-agent-id';
export const HEADER_SIGNING_KEY = 'x-crtx-signing-key';
export const HEADER_ENVIRONMENT = 'x-crtx-environment';
export const HEADER_TEST = 'x-crtx-test';

/** "sha256:" + hex SHA-256 of the result's UTF-8 bytes. @param {string} result */
export const resultHash = async (result) => 'sha256:' + toHex(await sha256(result));

/**
 * The creator's signature of a result hash: "ed25519:" + base58 of Ed25519
 * over the hash string itself, not the digest.
 */
export const signResult = async (key, hash) => 'ed25519:' + (await key.sign(hash));

/**
 * The bytes a metered listing's creator signs for a call's usage: the
 * preamble, the execution id, the result hash and the tokens in decimal,
 * apart by line feeds (docs/creators.md, "Metered listings").
 */
export const usageStatement = (executionId, hash, tokens) => `crtx-usage-v1\n${executionId}\n${hash}\n${tokens}`;

/** A reply's usage_signature: "ed25519:" + base58 of Ed25519 over the usage statement. */
export const signUsage = async (key, executionId, hash, tokens) => 'ed25519:' + (await key.sign(usageStatement(executionId, hash, tokens)));

/**
 * The bytes the marketplace signs for a request to a creator: the preamble,
 * the timestamp, agent id, signing key, environment and test flag, each
 * followed by a line feed, then the body exactly as received.
 * @param {{agentId?: string, signingKey: string, environment: string, test: boolean}} scope
 * @param {string} timestamp
 * @param {string | Uint8Array} body
 */
export function requestSigningBytes(scope, timestamp, body) {
  const head = `crtx-request-v2\n${timestamp}\n${scope.agentId ?? ''}\n${scope.signingKey}\n${scope.environment}\n${scope.test ? 'true' : 'false'}\n`;
  return concat(utf8(head), utf8(body));
}

/** The X-Crtx-Signature of a request: what the marketplace sends (tests use it to play the marketplace). */
export const signRequest = async (key, scope, timestamp, body) =>
  'ed25519:' + (await key.sign(requestSigningBytes(scope, timestamp, body)));

/** Whether X-Crtx-Signature verifies with the marketplace's base58 key. A field holding a line feed would move the others: refused. */
export async function verifyRequestSignature(marketplaceKey, scope, timestamp, body, signature) {
  if (typeof signature !== 'string' || !signature.startsWith('ed25519:')) return false;
  if (/\n/.test(`${timestamp}${scope.agentId ?? ''}${scope.signingKey}${scope.environment}`)) return false;
  return verifySignature(marketplaceKey, requestSigningBytes(scope, timestamp, body), signature);
}
