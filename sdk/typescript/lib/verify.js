// Client#verify: an execution checked as docs/verify.md says, steps 1 to 8,
// trusting only the keys the marketplace publishes and, for the anchor, the
// Solana cluster.

import { fromHex, sha256, toHex } from './bytes.js';
import { cidOf } from './cid.js';
import { CrtxError } from './errors.js';
import { verifySignature } from './keys.js';
import { accountAddress, blockHash, proofProblem } from './ledger.js';
import { toMicros } from './ledger-v1.js';
import { listingStatement } from './listing.js';
import { verifyReceipt } from './receipt.js';
import { anchorOnChainProblem, defaultSolanaRPC } from './solana.js';

/** report.anchor when the hash chain leads from the execution's block to a block whose memo the ledger authority signed on Solana. */
export const ANCHORED = 'anchored';
/** report.anchor when no block from the execution's on is anchored yet, or the environment has no chain: no failure. */
export const NOT_ANCHORED_YET = 'not_anchored_yet';
/** report.anchor when a block is anchored on a cluster of no public endpoint (a local validator) and no solanaRPC was given: nothing found wrong, nothing read. */
export const ANCHOR_NOT_CHECKED = 'not_checked';

// Bounds the blocks read forward when the marketplace does not say (GET /v1/reserves) which block it anchored last.
const MAX_CHAIN_WALK = 10000;

/**
 * Resolves to {executionId, ok, checks: [{name, ok, detail}], anchor,
 * anchorDetail, anchoredBlock, anchoredBy}; ok only when every check held.
 * anchor is ANCHORED, NOT_ANCHORED_YET or ANCHOR_NOT_CHECKED (no
 * failures), or absent when the verification did not reach the execution's
 * block or its anchor failed.
 */
export async function verifyExecution(client, id, { solanaRPC } = {}) {
  const checks = [];
  let anchored = {};
  const add = (name, ok, detail) => {
    checks.push({ name, ok: !!ok, detail });
    return !!ok;
  };
  const done = () => ({ executionId: id, ok: checks.length > 0 && checks.every((c) => c.ok), checks, ...anchored });

  const wk = await client.wellKnown();
  const rec = await client.execution(id);
  const completed = rec.status === 'completed' || rec.status === 'disputed';
  if (!add('final', completed || rec.status === 'failed', `status ${rec.status}`)) return done();

  if (completed) {
    // 2. The result, and 3. the creator's signature of its hash.
    let bytes;
    if (rec.ipfs_url == null) {
      // A private execution's result is published nowhere: the caller holds it in the record.
      bytes = new TextEncoder().encode(rec.result ?? '');
    } else {
      try {
        bytes = await client.content(rec.ipfs_url);
      } catch (e) {
        add('published result', false, e.message);
        return done();
      }
    }
    const digest = await sha256(bytes);
    const hash = 'sha256:' + toHex(digest);
    add('result hash', hash === rec.result_hash, `sha256 of the ${bytes.length} bytes of the result is ${hash}; the record says ${rec.result_hash}`);
    if (rec.ipfs_url != null) {
      const cid = cidOf(digest);
      add('content id', new URL(rec.ipfs_url, client.url + '/').pathname.split('/').pop() === cid, `the content's CID is ${cid}`);
    }
    add('creator signature', typeof rec.signature === 'string' && await verifySignature(rec.signing_public_key, rec.result_hash, rec.signature),
      `signature over the result hash by the listing's key ${rec.signing_public_key}`);
  }

  // 4. The key is the creator's.
  let listing;
  try {
    listing = await listingKey(client, rec, wk);
    add('listing key', true, `the creator's wallet ${listing.data.creator} and the key signed the listing transaction ${listing.id}`);
  } catch (e) {
    add('listing key', false, e.message);
  }

  // 5. The ledger record.
  if (!rec.ledger_transaction) {
    add('ledger record', false, 'the record names no ledger transaction');
    return done();
  }
  const tx = await client.transaction(rec.environment, rec.ledger_transaction);
  const receiptText = await client.receipt(id);
  let receipt;
  try {
    receipt = await verifyReceipt(receiptText, wk.signing_public_key);
  } catch (e) {
    add('receipt', false, e.message);
  }
  add('ledger record', await ledgerRecordAgrees(tx, rec, listing, receipt?.wallet),
    `the ${tx.kind} ${tx.id} ${completed ? 'commits the result hash, the signature and the key, and pays the creator and the treasury' : 'returns the cost to the caller'}`);

  // 6. Inclusion in a block signed by the ledger authority.
  let block;
  try {
    const proof = await sealedProof(client, rec.environment, tx.id);
    let problem = await proofProblem(proof, tx, wk.ledger_authority_public_key);
    if (!problem && proof.block.environment !== rec.environment) problem = `the proof is of a block of ${proof.block.environment}, not of ${rec.environment}`;
    if (add('sealed in a block', !problem, problem ?? `in block ${proof.block.height}, signed by the ledger authority ${wk.ledger_authority_public_key}`)) block = proof.block;
  } catch (e) {
    add('sealed in a block', false, e.message);
  }

  // 8. The hash chain forward to the first anchored block, and its anchor on Solana.
  if (block) {
    const r = await verifyAnchor(client, block, wk.ledger_authority_public_key, { solanaRPC });
    checks.push(...r.checks);
    if (r.anchor) anchored = { anchor: r.anchor, anchorDetail: r.anchorDetail, ...(r.anchoredBy && { anchoredBlock: r.anchoredBlock, anchoredBy: r.anchoredBy }) };
  }

  // 7. The receipt states what the record says.
  if (receipt) add('receipt', receiptAgrees(receipt, rec), `signed by the marketplace key ${wk.signing_public_key}, stating what the record says`);
  return done();
}

