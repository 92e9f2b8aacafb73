// The anchor on Solana (docs/verify.md, step 8): the ledger authority's SPL
// Memo naming a block, read by JSON-RPC, and the wire format of a Solana
// transaction, read as far as checking an anchor needs. Written here rather
// than imported so that the package keeps no dependencies.

import { base58Encode } from './base58.js';
import { utf8 } from './bytes.js';
import { verifySignature } from './keys.js';

/** The SPL Memo program (v2): an anchor is its instruction's data, nothing before it. */
export const MEMO_PROGRAM = 'MemoSq4gqABAXKb96qnH8TysNcWxMyWCqXgDLGmfcHr';

/** Solana mainnet's genesis hash: the cluster every anchor of a mainnet ledger must be on. */
export const MAINNET_GENESIS_HASH = '5eykt4UsFv8P8NJdTREpY1vzqKqZKvdpKuc147dw2N9d';

const DEFAULT_RPC = {
  'mainnet-beta': 'https://api.mainnet-beta.solana.com',
  devnet: 'https://api.devnet.solana.com',
  testnet: 'https://api.testnet.solana.com',
};

/** The public JSON-RPC endpoint of a cluster; undefined for "custom" (a validator of the marketplace's own). */
export const defaultSolanaRPC = (cluster) => (Object.hasOwn(DEFAULT_RPC, cluster) ? DEFAULT_RPC[cluster] : undefined);

/** The memo that anchors a block: crtx:<environment>:<height>:<hash>. */
export const anchorMemo = (b) => `crtx:${b.environment}:${b.height}:${b.hash}`;

/**
 * Reads a signed transaction as the cluster sends it (getTransaction, base64):
 * compact-u16 ("shortvec") lengths, 7 bits a byte, low first, at most three
 * bytes, in their shortest form only; the signatures, then a legacy
 * (version -1) or v0 message, to the last byte. Throws on anything else.
 * @param {Uint8Array} raw
 */
export function parseSolanaTransaction(raw) {
  const b = Uint8Array.from(raw);
  let off = 0;
  const fail = (what) => { throw new Error(`not a Solana transaction: at byte ${off}: ${what}`); };
  const byte = () => (off < b.length ? b[off++] : fail('unexpected end'));
  const bytes = (n) => (n <= b.length - off ? b.subarray(off, (off += n)) : fail(`${n} bytes wanted, ${b.length - off} left`));
  const u16 = () => {
    let v = 0;
    for (let i = 0; i < 3; i++) {
      const x = byte();
      if (i === 2 && x > 3) fail('compact-u16 overflows 16 bits');
      v |= (x & 0x7f) << (7 * i);
      if (!(x & 0x80)) {
        if (i > 0 && x === 0) fail('compact-u16 not in its shortest form');
        return v;
      }
    }
    return fail('compact-u16 longer than three bytes');
  };
  const signatures = [];
  for (let i = 0, n = u16(); i < n; i++) signatures.push(bytes(64));
  const messageStart = off;
  let version = -1;
  if (off < b.length && b[off] & 0x80) {
    version = byte() & 0x7f;
    if (version !== 0) fail(`message version ${version}`);
  }
  const header = [byte(), byte(), byte()];
  const keys = [];
  for (let i = 0, n = u16(); i < n; i++) keys.push(bytes(32));
  const blockhash = bytes(32);
  const instructions = [];
  for (let i = 0, n = u16(); i < n; i++) {
    const programIndex = byte();
    const accounts = [...bytes(u16())];
    instructions.push({ programIndex, accounts, data: bytes(u16()) });
  }
  let lookupTables = 0;
  if (version === 0) {
    lookupTables = u16();
    for (let i = 0; i < lookupTables; i++) {
      bytes(32);
      bytes(u16()); // writable indexes
      bytes(u16()); // read-only indexes
    }
  }
  if (off !== b.length) fail(`${b.length - off} bytes after the message`);
  const [required, roSigned, roUnsigned] = header;
  if (required === 0) fail('no signer');
  if (required > keys.length) fail(`${required} signers among ${keys.length} keys`);
  if (roSigned >= required) fail('no writable signer to pay the fee');
  if (roUnsigned > keys.length - required) fail('more read-only unsigned keys than unsigned keys');
  if (signatures.length !== required) fail(`${signatures.length} signatures for ${required} required`);
  return { signatures, messageBytes: b.subarray(messageStart), version, header, keys, blockhash, instructions, lookupTables };
}

