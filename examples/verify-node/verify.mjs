#!/usr/bin/env node
// An independent verifier of one crtx execution, written from docs/verify.md and docs/ledger.md
// ("Hashes") alone. Node 20, no dependencies: fetch, node:crypto (SHA-256, Ed25519), and our own
// base58, base32 and RFC 8785 canonicalization.
//
//   node verify.mjs --base URL --key API_KEY --execution ID
//                   [--authority BASE58] [--marketplace BASE58] [--wait SECONDS] [--rpc URL]
//   node verify.mjs --self-test
//
// One line per check ("ok   name: detail" or "FAIL name: detail"), then "verified" or
// "NOT verified". A block with no anchored block after it yet prints "-    anchor: not anchored
// yet: …", which is no failure. Exit 0 when every check passed, 1 when one failed, 2 on usage or
// network errors.

import { createHash, createPrivateKey, createPublicKey, generateKeyPairSync, sign as cryptoSign, verify as cryptoVerify } from 'node:crypto';
import { readFileSync, existsSync, realpathSync } from 'node:fs';
import { createServer } from 'node:http';
import { fileURLToPath } from 'node:url';
import { dirname, join } from 'node:path';

// ---------------------------------------------------------------------------------------------
// Encodings

const B58 = '123456789ABCDEFGHJKLMNPQRSTUVWXYZabcdefghijkmnopqrstuvwxyz';

export function base58Encode(bytes) {
  bytes = Uint8Array.from(bytes);
  let zeros = 0;
  while (zeros < bytes.length && bytes[zeros] === 0) zeros++;
  let n = 0n;
  for (const b of bytes) n = (n << 8n) | BigInt(b);
  let out = '';
  while (n > 0n) {
    out = B58[Number(n % 58n)] + out;
    n /= 58n;
  }
  return '1'.repeat(zeros) + out;
}

export function base58Decode(s) {
  if (typeof s !== 'string') throw new Error('base58: not a string');
  let zeros = 0;
  while (zeros < s.length && s[zeros] === '1') zeros++;
  let n = 0n;
  for (const c of s) {
    const i = B58.indexOf(c);
    if (i < 0) throw new Error(`base58: invalid character ${JSON.stringify(c)}`);
    n = n * 58n + BigInt(i);
  }
  const body = [];
  while (n > 0n) {
    body.unshift(Number(n & 0xffn));
    n >>= 8n;
  }
  return Uint8Array.from([...new Array(zeros).fill(0), ...body]);
}

// RFC 4648 base32, lowercase, no padding.
export function base32Encode(bytes) {
  const A = 'abcdefghijklmnopqrstuvwxyz234567';
  let out = '', bits = 0, value = 0;
  for (const b of bytes) {
    value = (value << 8) | b;
    bits += 8;
    while (bits >= 5) {
      out += A[(value >>> (bits - 5)) & 31];
      bits -= 5;
    }
    value &= (1 << bits) - 1;
  }
  if (bits > 0) out += A[(value << (5 - bits)) & 31];
  return out;
}

const hex = (b) => Buffer.from(b).toString('hex');
const sha256 = (...parts) => {
  const h = createHash('sha256');
  for (const p of parts) h.update(typeof p === 'string' ? Buffer.from(p, 'utf8') : p);
  return new Uint8Array(h.digest());
};
const isHex64 = (s) => typeof s === 'string' && /^[0-9a-f]{64}$/.test(s);