/**
 * Step 8 from block (the execution's, already checked): follows the hash
 * chain forward to the first block with an anchor, checking each block's
 * prev_hash, hash and authority signature, then reads that anchor's
 * transaction from Solana (at solanaRPC, else the public endpoint of the
 * anchor's cluster). Resolves to {ok, checks ("hash chain", "anchor"),
 * anchor, anchorDetail, anchoredBlock, anchoredBy}. No anchored block from
 * block on (yet), or no chain for its environment, is NOT_ANCHORED_YET, and
 * an anchor on a cluster it has no endpoint for is ANCHOR_NOT_CHECKED: not
 * failures. GET /v1/reserves' anchored_block only bounds the walk: a block
 * is called anchored only once its chain and its memo are checked.
 */
export async function verifyAnchor(client, block, authority, { solanaRPC } = {}) {
  const checks = [];
  const add = (name, ok, detail) => checks.push({ name, ok: !!ok, detail });
  const out = (rest = {}) => ({ ok: checks.every((c) => c.ok), checks, ...rest });
  const notYet = (anchorDetail) => out({ anchor: NOT_ANCHORED_YET, anchorDetail });
  const env = block.environment, start = block.height;
  let last = start + MAX_CHAIN_WALK;
  let reserves;
  try {
    reserves = (await client.reserves())?.reserves;
  } catch { /* the walk goes on to the newest block */ }
  if (Array.isArray(reserves)) {
    last = reserves.find((r) => r.environment === env)?.anchored_block ?? 0;
    if (last === 0) return notYet(`the ${env} ledger is not anchored on Solana (the marketplace reports no chain or no anchor for it)`);
    if (last < start) return notYet(`no block of ${env} from ${start} on is anchored on Solana yet`);
  }
  let prev;
  for (let h = start; h <= last; h++) {
    let b;
    try {
      b = (await client.block(env, h))?.block ?? {};
    } catch (e) {
      if (e instanceof CrtxError && e.code === 'block_not_found') return notYet(`no block of ${env} from ${start} to ${h - 1} is anchored on Solana yet`);
      add('hash chain', false, `block ${h}: ${e.message}`);
      return out();
    }
    const bad = await chainProblem(b, env, h, h === start ? block : undefined, prev, authority);
    if (bad) {
      add('hash chain', false, bad);
      return out();
    }
    prev = b;
    if (!b.anchor) continue;
    add('hash chain', true, h === start ? `block ${h} is anchored itself` : `blocks ${start} to ${h} each name the one before and are signed by the ledger authority`);
    const a = b.anchor;
    const rpc = solanaRPC || defaultSolanaRPC(a.cluster);
    if (!rpc) {
      return out({ anchor: ANCHOR_NOT_CHECKED, anchoredBlock: h, anchoredBy: a,
        anchorDetail: `block ${h} is anchored by Solana transaction ${a.signature} on a ${JSON.stringify(a.cluster)} cluster, not read: give its Solana RPC URL (solanaRPC)` });
    }
    let problem;
    try {
      problem = await anchorOnChainProblem((method, params) => client.solanaCall(rpc, method, params), rpc, b, authority);
    } catch (e) {
      problem = e.message;
    }
    if (problem) {
      add('anchor', false, `block ${h}: ${problem}`);
      return out();
    }
    add('anchor', true, `block ${h} is named by the memo of Solana transaction ${a.signature} (slot ${a.slot}, ${a.cluster}), signed by the ledger authority`);
    return out({ anchor: ANCHORED, anchorDetail: `through block ${h}, Solana transaction ${a.signature}`, anchoredBlock: h, anchoredBy: a });
  }
  if (last === start + MAX_CHAIN_WALK) return notYet(`no block of ${env} from ${start} to ${last} is anchored on Solana`);
  add('hash chain', false, `the marketplace reports block ${last} of ${env} anchored, but no block from ${start} to it serves an anchor`);
  return out();
}

