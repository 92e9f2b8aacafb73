// Client#verify: an execution checked as docs/verify.md says, steps 1 to 7,
// trusting only the keys the marketplace publishes. (Step 8, the anchor on
// Solana, is left to examples/verify-node/verify.mjs and the Go client.)

import { sha256, toHex } from './bytes.js';
import { cidOf } from './cid.js';
import { CrtxError } from './errors.js';
import { verifySignature } from './keys.js';
import { accountAddress, proofProblem } from './ledger.js';
import { toMicros } from './ledger-v1.js';
import { listingStatement } from './listing.js';
import { verifyReceipt } from './receipt.js';

/** Resolves to {executionId, ok, checks: [{name, ok, detail}]}; ok only when every check held. */
export async function verifyExecution(client, id) {
  const checks = [];
  const add = (name, ok, detail) => {
    checks.push({ name, ok: !!ok, detail });
    return !!ok;
  };
  const done = () => ({ executionId: id, ok: checks.length > 0 && checks.every((c) => c.ok), checks });

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
  try {
    const problem = await proofProblem(await sealedProof(client, rec.environment, tx.id), tx, wk.ledger_authority_public_key);
    add('sealed in a block', !problem, problem ?? `signed by the ledger authority ${wk.ledger_authority_public_key}`);
  } catch (e) {
    add('sealed in a block', false, e.message);
  }

  // 7. The receipt states what the record says.
  if (receipt) add('receipt', receiptAgrees(receipt, rec), `signed by the marketplace key ${wk.signing_public_key}, stating what the record says`);
  return done();
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