// RFC 8785 (JCS). Member names sorted by UTF-16 code units (JavaScript's default string order);
// strings and numbers as ECMAScript's JSON.stringify writes them, which is what JCS specifies.
export function canonicalize(v) {
  if (v === null) return 'null';
  switch (typeof v) {
    case 'boolean':
      return v ? 'true' : 'false';
    case 'number':
      if (!Number.isFinite(v)) throw new Error('canonicalize: non-finite number');
      return Object.is(v, -0) ? '0' : JSON.stringify(v);
    case 'string':
      if (/[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/.test(v))
        throw new Error('canonicalize: lone surrogate in string');
      return JSON.stringify(v);
    case 'object':
      if (Array.isArray(v)) return '[' + v.map(canonicalize).join(',') + ']';
      return '{' + Object.keys(v).filter((k) => v[k] !== undefined).sort()
        .map((k) => JSON.stringify(k) + ':' + canonicalize(v[k])).join(',') + '}';
    default:
      throw new Error(`canonicalize: cannot encode ${typeof v}`);
  }
}

function without(obj, ...names) {
  const o = { ...obj };
  for (const n of names) delete o[n];
  return o;
}

// ---- version 1 (docs/ledger.md, end of "Hashes"): Go encoding/json, fixed member order -------

function goString(s) {
  let out = '"';
  for (const ch of s) {
    const c = ch.codePointAt(0);
    if (ch === '"') out += '\\"';
    else if (ch === '\\') out += '\\\\';
    else if (ch === '\n') out += '\\n';
    else if (ch === '\r') out += '\\r';
    else if (ch === '\t') out += '\\t';
    else if (c < 0x20 || ch === '<' || ch === '>' || ch === '&' || c === 0x2028 || c === 0x2029)
      out += '\\u' + c.toString(16).padStart(4, '0');
    else out += ch;
  }
  return out + '"';
}

function rfc3339ToMicros(s) {
  const m = /^(\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d)(?:\.(\d{1,9}))?Z$/.exec(String(s));
  if (!m) throw new Error(`not an RFC 3339 UTC time: ${s}`);
  const secs = Date.parse(m[1] + 'Z') / 1000;
  return BigInt(secs) * 1000000n + BigInt((m[2] || '').padEnd(6, '0').slice(0, 6));
}

function toMicros(amount) {
  if (typeof amount === 'number') return Math.round(amount * 1e6);
  if (typeof amount === 'string' && /^-?\d+(\.\d+)?$/.test(amount)) return Math.round(Number(amount) * 1e6);
  return NaN;
}

function canonicalV1Transaction(tx) {
  const dataKeys = Object.keys(tx.data || {}).sort((a, b) => Buffer.compare(Buffer.from(a), Buffer.from(b)));
  const data = '{' + dataKeys.map((k) => goString(k) + ':' + goString(tx.data[k])).join(',') + '}';
  const postings = '[' + (tx.postings || []).map((p) =>
    `{"from":${goString(p.from)},"to":${goString(p.to)},"amount":${toMicros(p.amount_usdc)}}`).join(',') + ']';
  const accounts = '[' + (tx.accounts || []).map(goString).join(',') + ']';
  return `{"id":${goString(tx.id)},"environment":${goString(tx.environment)},"kind":${goString(tx.kind)},` +
    `"data":${data},"postings":${postings},"accounts":${accounts},"created_at_us":${rfc3339ToMicros(tx.created_at)}}`;
}

function canonicalV1Block(b) {
  return `{"environment":${goString(b.environment)},"height":${b.height},"prev_hash":${goString(b.prev_hash)},` +
    `"merkle_root":${goString(b.merkle_root)},"tx_count":${b.tx_count},"sealed_at_us":${rfc3339ToMicros(b.sealed_at)}}`;
}

// ---- the hashed objects ---------------------------------------------------------------------

export function transactionCanonical(tx) {
  if (tx.version === 2) return canonicalize(without(tx, 'seq', 'block_height', 'hash'));
  if (tx.version === 1) return canonicalV1Transaction(tx);
  throw new Error(`unknown transaction version ${JSON.stringify(tx.version)}`);
}
export const transactionHash = (tx) => hex(sha256(transactionCanonical(tx)));

export function blockCanonical(b) {
  // anchor names the Solana transaction written after the block was signed: not part of its hash.
  if (b.version === 2) return canonicalize(without(b, 'hash', 'signature', 'anchor'));
  if (b.version === 1) return canonicalV1Block(b);
  throw new Error(`unknown block version ${JSON.stringify(b.version)}`);
}
export const blockHash = (b) => hex(sha256(blockCanonical(b)));

export const merkleLeaf = (txHashHex) => sha256(Uint8Array.of(0), Buffer.from(txHashHex, 'hex'));
const merkleNode = (l, r) => sha256(Uint8Array.of(1), l, r);

export function merkleRoot(txHashes) {
  if (txHashes.length === 0) throw new Error('no leaves');
  let level = txHashes.map(merkleLeaf);
  while (level.length > 1) {
    const next = [];
    for (let i = 0; i + 1 < level.length; i += 2) next.push(merkleNode(level[i], level[i + 1]));
    if (level.length % 2 === 1) next.push(level[level.length - 1]); // odd node carried up
    level = next;
  }
  return hex(level[0]);
}

export function ed25519Verify(publicKeyB58, message, signatureB58) {
  const pub = base58Decode(publicKeyB58);
  if (pub.length !== 32) throw new Error(`public key is ${pub.length} bytes, not 32`);
  const sig = base58Decode(signatureB58);
  if (sig.length !== 64) throw new Error(`signature is ${sig.length} bytes, not 64`);
  const key = createPublicKey({
    key: { kty: 'OKP', crv: 'Ed25519', x: Buffer.from(pub).toString('base64url') },
    format: 'jwk',
  });
  return cryptoVerify(null, typeof message === 'string' ? Buffer.from(message, 'utf8') : message, key, sig);
}

export const accountAddress = (kind, id) => base58Encode(sha256(`crtx:${kind}:${id}`));
export const cidOf = (digest) => 'b' + base32Encode(Uint8Array.from([0x01, 0x55, 0x12, 0x20, ...digest]));
const stripEd = (s) => (typeof s === 'string' && s.startsWith('ed25519:') ? s.slice(8) : s);

// ---------------------------------------------------------------------------------------------
// Output

const results = [];
function report(ok, name, detail) {
  results.push(ok);
  console.log(`${ok ? 'ok  ' : 'FAIL'} ${name}: ${detail}`);
  return ok;
}
function check(name, cond, okDetail, failDetail) {
  return report(!!cond, name, cond ? okDetail : failDetail ?? okDetail);
}
// Runs fn; an exception (a malformed key, a bad signature encoding) is that check's failure.
function attempt(name, fn) {
  try {
    return fn();
  } catch (e) {
    return report(false, name, e.message);
  }
}
function finish(code) {
  const failed = results.some((r) => !r) || results.length === 0;
  console.log(failed ? 'NOT verified' : 'verified');
  process.exit(code ?? (failed ? 1 : 0));
}
const show = (v) => (typeof v === 'string' ? v : JSON.stringify(v));
const same = (name, got, want, what = '') =>
  check(name, got === want, `${what}${show(got)}`, `${what}got ${show(got)}, want ${show(want)}`);
const sameAmount = (name, got, want) =>
  check(name, toMicros(got) === toMicros(want) && !Number.isNaN(toMicros(got)), `${show(got)} USDC`,
    `got ${show(got)}, want ${show(want)}`);

// ---------------------------------------------------------------------------------------------
// HTTP

class NetworkError extends Error {}
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

async function get(url, headers = {}) {
  let res;
  try {
    res = await fetch(url, { headers, redirect: 'follow' });
  } catch (e) {
    throw new NetworkError(`GET ${url}: ${e.cause?.message || e.message}`);
  }
  let bytes;
  try {
    bytes = new Uint8Array(await res.arrayBuffer());
  } catch (e) {
    throw new NetworkError(`GET ${url}: reading the body: ${e.cause?.message || e.message}`);
  }
  let json;
  try {
    json = JSON.parse(Buffer.from(bytes).toString('utf8'));
  } catch {
    json = undefined;
  }
  const code = json?.error?.code ?? json?.code;
  const message = json?.error?.message ?? json?.message;
  return { status: res.status, ok: res.ok, bytes, json, code, message };
}
const describe = (r) => `HTTP ${r.status}${r.code ? ' ' + r.code : ''}${r.message ? ': ' + r.message : ''}`;

// Asks again while the answer is `status` with `code`, for up to waitMs.
async function getWaiting(url, headers, status, code, waitMs) {
  const start = Date.now(), until = start + waitMs;
  for (;;) {
    const r = await get(url, headers);
    r.waited = Date.now() - start;
    if (!(r.status === status && r.code === code) || Date.now() >= until) return r;
    await sleep(Math.min(500, Math.max(0, until - Date.now())));
  }
}

// ---------------------------------------------------------------------------------------------
// The verification

async function verifyExecution(opts) {
  const base = opts.base.replace(/\/+$/, '');
  const auth = { Authorization: `Bearer ${opts.key}` };
  const waitMs = opts.wait * 1000;
  const id = opts.execution;
  const enc = encodeURIComponent;

  // 0. The marketplace's keys.
  const wk = await get(`${base}/.well-known/crtx.json`);
  if (!(wk.ok && wk.json)) return report(false, 'well-known keys', describe(wk));
  const authority = wk.json.ledger_authority_public_key;
  const marketKey = wk.json.signing_public_key;
  if (opts.authority) same('ledger authority key pinned', authority, opts.authority);
  else report(true, 'ledger authority key', `${authority} (from /.well-known, not pinned)`);
  if (opts.marketplace) same('marketplace signing key pinned', marketKey, opts.marketplace);
  else report(true, 'marketplace signing key', `${marketKey} (from /.well-known, not pinned)`);
  const authorityKey = opts.authority || authority;
  const marketplaceKey = opts.marketplace || marketKey;

  // 1. The record (waiting for it to be final).
  let recRes;
  const recUntil = Date.now() + waitMs;
  for (;;) {
    recRes = await get(`${base}/v1/executions/${enc(id)}`, auth);
    const st = recRes.json?.status;
    if (!recRes.ok || !(st === 'pending' || st === 'running') || Date.now() >= recUntil) break;
    await sleep(500);
  }
  if (!(recRes.ok && recRes.json)) return report(false, 'execution record', describe(recRes));
  const rec = recRes.json;
  const final = ['completed', 'failed', 'disputed'].includes(rec.status);
  const recId = rec.execution_id ?? rec.id;
  if (!check('execution record', final && recId === id,
    `${id} ${rec.status} in ${rec.environment}, agent ${rec.agent_id}` + (rec.dispute ? ` (dispute ${rec.dispute.dispute_id} ` +
      `${rec.dispute.status}, slashed ${rec.dispute.slashed_usdc ?? 0}, refunded ${rec.dispute.refunded_usdc ?? 0} USDC: ` +
      'as the record says, not checked here; docs/verify.md has no step for disputes)' : ''),
    `status ${show(rec.status)}, execution_id ${show(recId)}: not a final record of ${id}`)) return;
  const env = rec.environment;
  const completed = rec.status !== 'failed';

  // The receipt, fetched now (its wallet names the refund's destination); checked in step 7.
  const rcpRes = await getWaiting(`${base}/v1/executions/${enc(id)}/receipt`, auth, 409, 'not_final', waitMs);
  const receipt = rcpRes.ok ? rcpRes.json : undefined;
  const wallet = rec.wallet ?? receipt?.wallet;

  let listing;
  if (completed) {
    // 2. The result.
    let digest;
    if (rec.ipfs_url === null && typeof rec.result === 'string') {
      // A private execution: its result is published nowhere, and the
      // record (which only its caller reads) holds it.
      digest = sha256(rec.result);
      same('result hash (private result)', 'sha256:' + hex(digest), rec.result_hash);
    } else if (typeof rec.ipfs_url !== 'string') report(false, 'result bytes', `ipfs_url is ${show(rec.ipfs_url)}`);
    else {
      const url = new URL(rec.ipfs_url, base + '/').toString();
      const r = await get(url); // no credential: the result is public, possibly on another host
      if (check('result bytes', r.ok, `GET ${url}: ${r.bytes.length} bytes`, describe(r))) {
        digest = sha256(r.bytes);
        same('result hash', 'sha256:' + hex(digest), rec.result_hash);
        const cid = new URL(url).pathname.split('/').filter(Boolean).pop();
        same('result CID', cid, cidOf(digest));
      }
    }

    // 3. The creator's signature over the result_hash string.
    attempt('creator signature over result_hash', () => check('creator signature over result_hash',
      ed25519Verify(rec.signing_public_key, rec.result_hash, stripEd(rec.signature)),
      `by ${rec.signing_public_key}`, `does not verify with ${rec.signing_public_key}`));

    // 4. The key is the creator's.
    listing = await checkListing(base, rec, authorityKey, waitMs, hostOf(wk.json.public_url));
  } else {
    // A failed execution: no result, nothing signed by the creator; the money went back.
    sameAmount('refunded_usdc = cost_usdc', rec.refunded_usdc, rec.cost_usdc);
    sameAmount('creator_amount_usdc = 0', rec.creator_amount_usdc, 0);
    sameAmount('platform_amount_usdc = 0', rec.platform_amount_usdc, 0);
    check('no result', rec.result_hash == null && rec.result == null && rec.ipfs_url == null,
      'result, result_hash and ipfs_url are null', `result_hash ${show(rec.result_hash)}, ipfs_url ${show(rec.ipfs_url)}`);
    // The listing the execution was dispatched under, when the record names it (step 4).
    if (rec.listing_transaction != null) listing = await checkListing(base, rec, authorityKey, waitMs, hostOf(wk.json.public_url));
  }

  // 5. The ledger record.
  let ledgerTx;
  if (typeof rec.ledger_transaction !== 'string' || !rec.ledger_transaction) {
    report(false, 'ledger transaction', `ledger_transaction is ${show(rec.ledger_transaction)}`);
  } else {
    const r = await get(`${base}/v1/ledger/${enc(env)}/transactions/${enc(rec.ledger_transaction)}`);
    if (check('ledger transaction', r.ok && r.json, `${env} ${rec.ledger_transaction}`, describe(r))) {
      ledgerTx = r.json;
      const tx = ledgerTx, d = tx.data || {};
      same('ledger transaction id', tx.id, rec.ledger_transaction);
      same('ledger transaction environment', tx.environment, env);
      const escrow = accountAddress('escrow', id);
      if (completed) {
        same('ledger record kind', tx.kind, 'ExecutionRecord');
        same('ledger record execution_id', d.execution_id, id);
        same('ledger record result_hash', d.result_hash, rec.result_hash);
        same('ledger record signature', d.signature, rec.signature);
        same('ledger record signing_public_key', d.signing_public_key, rec.signing_public_key);
        same('ledger record listing_tx', d.listing_tx, rec.listing_transaction);
        same('ledger record agent_id', d.agent_id, rec.agent_id);
        if (rec.ipfs_url === null) check('ledger record names no CID (private)', d.cid === undefined, 'no cid', `cid ${show(d.cid)}`);
        check('cost = creator + platform',
          toMicros(rec.cost_usdc) === toMicros(rec.creator_amount_usdc) + toMicros(rec.platform_amount_usdc),
          `${rec.cost_usdc} = ${rec.creator_amount_usdc} + ${rec.platform_amount_usdc}`,
          `${rec.cost_usdc} != ${rec.creator_amount_usdc} + ${rec.platform_amount_usdc}`);
        const want = [];
        if (listing?.data?.creator && toMicros(rec.creator_amount_usdc) > 0)
          want.push({ from: escrow, to: accountAddress('wallet', listing.data.creator), amount: rec.creator_amount_usdc, what: 'creator' });
        if (toMicros(rec.platform_amount_usdc) > 0)
          want.push({ from: escrow, to: accountAddress('treasury', 'platform'), amount: rec.platform_amount_usdc, what: 'treasury' });
        if (!listing?.data?.creator) report(false, 'ledger record postings', "the creator's wallet is unknown (listing not read)");
        else checkPostings('ledger record postings', tx.postings, want);
      } else {
        same('ledger record kind', tx.kind, 'EscrowRefunded');
        same('ledger record execution_id', d.execution_id, id);
        if (!wallet) report(false, 'ledger record postings', "the caller's wallet is unknown (neither the record nor the receipt names it)");
        else checkPostings('ledger record postings', tx.postings,
          [{ from: escrow, to: accountAddress('wallet', wallet), amount: rec.cost_usdc, what: 'refund' }]);
      }
      // 6. Inclusion in a signed block, and the chain below it.
      const sealed = await checkTransactionHashAndProof('', base, env, tx, authorityKey, waitMs, true);
      // 8. The anchor: the hash chain forward to the first block anchored on Solana.
      if (sealed) await checkAnchorChain(base, env, sealed, authorityKey, opts.rpc);
    }
  }

  // 7. The receipt.
  if (!check('receipt', rcpRes.ok && receipt, 'GET /v1/executions/{execution_id}/receipt', describe(rcpRes))) return;
  // JSON.parse keeps the last of a repeated name: read the names as sent.
  const names = memberNames(Buffer.from(rcpRes.bytes).toString('utf8'));
  const odd = names.filter((n, k) => !RECEIPT_MEMBERS.includes(n) ||
    names.findIndex((m) => m.toLowerCase() === n.toLowerCase()) !== k);
  check('receipt members', odd.length === 0, "each of the receipt's members once, no other",
    `unknown or repeated: ${odd.join(', ')}`);
  attempt('receipt signature', () => check('receipt signature',
    ed25519Verify(marketplaceKey, canonicalize(without(receipt, 'signature')), stripEd(receipt.signature)),
    `by the marketplace key ${marketplaceKey}`, `does not verify with the marketplace key ${marketplaceKey}`));
  const mism = [];
  const agree = (field, got, want, amount = false) => {
    const eq = amount ? toMicros(got) === toMicros(want) : (got ?? null) === (want ?? null);
    if (!eq) mism.push(`${field}: receipt ${show(got)}, want ${show(want)}`);
  };
  agree('version', receipt.version, 1);
  agree('execution_id', receipt.execution_id, id);
  agree('environment', receipt.environment, env);
  if (rec.wallet !== undefined) agree('wallet', receipt.wallet, rec.wallet);
  agree('agent_id', receipt.agent_id, rec.agent_id);
  // A disputed execution keeps the receipt it had when it completed; the dispute has its own ruling.
  agree('status', receipt.status, rec.status === 'disputed' ? 'completed' : rec.status);
  for (const a of ['cost_usdc', 'creator_amount_usdc', 'platform_amount_usdc', 'refunded_usdc'])
    agree(a, receipt[a], rec[a], true);
  agree('result_hash', receipt.result_hash, rec.result_hash);
  agree('creator_signature', receipt.creator_signature, rec.signature);
  agree('signing_public_key', receipt.signing_public_key, rec.signing_public_key);
  agree('listing_transaction', receipt.listing_transaction, rec.listing_transaction);
  agree('ledger_transaction', receipt.ledger_transaction, rec.ledger_transaction);
  agree('initiated_at', receipt.initiated_at, rec.initiated_at);
  agree('completed_at', receipt.completed_at, rec.completed_at);
  if (ledgerTx) {
    agree('ledger_transaction (ledger id)', receipt.ledger_transaction, ledgerTx.id);
    if (completed) {
      agree('result_hash (ledger)', receipt.result_hash, ledgerTx.data?.result_hash);
      agree('creator_signature (ledger)', receipt.creator_signature, ledgerTx.data?.signature);
      agree('signing_public_key (ledger)', receipt.signing_public_key, ledgerTx.data?.signing_public_key);
    }
    const total = (ledgerTx.postings || []).reduce((s, p) => s + toMicros(p.amount_usdc), 0);
    if (toMicros(receipt.cost_usdc) !== total)
      mism.push(`cost_usdc: receipt ${show(receipt.cost_usdc)}, the ledger postings sum to ${total / 1e6}`);
  }
  check('receipt fields agree', mism.length === 0,
    `issuer ${show(receipt.issuer)}; ids, status, amounts, hash, signature, key and times match the record and the ledger`,
    mism.join('; '));
}

function checkPostings(name, postings, want) {
  const got = (postings || []).map((p) => `${p.from}->${p.to}:${toMicros(p.amount_usdc)}`).sort();
  const exp = want.map((p) => `${p.from}->${p.to}:${toMicros(p.amount)}`).sort();
  check(name, JSON.stringify(got) === JSON.stringify(exp),
    want.map((p) => `${p.amount} ${p.what}`).join(', ') + ' from the escrow',
    `got ${JSON.stringify(postings)}, want ${JSON.stringify(want)}`);
}

// hostOf is the host of a URL, as the listing statement names its marketplace; undefined if it is none.
function hostOf(u) {
  try { return new URL(u).host; } catch { return undefined; }
}

// Step 4: the listing transaction, its creator's signature, and (step 6 for it) its inclusion.
async function checkListing(base, rec, authorityKey, waitMs, marketplace) {
  const lt = rec.listing_transaction;
  if (typeof lt !== 'string' || !lt) {
    report(false, 'listing transaction', `listing_transaction is ${show(lt)}`);
    return undefined;
  }
  const r = await get(`${base}/v1/ledger/mainnet/transactions/${encodeURIComponent(lt)}`);
  if (!check('listing transaction', r.ok && r.json, `mainnet ${lt}`, describe(r))) return undefined;
  const tx = r.json, d = tx.data || {};
  check('listing kind', tx.kind === 'AgentListed' || tx.kind === 'ListingUpdated', tx.kind,
    `${show(tx.kind)}, want AgentListed or ListingUpdated`);
  same('listing agent_id', d.agent_id, rec.agent_id);
  same('listing signing_public_key', d.signing_public_key, rec.signing_public_key);
  let statement;
  if (tx.kind === 'AgentListed')
    statement = { creator: d.creator, kind: 'AgentListed', name: d.name,
      price_per_call_usdc: d.price_per_call_usdc, signing_public_key: d.signing_public_key };
  else statement = { agent_id: d.agent_id, creator: d.creator, kind: 'ListingUpdated', signing_public_key: d.signing_public_key };
  // The marketplace's one-time nonce, the marketplace's host and, for a change of key, the key
  // transaction it replaces: each in every listing written since it was required.
  if (d.listing_nonce !== undefined) statement.listing_nonce = d.listing_nonce;
  if (d.marketplace !== undefined) {
    statement.marketplace = d.marketplace;
    same('listing signed for this marketplace', d.marketplace, marketplace);
  }
  if (tx.kind === 'ListingUpdated' && d.replaces !== undefined) statement.replaces = d.replaces;
  const missing = Object.entries(statement).filter(([, v]) => typeof v !== 'string').map(([k]) => k);
  if (missing.length || typeof d.creator_signature !== 'string') {
    report(false, "creator's signature over the listing statement",
      `data lacks ${[...missing, ...(typeof d.creator_signature === 'string' ? [] : ['creator_signature'])].join(', ')}`);
  } else {
    attempt("creator's signature over the listing statement", () => check("creator's signature over the listing statement",
      ed25519Verify(d.creator, canonicalize(statement), d.creator_signature),
      `by the creator wallet ${d.creator}`, `does not verify with the creator wallet ${d.creator}`));
    // The key's own signature of the same statement, in every listing written since it was
    // required (older ones have none): whoever holds the key agreed to this wallet's listing.
    if (d.key_signature !== undefined)
      attempt("signing key's signature over the listing statement", () => check("signing key's signature over the listing statement",
        typeof d.key_signature === 'string' && ed25519Verify(d.signing_public_key, canonicalize(statement), d.key_signature),
        `by the key ${d.signing_public_key}`, `does not verify with the key ${d.signing_public_key}`));
  }
  await checkTransactionHashAndProof('listing ', base, 'mainnet', tx, authorityKey, waitMs, false);
  return tx;
}

// Steps 5 (the hash) and 6 (the proof, the block, and with chain the block's leaves and link).
async function checkTransactionHashAndProof(prefix, base, env, tx, authorityKey, waitMs, chain) {
  const enc = encodeURIComponent;
  let computed;
  attempt(`${prefix}transaction hash`, () => {
    computed = transactionHash(tx);
    return check(`${prefix}transaction hash`, computed === tx.hash, `${computed} (version ${tx.version})`,
      `recomputed ${computed}, served ${show(tx.hash)}`);
  });
  if (!computed) return;

  const r = await getWaiting(`${base}/v1/ledger/${enc(env)}/transactions/${enc(tx.id)}/proof`, {}, 409, 'not_sealed', waitMs);
  if (!check(`${prefix}inclusion proof`, r.ok && r.json, `GET …/transactions/${tx.id}/proof${r.waited >= 100 ? ` (sealed after ${(r.waited / 1000).toFixed(1)} s of not_sealed)` : ''}`,
    describe(r) + (r.code === 'not_sealed' ? ` after ${waitMs / 1000} s (--wait)` : ''))) return;
  const proof = r.json, block = proof.block || {};
  same(`${prefix}proof transaction_hash`, proof.transaction_hash, computed);
  if (proof.transaction_id !== undefined) same(`${prefix}proof transaction_id`, proof.transaction_id, tx.id);
  attempt(`${prefix}proof path`, () => {
    let node = merkleLeaf(computed);
    for (const step of proof.path || []) {
      if (!isHex64(step.hash)) throw new Error(`path step hash ${show(step.hash)} is not 64 hex digits`);
      const sib = Buffer.from(step.hash, 'hex');
      if (step.position === 'left') node = merkleNode(sib, node);
      else if (step.position === 'right') node = merkleNode(node, sib);
      else throw new Error(`path step position ${show(step.position)}`);
    }
    return check(`${prefix}proof path`, hex(node) === block.merkle_root,
      `${(proof.path || []).length} steps to merkle_root ${block.merkle_root}`,
      `path gives ${hex(node)}, block merkle_root ${show(block.merkle_root)}`);
  });
  same(`${prefix}block environment`, block.environment, env);
  const blockOk = checkBlock(`${prefix}block ${block.height}`, block, authorityKey);
  // A transaction read before it was sealed is served with block_height 0 (seen live; the docs do
  // not say), so only a sealed one's block_height is compared.
  if (typeof tx.block_height === 'number' && tx.block_height > 0) same(`${prefix}transaction block_height`, tx.block_height, block.height);
  if (!chain || !blockOk) return;

  // The chain: the block's leaves, and its link to the block before.
  const h = block.height;
  const br = await get(`${base}/v1/ledger/${enc(env)}/blocks/${h}`);
  if (!check(`block ${h} (chain)`, br.ok && br.json, `GET /v1/ledger/${env}/blocks/${h}`, describe(br))) return;
  const served = br.json.block ?? br.json;
  // The anchor may be written between the two reads: the rest must be the same.
  const header = (b) => canonicalize(without(b, 'anchor'));
  check(`block ${h} as served = the proof's`, header(served) === header(block), served.hash,
    `GET …/blocks/${h} serves ${header(served)}, the proof ${header(block)}`);
  const leaves = br.json.transaction_hashes ?? served.transaction_hashes;
  if (!Array.isArray(leaves) || leaves.length === 0 || !leaves.every(isHex64)) {
    report(false, `block ${h} transaction_hashes`, `not a non-empty list of hashes: ${show(leaves)}`);
  } else {
    const root = merkleRoot(leaves);
    check(`block ${h} transaction_hashes`, root === served.merkle_root && leaves.length === served.tx_count && leaves.includes(computed),
      `${leaves.length} leaves give merkle_root ${root}, ours among them`,
      `${leaves.length} leaves (tx_count ${served.tx_count}) give ${root}, merkle_root ${served.merkle_root}, ours ${leaves.includes(computed) ? '' : 'not '}among them`);
    const txs = br.json.transactions ?? served.transactions;
    if (Array.isArray(txs) && txs.length > 0) {
      const bad = [];
      txs.forEach((t, i) => {
        try {
          const th = transactionHash(t);
          if (th !== t.hash || th !== leaves[i]) bad.push(`${t.id}: ${th}`);
        } catch (e) {
          bad.push(`${t.id}: ${e.message}`);
        }
      });
      check(`block ${h} transactions`, bad.length === 0 && txs.length === leaves.length,
        `${txs.length} transactions recompute to the leaves, in order`,
        `${txs.length} transactions for ${leaves.length} leaves; mismatched: ${bad.join(', ')}`);
    }
  }
  if (h === 1) {
    same(`block ${h} prev_hash`, served.prev_hash, '0'.repeat(64), 'genesis: ');
    return served;
  }
  const pr = await get(`${base}/v1/ledger/${enc(env)}/blocks/${h - 1}`);
  if (!check(`block ${h - 1} (chain)`, pr.ok && pr.json, `GET /v1/ledger/${env}/blocks/${h - 1}`, describe(pr))) return;
  const prev = pr.json.block ?? pr.json;
  same(`block ${h - 1} height`, prev.height, h - 1);
  checkBlock(`block ${h - 1}`, prev, authorityKey);
  check(`block ${h} prev_hash`, served.prev_hash === prev.hash, `= block ${h - 1}'s hash ${prev.hash}`,
    `${show(served.prev_hash)}, block ${h - 1}'s hash is ${show(prev.hash)}`);
  return served;
}

function checkBlock(name, block, authorityKey) {
  let ok = attempt(`${name} hash`, () => {
    const bh = blockHash(block);
    return check(`${name} hash`, bh === block.hash, `${bh} (version ${block.version})`,
      `recomputed ${bh}, served ${show(block.hash)}`);
  });
  ok = attempt(`${name} authority signature`, () => check(`${name} authority signature`,
    isHex64(block.hash) && ed25519Verify(authorityKey, Buffer.from(block.hash, 'hex'), block.signature),
    `by ${authorityKey}`, `does not verify with the ledger authority key ${authorityKey}`)) && ok;
  return ok;
}

// ---------------------------------------------------------------------------------------------
// The anchor (docs/verify.md, step 8): the hash chain forward from the execution's block to the
// first block with `anchor`, and that Solana transaction, read by JSON-RPC getTransaction.

export const MEMO_PROGRAM = 'MemoSq4gqABAXKb96qnH8TysNcWxMyWCqXgDLGmfcHr';
export const anchorMemo = (b) => `crtx:${b.environment}:${b.height}:${b.hash}`;
const DEFAULT_RPC = {
  'mainnet-beta': 'https://api.mainnet-beta.solana.com',
  devnet: 'https://api.devnet.solana.com',
  testnet: 'https://api.testnet.solana.com',
};
const MAX_WALK = 10000;

// The Solana wire format: compact-u16 ("shortvec") lengths, 7 bits a byte, low first, at most
// three bytes, in their shortest form only.
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
  if (version === 0) {
    for (let i = 0, n = u16(); i < n; i++) {
      bytes(32);
      bytes(u16());
      bytes(u16());
    }
  }
  if (off !== b.length) fail(`${b.length - off} bytes after the message`);
  const [required, roSigned, roUnsigned] = header;
  if (required === 0 || required > keys.length || roSigned >= required || roUnsigned > keys.length - required)
    fail(`header ${header.join(', ')} for ${keys.length} keys`);
  if (signatures.length !== required) fail(`${signatures.length} signatures for ${required} required`);
  return { signatures, messageBytes: b.subarray(messageStart), version, header, keys, blockhash, instructions };
}