/**
 * What does not hold of a transaction getTransaction answered ({slot, err,
 * raw}) for block b's anchor, or undefined when it all does: it succeeded,
 * in the anchor's slot, its first signature is the anchor's, the ledger
 * authority (base58) signed it, its signature over the message verifies, and
 * one Memo instruction with the authority among its accounts carries exactly
 * the block's memo.
 */
export async function anchorProblem(got, b, authority) {
  const a = b.anchor;
  if (got.err !== null) return `transaction ${a.signature} failed on the chain: ${JSON.stringify(got.err)}`;
  if (got.slot !== a.slot) return `transaction ${a.signature} is in slot ${got.slot}, the block says ${a.slot}`;
  let tx;
  try {
    tx = parseSolanaTransaction(got.raw);
  } catch (e) {
    return `transaction ${a.signature}: ${e.message}`;
  }
  if (base58Encode(tx.signatures[0]) !== a.signature) return `the cluster answered another transaction (${base58Encode(tx.signatures[0])}) for ${a.signature}`;
  const i = tx.keys.slice(0, tx.header[0]).findIndex((k) => base58Encode(k) === authority);
  if (i < 0) return `the ledger authority ${authority} did not sign transaction ${a.signature}`;
  if (!(await verifySignature(authority, tx.messageBytes, base58Encode(tx.signatures[i])))) {
    return `the ledger authority's signature in transaction ${a.signature} does not verify`;
  }
  const memo = utf8(anchorMemo(b));
  const same = (x, y) => x.length === y.length && x.every((v, k) => v === y[k]);
  const found = tx.instructions.some((ix) => ix.programIndex < tx.keys.length && base58Encode(tx.keys[ix.programIndex]) === MEMO_PROGRAM &&
    same(ix.data, memo) && ix.accounts.includes(i));
  return found ? undefined : `transaction ${a.signature} has no Memo instruction ${JSON.stringify(anchorMemo(b))} signed by the ledger authority`;
}

/**
 * Reads block b's anchor from the cluster through call(method, params) (a
 * JSON-RPC call to the endpoint rpc) and checks it: undefined when it holds,
 * else what does not; throws when the endpoint cannot be asked. A mainnet
 * block's anchor counts only on Solana mainnet, known by its genesis hash,
 * whatever cluster the anchor names: a memo on devnet (free, and reset from
 * time to time) or on a validator of the marketplace's own proves nothing to
 * a mainnet reader. That is asked first, and the transaction is then not read.
 */
export async function anchorOnChainProblem(call, rpc, b, authority) {
  if (b.environment === 'mainnet') {
    const genesis = await call('getGenesisHash', []);
    if (genesis !== MAINNET_GENESIS_HASH) {
      return `a mainnet block's anchor must be on Solana mainnet (genesis ${MAINNET_GENESIS_HASH}); the cluster at ${rpc} has genesis ${JSON.stringify(genesis)}`;
    }
  }
  const sig = b.anchor.signature;
  const r = await call('getTransaction', [sig, { encoding: 'base64', maxSupportedTransactionVersion: 0, commitment: 'finalized' }]);
  if (r == null) return `transaction ${sig} is not finalized on the cluster at ${rpc}`;
  if (r.meta == null || !('err' in r.meta)) throw new Error(`solana rpc ${rpc}: transaction ${sig} is served without its status (meta.err)`);
  if (!Array.isArray(r.transaction) || r.transaction[1] !== 'base64' || typeof r.transaction[0] !== 'string') {
    throw new Error(`solana rpc ${rpc}: transaction ${sig} is not served in base64`);
  }
  let raw;
  try {
    raw = Uint8Array.from(atob(r.transaction[0]), (c) => c.charCodeAt(0));
  } catch (e) {
    throw new Error(`solana rpc ${rpc}: transaction ${sig}: ${e.message}`);
  }
  return anchorProblem({ slot: r.slot, err: r.meta.err, raw }, b, authority);
}
