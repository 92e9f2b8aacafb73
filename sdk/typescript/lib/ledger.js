// The ledger's hashes (docs/ledger.md, "Hashes"), account addresses and
// inclusion proofs (docs/verify.md, steps 5 and 6).

import { base58Encode } from './base58.js';
import { concat, fromHex, sha256, toHex } from './bytes.js';
import { canonicalize, without } from './canonical.js';
import { verifySignature } from './keys.js';
import { blockV1, transactionV1 } from './ledger-v1.js';

function transactionCanonical(tx) {
  if (tx.version === 2) return canonicalize(without(tx, 'seq', 'block_height', 'hash'));
  if (tx.version === 1) return transactionV1(tx);
  throw new Error(`unknown transaction version ${JSON.stringify(tx.version)}`);
}

function blockCanonical(b) {
  // anchor names the Solana transaction written after the block was signed: not part of its hash.
  if (b.version === 2) return canonicalize(without(b, 'hash', 'signature', 'anchor'));
  if (b.version === 1) return blockV1(b);
  throw new Error(`unknown block version ${JSON.stringify(b.version)}`);
}

/** A ledger transaction's hash, hex, as recomputed from what was served. */
export const transactionHash = async (tx) => toHex(await sha256(transactionCanonical(tx)));

/** A block's hash, hex. */
export const blockHash = async (b) => toHex(await sha256(blockCanonical(b)));

/** A ledger account's address: base58 of SHA-256 of "crtx:<kind>:<id>". */
export const accountAddress = async (kind, id) => base58Encode(await sha256(`crtx:${kind}:${id}`));

/**
 * Checks an inclusion proof for tx against the ledger authority's base58
 * key; resolves to undefined when it holds, else to what does not.
 */
export async function proofProblem(proof, tx, authority) {
  const hash = await transactionHash(tx);
  if (hash !== tx.hash) return `transaction ${tx.id} hashes to ${hash}, served as ${tx.hash}`;
  if (proof.transaction_hash !== hash) return `the proof is for ${proof.transaction_hash}, not ${hash}`;
  const block = proof.block ?? {};
  let node = await sha256(concat(Uint8Array.of(0), fromHex(hash)));
  for (const step of proof.path ?? []) {
    const sibling = fromHex(step.hash);
    if (step.position === 'left') node = await sha256(concat(Uint8Array.of(1), sibling, node));
    else if (step.position === 'right') node = await sha256(concat(Uint8Array.of(1), node, sibling));
    else return `a proof step's position is ${JSON.stringify(step.position)}`;
  }
  if (toHex(node) !== block.merkle_root) return `the path leads to ${toHex(node)}, not the block's merkle_root ${block.merkle_root}`;
  const bh = await blockHash(block);
  if (bh !== block.hash) return `block ${block.height} hashes to ${bh}, served as ${block.hash}`;
  if (!(await verifySignature(authority, fromHex(bh), block.signature))) return `block ${block.height} is not signed by the ledger authority ${authority}`;
  return undefined;
}