// What must hold of a transaction getTransaction answered for block b's anchor; undefined when it
// all does, else what does not.
export function anchorProblem(got, b, authorityKey) {
  const a = b.anchor;
  if (got.err !== null) return `transaction ${a.signature} failed on the chain: ${JSON.stringify(got.err)}`;
  if (got.slot !== a.slot) return `transaction ${a.signature} is in slot ${got.slot}, the block says ${a.slot}`;
  const tx = parseSolanaTransaction(got.raw);
  if (base58Encode(tx.signatures[0]) !== a.signature) return `the cluster answered another transaction (${base58Encode(tx.signatures[0])})`;
  const i = tx.keys.slice(0, tx.header[0]).findIndex((k) => base58Encode(k) === authorityKey);
  if (i < 0) return `the ledger authority ${authorityKey} did not sign transaction ${a.signature}`;
  if (!ed25519Verify(authorityKey, tx.messageBytes, base58Encode(tx.signatures[i])))
    return `the ledger authority's signature in transaction ${a.signature} does not verify`;
  const memo = anchorMemo(b);
  const found = tx.instructions.some((ix) => ix.programIndex < tx.keys.length && base58Encode(tx.keys[ix.programIndex]) === MEMO_PROGRAM &&
    Buffer.compare(Buffer.from(ix.data), Buffer.from(memo, 'utf8')) === 0 && ix.accounts.includes(i));
  return found ? undefined : `transaction ${a.signature} has no Memo instruction ${JSON.stringify(memo)} signed by the ledger authority`;
}