// What is wrong with block b, served as block h of env: the execution's block first (same hash),
// then each names the block before it; each hashes to its hash and is signed by the ledger authority.
async function chainProblem(b, env, h, first, prev, authority) {
  if (b.environment !== env || b.height !== h) return `GET block ${h} of ${env} served block ${b.height} of ${b.environment}`;
  if (first && b.hash !== first.hash) return `block ${h} is served with hash ${b.hash}, its proof with ${first.hash}`;
  if (prev && b.prev_hash !== prev.hash) return `block ${h}'s prev_hash ${b.prev_hash} is not block ${h - 1}'s hash ${prev.hash}`;
  let computed;
  try {
    computed = await blockHash(b);
  } catch (e) {
    return `block ${h}: ${e.message}`;
  }
  if (computed !== b.hash) return `block ${h} does not hash to its hash`;
  if (!(await verifySignature(authority, fromHex(computed), b.signature ?? ''))) return `block ${h}'s signature does not verify against the ledger authority key`;
  return undefined;
}

async function listingKey(client, rec, wk) {
  if (!rec.listing_transaction) throw new Error('the record names no listing transaction');
  const t = await client.transaction('mainnet', rec.listing_transaction);
  const d = t.data ?? {};
  if ((t.kind !== 'AgentListed' && t.kind !== 'ListingUpdated') || d.agent_id !== rec.agent_id || d.signing_public_key !== rec.signing_public_key) {
    throw new Error(`listing transaction ${t.id} (${t.kind}) registers ${d.signing_public_key} for ${d.agent_id}, not the record's key`);
  }
  // Every statement written since it was required names the marketplace it was signed for.
  if (d.marketplace !== undefined && d.marketplace !== new URL(wk.public_url).host) {
    throw new Error(`listing transaction ${t.id} was signed for the marketplace ${d.marketplace}, not this one (${wk.public_url})`);
  }
  const stmt = listingStatement(t.kind, d);
  if (!(await verifySignature(d.creator, stmt, d.creator_signature ?? ''))) throw new Error(`listing transaction ${t.id} is not signed by its creator ${d.creator}`);
  if (d.key_signature !== undefined && !(await verifySignature(d.signing_public_key, stmt, d.key_signature))) {
    throw new Error(`listing transaction ${t.id} is not signed by the key ${d.signing_public_key} it registers`);
  }
  // An AgentListed's statement leaves the agent out: the authority's block binds the two.
  const problem = await proofProblem(await sealedProof(client, 'mainnet', t.id), t, wk.ledger_authority_public_key);
  if (problem) throw new Error(problem);
  return t;
}

async function ledgerRecordAgrees(tx, rec, listing, wallet) {
  const d = tx.data ?? {};
  const escrow = await accountAddress('escrow', rec.execution_id);
  const want = [];
  if (rec.status === 'failed') {
    if (tx.kind !== 'EscrowRefunded' || d.execution_id !== rec.execution_id || !wallet) return false;
    want.push([escrow, await accountAddress('wallet', wallet), rec.cost_usdc]);
  } else {
    if (tx.kind !== 'ExecutionRecord' || d.execution_id !== rec.execution_id || d.result_hash !== rec.result_hash ||
      d.signature !== rec.signature || d.signing_public_key !== rec.signing_public_key || d.listing_tx !== rec.listing_transaction) return false;
    if (!listing) return false;
    want.push([escrow, await accountAddress('wallet', listing.data.creator), rec.creator_amount_usdc]);
    want.push([escrow, await accountAddress('treasury', 'platform'), rec.platform_amount_usdc]);
  }
  // A posting of 0 is left out.
  const norm = (ps) => ps.filter((p) => toMicros(p[2]) !== 0).map((p) => `${p[0]}>${p[1]}:${toMicros(p[2])}`).sort().join(',');
  return norm(want) === norm((tx.postings ?? []).map((p) => [p.from, p.to, p.amount_usdc]));
}

// A transaction is sealed within seconds of being written; until then its proof is 409 not_sealed.
async function sealedProof(client, environment, id) {
  for (const until = Date.now() + 60_000; ;) {
    try {
      return await client.proof(environment, id);
    } catch (e) {
      if (!(e instanceof CrtxError && e.code === 'not_sealed') || Date.now() > until) throw e;
      await new Promise((r) => setTimeout(r, 200));
    }
  }
}

function receiptAgrees(rc, rec) {
  const same = (a, b) => (a ?? null) === (b ?? null);
  const amounts = ['cost_usdc', 'creator_amount_usdc', 'platform_amount_usdc', 'refunded_usdc'];
  return rc.version === 1 && rc.execution_id === rec.execution_id && rc.environment === rec.environment && rc.agent_id === rec.agent_id &&
    rc.status === (rec.status === 'disputed' ? 'completed' : rec.status) && amounts.every((a) => toMicros(rc[a]) === toMicros(rec[a])) &&
    same(rc.result_hash, rec.result_hash) && same(rc.creator_signature, rec.signature) && rc.signing_public_key === rec.signing_public_key &&
    same(rc.listing_transaction, rec.listing_transaction) && same(rc.ledger_transaction, rec.ledger_transaction);
}