// Solana mainnet's genesis hash: the cluster every anchor of a mainnet ledger must be on.
export const MAINNET_GENESIS_HASH = '5eykt4UsFv8P8NJdTREpY1vzqKqZKvdpKuc147dw2N9d';

// One JSON-RPC call to the Solana endpoint at rpc; resolves to its result (null when it is null).
async function solanaCall(rpc, method, params = []) {
  let json;
  try {
    const res = await fetch(rpc, {
      method: 'POST',
      headers: { 'Content-Type': 'application/json' },
      body: JSON.stringify({ jsonrpc: '2.0', id: 1, method, params }),
    });
    json = await res.json();
  } catch (e) {
    throw new Error(`solana rpc ${rpc}: ${method}: ${e.cause?.message || e.message}`);
  }
  if (json?.error) throw new Error(`solana rpc ${rpc}: ${method}: ${json.error.code} ${json.error.message}`);
  return json?.result ?? null;
}

async function solanaTransaction(rpc, signature) {
  const r = await solanaCall(rpc, 'getTransaction',
    [signature, { encoding: 'base64', maxSupportedTransactionVersion: 0, commitment: 'finalized' }]);
  if (!r) throw new Error(`transaction ${signature} is not finalized on the cluster at ${rpc}`);
  if (!r.meta || !('err' in r.meta)) throw new Error(`transaction ${signature} is served without meta.err`);
  if (!Array.isArray(r.transaction) || r.transaction[1] !== 'base64') throw new Error(`transaction ${signature} is not served in base64`);
  return { slot: r.slot, err: r.meta.err, raw: Buffer.from(r.transaction[0], 'base64') };
}

// Block b's anchor as the cluster at rpc holds it: undefined when it holds, else what does not;
// an RPC that cannot be asked throws. A mainnet block's anchor counts only on Solana mainnet, known
// by its genesis hash, whatever cluster the anchor names: a memo on devnet (free, and reset from
// time to time) or on a validator of the marketplace's own proves nothing to a mainnet reader.
// That is asked first, and the transaction is not read from another cluster.
export async function anchorOnChainProblem(rpc, b, authorityKey) {
  if (b.environment === 'mainnet') {
    const genesis = await solanaCall(rpc, 'getGenesisHash');
    if (genesis !== MAINNET_GENESIS_HASH)
      return `a mainnet block's anchor must be on Solana mainnet (genesis ${MAINNET_GENESIS_HASH}); the cluster at ${rpc} has genesis ${show(genesis)}`;
  }
  return anchorProblem(await solanaTransaction(rpc, b.anchor.signature), b, authorityKey);
}

export async function checkAnchorChain(base, env, from, authorityKey, rpcOption) {
  const enc = encodeURIComponent;
  const notYet = (detail) => console.log(`-    anchor: not anchored yet: ${detail}`);
  // GET /v1/reserves names the newest anchored block: it only bounds the walk; nothing is called
  // anchored below before its chain and its memo are checked.
  let last = from.height + MAX_WALK;
  const rs = await get(`${base}/v1/reserves`);
  if (rs.ok && Array.isArray(rs.json?.reserves)) {
    last = rs.json.reserves.find((r) => r.environment === env)?.anchored_block ?? 0;
    if (last === 0) return notYet(`the ${env} ledger is not anchored on Solana (the marketplace reports no chain or no anchor for it)`);
    if (last < from.height) return notYet(`no block of ${env} from ${from.height} on is anchored on Solana yet`);
  }
  let prev = from;
  for (let h = from.height; h <= last; h++) {
    let b = from;
    if (h > from.height) {
      const r = await get(`${base}/v1/ledger/${enc(env)}/blocks/${h}`);
      if (r.status === 404 && r.code === 'block_not_found')
        return notYet(`no block of ${env} from ${from.height} to ${h - 1} is anchored on Solana yet`);
      if (!(r.ok && r.json)) return report(false, 'hash chain', `GET /v1/ledger/${env}/blocks/${h}: ${describe(r)}`);
      b = r.json.block ?? r.json;
      let bad;
      try {
        if (b.environment !== env || b.height !== h) bad = `served block ${show(b.height)} of ${show(b.environment)}`;
        else if (b.prev_hash !== prev.hash) bad = `prev_hash ${show(b.prev_hash)} is not block ${h - 1}'s hash ${prev.hash}`;
        else if (blockHash(b) !== b.hash) bad = `does not hash to its hash ${show(b.hash)}`;
        else if (!isHex64(b.hash) || !ed25519Verify(authorityKey, Buffer.from(b.hash, 'hex'), b.signature))
          bad = `its signature does not verify with the ledger authority key ${authorityKey}`;
      } catch (e) {
        bad = e.message;
      }
      if (bad) return report(false, 'hash chain', `block ${h}: ${bad}`);
    }
    prev = b;
    if (!b.anchor) continue;
    report(true, 'hash chain', h === from.height ? `block ${h} is anchored itself`
      : `blocks ${from.height} to ${h} each name the one before and are signed by the ledger authority`);
    const a = b.anchor;
    const rpc = rpcOption || DEFAULT_RPC[a.cluster];
    if (!rpc) return report(false, 'anchor', `the anchor is on a ${show(a.cluster)} cluster: give its Solana RPC URL (--rpc, CRTX_SOLANA_RPC)`);
    try {
      const problem = await anchorOnChainProblem(rpc, b, authorityKey);
      return check('anchor', !problem, `block ${h} is named by the memo of Solana transaction ${a.signature} (slot ${a.slot}, ${a.cluster}), ` +
        'signed by the ledger authority', `block ${h}: ${problem}`);
    } catch (e) {
      return report(false, 'anchor', `block ${h}: ${e.message}`);
    }
  }
  if (last === from.height + MAX_WALK) return notYet(`no block of ${env} from ${from.height} to ${last} is anchored on Solana`);
  report(false, 'hash chain', `the marketplace reports block ${last} of ${env} anchored, but no block from ${from.height} to it serves an anchor`);
}

// ---------------------------------------------------------------------------------------------
// Self-test: the worked example of docs/ledger.md ("Hashes"), and known vectors for the encodings.

const EXAMPLE_TX = {
  id: '3GkQ7QDDnjb2RB8xWctb7UMA9VHSrren8',
  environment: 'devnet',
  seq: 1207,
  kind: 'ExecutionRecord',
  data: {
    agent_id: 'agt_ssLrwuK2hYrMqw7D',
    cid: 'bafkreihdwdcefgh4dqkjv67uzcmw7ojee6xedzdetojuzjevtenxquvyku',
    execution_id: '0192f3a1-7c2e-7d4b-9a41-5be7c0d3f8a2',
    execution_time_ms: '412',
    listing_tx: '3GkQ6H9acCC6pfYkpmX4Cd6QhRAtUNgjf',
    result_hash: 'sha256:a1b7eb2ee7a6aded8dda4e6cf30826f5afffb28a5597ee9389e91eb326d4e319',
    signature: 'ed25519:4vJ9JU1bJJE96FWSJKvHsmmFADCg4gpZQff4P3bkLKi2Np5ZThpQcxvXbgqr5CJ7L3qXgZP8UJmRBwUpDKzTSQoC',
    signing_public_key: 'CmHxG4NfaEV3Hn9eBPvWvWaZ8mh2Uh5nZeJXhZzXbJzL',
    status: 'completed',
  },
  postings: [
    { from: 'CfFyHyDm1Xo2Ytn1wr3uSzKtJY7QVHDokq5ubD28QKS8', to: '6VoZVjQhvK9tSdPaxjHRofkuaSpcrVDUS1yfd4KuXCT9', amount_usdc: 0.0495 },
    { from: 'CfFyHyDm1Xo2Ytn1wr3uSzKtJY7QVHDokq5ubD28QKS8', to: 'GT8MxiFyGL3dcd8BKGSLsaggCYXAfg6rdGeR3x3JwNuh', amount_usdc: 0.0005 },
  ],
  accounts: [],
  created_at: '2026-11-23T14:05:09.1205Z',
  block_height: 31,
  version: 2,
  hash: '8fc64fbe69975de6e4347e54bd63c04078d6655da7c4578b97f6f4ae20694540',
};
const EXAMPLE_CANONICAL = '{"accounts":[],"created_at":"2026-11-23T14:05:09.1205Z","data":{"agent_id":"agt_ssLrwuK2hYrMqw7D","cid":"bafkreihdwdcefgh4dqkjv67uzcmw7ojee6xedzdetojuzjevtenxquvyku","execution_id":"0192f3a1-7c2e-7d4b-9a41-5be7c0d3f8a2","execution_time_ms":"412","listing_tx":"3GkQ6H9acCC6pfYkpmX4Cd6QhRAtUNgjf","result_hash":"sha256:a1b7eb2ee7a6aded8dda4e6cf30826f5afffb28a5597ee9389e91eb326d4e319","signature":"ed25519:4vJ9JU1bJJE96FWSJKvHsmmFADCg4gpZQff4P3bkLKi2Np5ZThpQcxvXbgqr5CJ7L3qXgZP8UJmRBwUpDKzTSQoC","signing_public_key":"CmHxG4NfaEV3Hn9eBPvWvWaZ8mh2Uh5nZeJXhZzXbJzL","status":"completed"},"environment":"devnet","id":"3GkQ7QDDnjb2RB8xWctb7UMA9VHSrren8","kind":"ExecutionRecord","postings":[{"amount_usdc":0.0495,"from":"CfFyHyDm1Xo2Ytn1wr3uSzKtJY7QVHDokq5ubD28QKS8","to":"6VoZVjQhvK9tSdPaxjHRofkuaSpcrVDUS1yfd4KuXCT9"},{"amount_usdc":0.0005,"from":"CfFyHyDm1Xo2Ytn1wr3uSzKtJY7QVHDokq5ubD28QKS8","to":"GT8MxiFyGL3dcd8BKGSLsaggCYXAfg6rdGeR3x3JwNuh"}],"version":2}';
const EXAMPLE_CANONICAL_BYTES = 956;
const EXAMPLE_HASH = '8fc64fbe69975de6e4347e54bd63c04078d6655da7c4578b97f6f4ae20694540';
const EXAMPLE_ROOT = '75d4eb94e143b095053f7df92866867e448e9a116d051fb8e71d987c81a88d3c';
const EXAMPLE_BLOCK = { environment: 'devnet', height: 31, prev_hash: '5f0c6d3e0b1a9c8e7d6f5a4b3c2d1e0f9a8b7c6d5e4f3a2b1c0d9e8f7a6b5c4d', merkle_root: '75d4eb94e143b095053f7df92866867e448e9a116d051fb8e71d987c81a88d3c', tx_count: 1, sealed_at: '2026-11-23T14:05:11.120503Z', version: 2 };
const EXAMPLE_BLOCK_HASH = '0b5c69cbab638acec378d0d31f3832fca0523a76cf11ac48a42de00a6e612a3c';

// The examples as docs/ledger.md has them now, when this file sits in the repository.
function examplesFromDocs() {
  const path = join(dirname(fileURLToPath(import.meta.url)), '..', '..', 'docs', 'ledger.md');
  if (!existsSync(path)) return undefined;
  const md = readFileSync(path, 'utf8');
  const block = (marker) => {
    const m = new RegExp(`<!-- example: ${marker} -->\\s*\\n\`\`\`[a-z]*\\n([\\s\\S]*?)\\n\`\`\``).exec(md);
    return m?.[1];
  };
  const hashM = /<!-- example: hash -->`([0-9a-f]{64})`/.exec(md);
  const bytesM = /Its canonical form, (\d+) bytes/.exec(md);
  const blockM = /and the block\s*\n+```json\n(\{[\s\S]*?\})\n```\s*\n+hashes to `([0-9a-f]{64})`/.exec(md);
  const rootM = /Merkle root is `SHA-256\(0x00 ‖ hash\)` =\s*`([0-9a-f]{64})`/.exec(md);
  return {
    path,
    tx: block('transaction'),
    canonical: block('canonical'),
    hash: hashM?.[1],
    bytes: bytesM ? Number(bytesM[1]) : undefined,
    block: blockM?.[1],
    blockHash: blockM?.[2],
    root: rootM?.[1],
  };
}

function selfTestExample(label, txObj, canonical, bytes, hash, root, blockObj, bHash) {
  const c = transactionCanonical(txObj);
  check(`${label}: canonical form`, c === canonical, `${Buffer.byteLength(c)} bytes as the doc prints`,
    `differs from the doc's:\n  ours: ${c}\n  doc:  ${canonical}`);
  same(`${label}: canonical length`, Buffer.byteLength(c), bytes, 'bytes: ');
  const h = transactionHash(txObj);
  same(`${label}: transaction hash`, h, hash);
  same(`${label}: served hash`, txObj.hash, hash);
  same(`${label}: Merkle root of the block of one`, merkleRoot([h]), root);
  same(`${label}: block merkle_root`, blockObj.merkle_root, root);
  same(`${label}: block hash`, blockHash(blockObj), bHash);
}

// The members of a receipt (docs/verify.md, step 7).
const RECEIPT_MEMBERS = ['version', 'issuer', 'execution_id', 'environment', 'wallet', 'agent_id', 'status', 'cost_usdc',
  'creator_amount_usdc', 'platform_amount_usdc', 'refunded_usdc', 'result_hash', 'creator_signature', 'signing_public_key',
  'listing_transaction', 'ledger_transaction', 'initiated_at', 'completed_at', 'signature'];

// memberNames lists the member names of the object that the JSON text
// (already known to parse) is, in order and repeats included.
export function memberNames(text) {
  const names = [];
  let depth = 0;
  for (let i = 0; i < text.length; i++) {
    const c = text[i];
    if (c === '"') {
      const start = i;
      for (i++; text[i] !== '"'; i++) if (text[i] === '\\') i++;
      let j = i + 1;
      while (j < text.length && ' \t\n\r'.includes(text[j])) j++;
      if (depth === 1 && text[j] === ':') names.push(JSON.parse(text.slice(start, i + 1)));
    } else if (c === '{' || c === '[') depth++;
    else if (c === '}' || c === ']') depth--;
  }
  return names;
}

// Fresh keys and a memo transaction written by hand in Solana's wire format, as the marketplace
// writes one: the treasury pays the fee, the ledger authority signs the memo (legacy or v0).
function anchorFixture() {
  const pub = (k) => Buffer.from(createPublicKey(k).export({ format: 'jwk' }).x, 'base64url');
  const treasury = generateKeyPairSync('ed25519').privateKey, authority = generateKeyPairSync('ed25519').privateKey;
  const shortvec = (n) => (n < 0x80 ? [n] : [(n & 0x7f) | 0x80, n >> 7]);
  const message = (v0, memo, memoSigner) => Buffer.from([
    ...(v0 ? [0x80] : []), 2, 1, 1, ...shortvec(3), ...pub(treasury), ...pub(authority), ...base58Decode(MEMO_PROGRAM),
    ...new Uint8Array(32).fill(7), ...shortvec(1), 2, ...shortvec(1), memoSigner, ...shortvec(Buffer.byteLength(memo)), ...Buffer.from(memo),
    ...(v0 ? shortvec(0) : [])]);
  const signedTx = (msg) => Buffer.concat([Buffer.from(shortvec(2)), cryptoSign(null, msg, treasury), cryptoSign(null, msg, authority), msg]);
  const block = { ...EXAMPLE_BLOCK, hash: EXAMPLE_BLOCK_HASH };
  const anchored = (raw, b = block) => ({ ...b, anchor: { signature: base58Encode(raw.subarray(1, 65)), slot: 777, cluster: 'custom' } });
  return { pub, treasury, authority, authorityKey: base58Encode(pub(authority)), block, message, signedTx, anchored };
}

// Devnet's genesis hash, for the self-test: a cluster that is not mainnet.
const DEVNET_GENESIS_HASH = 'EtWTRABZaYq6iMfeYKouRu166VU2xqa1wcaWoxPkrZBG';

async function attemptAsync(name, fn) {
  try {
    return await fn();
  } catch (e) {
    return report(false, name, e.message);
  }
}

async function selfTest() {
  same('member names as sent', JSON.stringify(memberNames('{"a" : {"b":1},"A":"x:\\"y{","a":[{"c":2}],"\\u0041":0}')),
    '["a","A","a","A"]');
  // Encodings against known vectors.
  same('base58 encode', base58Encode(Uint8Array.from([0, 0, 0x28, 0x7f, 0xb4, 0xcd])), '11233QC4');
  same('base58 round trip', base58Encode(base58Decode('CfFyHyDm1Xo2Ytn1wr3uSzKtJY7QVHDokq5ubD28QKS8')), 'CfFyHyDm1Xo2Ytn1wr3uSzKtJY7QVHDokq5ubD28QKS8');
  same('base32 (RFC 4648 "foobar")', base32Encode(Buffer.from('foobar')), 'mzxw6ytboi');
  same('CID of the empty result', cidOf(sha256(new Uint8Array(0))), 'bafkreihdwdcefgh4dqkjv67uzcmw7ojee6xedzdetojuzjevtenxquvyku');
  // RFC 8032, 7.1, test 1 (empty message), keys written in base58.
  const pub = base58Encode(Buffer.from('d75a980182b10ab7d54bfed3c964073a0ee172f3daa62325af021a68f707511a', 'hex'));
  const sig = base58Encode(Buffer.from('e5564300c360ac729086e2cc806e828a84877f1eb8e5d974d873e065224901555fb8821590a33bacc61e39701cf9b46bd25bf5f0595bbe24655141438e7a100b', 'hex'));
  check('Ed25519 verify (RFC 8032 test 1)', ed25519Verify(pub, new Uint8Array(0), sig) && !ed25519Verify(pub, 'x', sig),
    'accepts the vector, refuses another message', 'wrong answer');
  same('JCS numbers and escapes', canonicalize({ b: [1e21, 1.5e-7, 0.000001, -0, 10, 1.000001], a: '<&>\u2028é\n"\\', '\u20ac': 1, '\ud83d\ude00': 2, '\u00e9': 3 }),
    '{"a":"<&>\u2028é\\n\\"\\\\","b":[1e+21,1.5e-7,0.000001,0,10,1.000001],"é":3,"\u20ac":1,"\ud83d\ude00":2}');
  // The worked example's postings come from its execution's escrow, one of them to the treasury.
  same('example escrow address', accountAddress('escrow', EXAMPLE_TX.data.execution_id), EXAMPLE_TX.postings[0].from);
  same('treasury address', accountAddress('treasury', 'platform'), EXAMPLE_TX.postings[1].to);

  // docs/creators.md, "The listing statement": keys from the seeds 32 × 0x01 (wallet) and 32 × 0x02
  // (agent), the two statements and their signatures.
  attempt('listing statement examples', () => {
    const pubFromSeed = (byte) => {
      const der = Buffer.concat([Buffer.from('302e020100300506032b657004220420', 'hex'), Buffer.alloc(32, byte)]);
      const jwk = createPublicKey(createPrivateKey({ key: der, format: 'der', type: 'pkcs8' })).export({ format: 'jwk' });
      return base58Encode(Buffer.from(jwk.x, 'base64url'));
    };
    const wallet = pubFromSeed(1), agentKey = pubFromSeed(2);
    same('listing example: wallet from seed 0x01', wallet, 'AKnL4NNf3DGWZJS6cPknBuEGnVsV4A4m5tgebLHaRSZ9');
    same('listing example: agent key from seed 0x02', agentKey, '9hSR6S7WPtxmTojgo6GG3k4yDPecgJY292j7xrsUGWBu');
    const listed = canonicalize({ creator: wallet, kind: 'AgentListed', name: 'Word counter', price_per_call_usdc: String(0.05), signing_public_key: agentKey });
    same('listing example: AgentListed statement', listed,
      '{"creator":"AKnL4NNf3DGWZJS6cPknBuEGnVsV4A4m5tgebLHaRSZ9","kind":"AgentListed","name":"Word counter","price_per_call_usdc":"0.05","signing_public_key":"9hSR6S7WPtxmTojgo6GG3k4yDPecgJY292j7xrsUGWBu"}');
    check('listing example: AgentListed signature', ed25519Verify(wallet, listed,
      '2tMCMUvaAsc3GNG6zNSTJZaW8h74MNAoZzc9FjUpwCEvGbtYvYmpvgeH95qAdEkr978AULz5MhaVLNzrujQwJErw'), 'verifies', 'does not verify');
    const updated = canonicalize({ agent_id: 'agt_8zmONHevjO0ED8RI', creator: wallet, kind: 'ListingUpdated', signing_public_key: agentKey });
    same('listing example: ListingUpdated statement', updated,
      '{"agent_id":"agt_8zmONHevjO0ED8RI","creator":"AKnL4NNf3DGWZJS6cPknBuEGnVsV4A4m5tgebLHaRSZ9","kind":"ListingUpdated","signing_public_key":"9hSR6S7WPtxmTojgo6GG3k4yDPecgJY292j7xrsUGWBu"}');
    check('listing example: ListingUpdated signature', ed25519Verify(wallet, updated,
      '2rzTKuRXpPEPLGWA83eAQnE8MqXHBmB4WLvh4EukAqYzWSgMLzt8ZJvguHKcgkBNPeSR4tLk7WetT8LB6RnhoyHr'), 'verifies', 'does not verify');
    // As written since nonces and key signatures: the nonce in the statement, signed by both keys.
    const nonced = canonicalize({ creator: wallet, kind: 'AgentListed', listing_nonce: 'lst_4fQx9ZbT2mKpW7sLrN3vYc', name: 'Word counter',
      price_per_call_usdc: String(0.05), signing_public_key: agentKey });
    same('listing example: AgentListed statement with a nonce', nonced,
      '{"creator":"AKnL4NNf3DGWZJS6cPknBuEGnVsV4A4m5tgebLHaRSZ9","kind":"AgentListed","listing_nonce":"lst_4fQx9ZbT2mKpW7sLrN3vYc","name":"Word counter","price_per_call_usdc":"0.05","signing_public_key":"9hSR6S7WPtxmTojgo6GG3k4yDPecgJY292j7xrsUGWBu"}');
    check('listing example: AgentListed creator_signature with a nonce', ed25519Verify(wallet, nonced,
      '2ZjwHTX29hAtenTPDEaG9pNvXHfwpv6WaUggtt6LxjECzd6NXk6cFuZH83ZCC3vF6tsrkysWAYGUYeY6Ehemvddg'), 'verifies', 'does not verify');
    check('listing example: AgentListed key_signature', ed25519Verify(agentKey, nonced,
      '3eQ5j8CsaEHYEh1xMFfKQn2qC1GGpDjB3cdVFZYdv4amucyK8JLr3QTF3tLUcxZ4eo78CNKBuNSFgqpRXD6NF9i4'), 'verifies', 'does not verify');
    // As written today: the marketplace's host too, and for a key change the key transaction it replaces.
    const bound = canonicalize({ agent_id: 'agt_8zmONHevjO0ED8RI', creator: wallet, kind: 'ListingUpdated', listing_nonce: 'lst_8HdN2kVq5TzR1wLmXp7bJe',
      marketplace: 'crtx.example.com', replaces: '3FZbgi29cpjq2GjdwV8eyHuJJnkLtktZc5', signing_public_key: agentKey });
    same('listing example: ListingUpdated statement with marketplace and replaces', bound,
      '{"agent_id":"agt_8zmONHevjO0ED8RI","creator":"AKnL4NNf3DGWZJS6cPknBuEGnVsV4A4m5tgebLHaRSZ9","kind":"ListingUpdated","listing_nonce":"lst_8HdN2kVq5TzR1wLmXp7bJe","marketplace":"crtx.example.com","replaces":"3FZbgi29cpjq2GjdwV8eyHuJJnkLtktZc5","signing_public_key":"9hSR6S7WPtxmTojgo6GG3k4yDPecgJY292j7xrsUGWBu"}');
    check('listing example: ListingUpdated creator_signature with marketplace and replaces', ed25519Verify(wallet, bound,
      '4BBpMvqPyYo6y9aXASoWNMZq4VTYkzkTGopsLGRR3KfgDpMpTfycrSXoD3EKjHbEyyuTsNjhp8896pKKb3XvFz6Y'), 'verifies', 'does not verify');
    return check('listing example: ListingUpdated key_signature with marketplace and replaces', ed25519Verify(agentKey, bound,
      '4jZ7emfPtT3mcnsZm99XN2ZvggLSDW5azqdxqEegM5LxuutcFgumM5Z7qbjoZzhndwUmHVNdLPjEUGwJuVtszwGU'), 'verifies', 'does not verify');
  });

  // A block of version 1 with its transactions, as served (fixtures/ledger-v1.json, whose hashes
  // the Go test TestVersion1Fixture checks against the marketplace's own code): Go's JSON escapes,
  // times in microseconds and amounts in micro-USDC, hashed and sealed as version 1.
  attempt('version 1 fixture', () => {
    const f = JSON.parse(readFileSync(new URL('./fixtures/ledger-v1.json', import.meta.url), 'utf8'));
    const txs = f.transactions, block = f.block;
    check('version 1 fixture: versions', block.version === 1 && txs.length === block.tx_count && txs.every((t) => t.version === 1),
      `a block and ${txs.length} transactions of version 1`, 'the fixture is not all version 1');
    const hashes = txs.map((t) => transactionHash(t));
    txs.forEach((t, i) => same(`version 1 fixture: transaction ${t.id} hash`, hashes[i], t.hash));
    same('version 1 fixture: Merkle root', merkleRoot(hashes), block.merkle_root);
    same('version 1 fixture: block hash', blockHash(block), block.hash);
    check('version 1 fixture: authority signature', ed25519Verify(f.authority, Buffer.from(block.hash, 'hex'), block.signature),
      `by ${f.authority}`, 'does not verify');
    // Changed in one character of its escaped text, a transaction hashes otherwise.
    const changed = { ...txs[1], data: { ...txs[1].data, note: txs[1].data.note.replace('&', '+') } };
    return check('version 1 fixture: a changed transaction', transactionHash(changed) !== txs[1].hash, 'hashes otherwise', 'hashes the same');
  });

  // The anchor: a transaction written by hand in the wire format, as the marketplace writes one
  // (the treasury pays the fee, the ledger authority signs the memo), legacy and v0.
  attempt('anchor transaction', () => {
    const { pub, treasury, authorityKey, block, message, signedTx, anchored } = anchorFixture();
    const problems = [];
    for (const v0 of [false, true]) {
      const raw = signedTx(message(v0, anchorMemo(block), 1));
      const b = anchored(raw);
      const tx = parseSolanaTransaction(raw);
      if (tx.version !== (v0 ? 0 : -1) || tx.keys.length !== 3 || tx.instructions.length !== 1) problems.push(`v0 ${v0}: parsed ${JSON.stringify(tx.header)}`);
      const p = anchorProblem({ slot: 777, err: null, raw }, b, authorityKey);
      if (p) problems.push(`v0 ${v0}: the anchor as written: ${p}`);
      for (let n = 0; n < raw.length; n++) {
        try {
          parseSolanaTransaction(raw.subarray(0, n));
          problems.push(`v0 ${v0}: ${n} of ${raw.length} bytes parsed`);
          break;
        } catch { /* refused, as it must be */ }
      }
      const refusals = {
        'a failed transaction': anchorProblem({ slot: 777, err: { InstructionError: [0, 'Custom'] }, raw }, b, authorityKey),
        'another slot': anchorProblem({ slot: 778, err: null, raw }, b, authorityKey),
        'another block': anchorProblem({ slot: 777, err: null, raw }, { ...b, height: 32 }, authorityKey),
        'another authority': anchorProblem({ slot: 777, err: null, raw }, b, base58Encode(pub(treasury).map((x) => x ^ 1))),
        'the memo signed by the treasury alone': (() => {
          const r = signedTx(message(v0, anchorMemo(block), 0));
          return anchorProblem({ slot: 777, err: null, raw: r }, anchored(r), authorityKey);
        })(),
        'a forged authority signature': (() => {
          const r = Buffer.from(raw);
          r[70] ^= 1;
          return anchorProblem({ slot: 777, err: null, raw: r }, b, authorityKey);
        })(),
      };
      for (const [name, p] of Object.entries(refusals)) if (!p) problems.push(`v0 ${v0}: ${name} was accepted`);
    }
    try {
      parseSolanaTransaction([0x80, 0x00]);
      problems.push('a compact-u16 not in its shortest form was accepted');
    } catch { /* refused */ }
    return check('anchor transaction', problems.length === 0, 'legacy and v0 memo transactions parse; the memo, slot, status and ' +
      "authority's signature are checked; truncations, forgeries and other memos are refused", problems.join('; '));
  });

  // A mainnet block's anchor is read only from Solana mainnet, known by its genesis hash: from a
  // cluster of another genesis it fails before its transaction is read. A devnet block's has no
  // such rule. Asked of a JSON-RPC server of our own on 127.0.0.1 (no network needed).
  await attemptAsync('anchor on mainnet only', async () => {
    const { authorityKey, block, message, signedTx, anchored } = anchorFixture();
    let genesis, calls = [], answer;
    const server = createServer((req, res) => {
      const body = [];
      req.on('data', (c) => body.push(c)).on('end', () => {
        const { method } = JSON.parse(Buffer.concat(body).toString('utf8'));
        calls.push(method);
        const result = method === 'getGenesisHash' ? genesis
          : method === 'getTransaction' ? { slot: 777, meta: { err: null }, transaction: [answer.toString('base64'), 'base64'] } : null;
        res.setHeader('Content-Type', 'application/json');
        res.end(JSON.stringify({ jsonrpc: '2.0', id: 1, result }));
      });
    });
    await new Promise((r) => server.listen(0, '127.0.0.1', r));
    const rpc = `http://127.0.0.1:${server.address().port}`;
    const problems = [];
    try {
      for (const [env, g, want, wantCalls] of [
        ['mainnet', DEVNET_GENESIS_HASH, /must be on Solana mainnet/, ['getGenesisHash']],
        ['mainnet', MAINNET_GENESIS_HASH, undefined, ['getGenesisHash', 'getTransaction']],
        ['devnet', DEVNET_GENESIS_HASH, undefined, ['getTransaction']],
      ]) {
        const b = { ...block, environment: env };
        answer = signedTx(message(false, anchorMemo(b), 1));
        genesis = g;
        calls = [];
        const p = await anchorOnChainProblem(rpc, anchored(answer, b), authorityKey);
        const what = `a ${env} block on the cluster of genesis ${g}`;
        if (want ? !want.test(p ?? '') : p !== undefined) problems.push(`${what}: ${p ?? 'accepted'}`);
        if (calls.join() !== wantCalls.join()) problems.push(`${what}: called ${calls.join(', ')}, want ${wantCalls.join(', ')}`);
      }
    } finally {
      server.close();
    }
    return check('anchor on mainnet only', problems.length === 0, "a mainnet block's anchor on a cluster of devnet's genesis fails " +
      'before getTransaction; on mainnet it is read and holds; a devnet block\'s is read without asking the genesis', problems.join('; '));
  });

  // The worked example, as embedded here.
  selfTestExample('example', EXAMPLE_TX, EXAMPLE_CANONICAL, EXAMPLE_CANONICAL_BYTES, EXAMPLE_HASH, EXAMPLE_ROOT, EXAMPLE_BLOCK, EXAMPLE_BLOCK_HASH);

  // The worked example, as docs/ledger.md has it now (when run from the repository).
  let doc;
  try {
    doc = examplesFromDocs();
  } catch (e) {
    report(false, 'docs/ledger.md example', e.message);
  }
  if (doc) {
    const missing = Object.entries(doc).filter(([, v]) => v === undefined).map(([k]) => k);
    if (missing.length) report(false, 'docs/ledger.md example', `could not find: ${missing.join(', ')}`);
    else attempt('docs/ledger.md example', () => selfTestExample('docs/ledger.md', JSON.parse(doc.tx), doc.canonical, doc.bytes,
      doc.hash, doc.root, JSON.parse(doc.block), doc.blockHash));
  } else {
    report(true, 'docs/ledger.md example', 'not found next to this file; the embedded copy was checked');
  }
  finish();
}

// ---------------------------------------------------------------------------------------------
// Command line

const USAGE = `usage: node verify.mjs --base URL --key API_KEY --execution ID [--authority BASE58] [--marketplace BASE58] [--wait SECONDS] [--rpc URL]
       node verify.mjs --self-test`;

function parseArgs(argv) {
  const opts = { wait: 30, rpc: process.env.CRTX_SOLANA_RPC || undefined };
  const names = { '--base': 'base', '--key': 'key', '--execution': 'execution', '--authority': 'authority', '--marketplace': 'marketplace', '--wait': 'wait', '--rpc': 'rpc' };
  for (let i = 0; i < argv.length; i++) {
    let a = argv[i], v;
    if (a === '--self-test') { opts.selfTest = true; continue; }
    if (a === '-h' || a === '--help') { opts.help = true; continue; }
    const eq = a.indexOf('=');
    if (eq > 0) { v = a.slice(eq + 1); a = a.slice(0, eq); }
    if (!(a in names)) throw new Error(`unknown argument ${a}`);
    if (v === undefined) {
      if (i + 1 >= argv.length) throw new Error(`${a} needs a value`);
      v = argv[++i];
    }
    opts[names[a]] = v;
  }
  if (opts.selfTest || opts.help) return opts;
  for (const r of ['base', 'key', 'execution']) if (!opts[r]) throw new Error(`--${r} is required`);
  opts.wait = Number(opts.wait);
  if (!Number.isFinite(opts.wait) || opts.wait < 0) throw new Error('--wait must be a number of seconds ≥ 0');
  try {
    const u = new URL(opts.base);
    if (u.protocol !== 'http:' && u.protocol !== 'https:') throw new Error();
  } catch {
    throw new Error(`--base must be an http(s) URL, not ${opts.base}`);
  }
  for (const k of ['authority', 'marketplace']) {
    if (opts[k] !== undefined && base58Decode(opts[k]).length !== 32) throw new Error(`--${k} must be base58 of 32 bytes`);
  }
  if (opts.rpc !== undefined) {
    try {
      const u = new URL(opts.rpc);
      if (u.protocol !== 'http:' && u.protocol !== 'https:') throw new Error();
    } catch {
      throw new Error(`--rpc (or CRTX_SOLANA_RPC) must be an http(s) URL, not ${opts.rpc}`);
    }
  }
  return opts;
}

async function main() {
  let opts;
  try {
    opts = parseArgs(process.argv.slice(2));
  } catch (e) {
    console.error(`verify.mjs: ${e.message}\n${USAGE}`);
    process.exit(2);
  }
  if (opts.help) {
    console.log(USAGE);
    process.exit(0);
  }
  if (opts.selfTest) return selfTest();
  try {
    await verifyExecution(opts);
  } catch (e) {
    if (e instanceof NetworkError) {
      console.error(`verify.mjs: ${e.message}`);
      results.push(false);
      finish(2);
    }
    throw e;
  }
  finish();
}

if (process.argv[1] && realpathSync(fileURLToPath(import.meta.url)) === realpathSync(process.argv[1])) await main();
