// Step 8, the anchor on Solana, without Solana: a chain of blocks signed here
// and a JSON-RPC endpoint answering getGenesisHash and getTransaction with
// memo transactions written and signed here in the wire format (legacy and
// v0), both served by node:http on 127.0.0.1 and read through Client.
import assert from 'node:assert/strict';
import { createServer } from 'node:http';
import { after, before, beforeEach, test } from 'node:test';
import {
  ANCHORED, ANCHOR_NOT_CHECKED, Client, MAINNET_GENESIS_HASH, MEMO_PROGRAM, NOT_ANCHORED_YET, anchorMemo, base58Decode, base58Encode, blockHash,
  generateSigningKey, parseSolanaTransaction, verifyAnchor,
} from '@crtx-market/sdk';

const DEVNET_GENESIS_HASH = 'EtWTRABZaYq6iMfeYKouRu166VU2xqa1wcaWoxPkrZBG';
const hexBytes = (h) => Uint8Array.from(Buffer.from(h, 'hex'));
const shortvec = (n) => (n < 0x80 ? [n] : [(n & 0x7f) | 0x80, n >> 7]);

let treasury, authority;

// The marketplace's anchor: the treasury pays the fee, the ledger authority signs the memo.
function message(memo, { v0 = false, memoSigner = 1, keys = { treasury, authority } } = {}) {
  const data = Buffer.from(memo);
  return Uint8Array.from([
    ...(v0 ? [0x80] : []), 2, 1, 1, ...shortvec(3), ...base58Decode(keys.treasury.publicKey), ...base58Decode(keys.authority.publicKey),
    ...base58Decode(MEMO_PROGRAM), ...new Uint8Array(32).fill(7), ...shortvec(1), 2, ...shortvec(1), memoSigner, ...shortvec(data.length), ...data,
    ...(v0 ? shortvec(0) : [])]);
}
async function signed(msg, keys = { treasury, authority }) {
  return Uint8Array.from([...shortvec(2), ...base58Decode(await keys.treasury.sign(msg)), ...base58Decode(await keys.authority.sign(msg)), ...msg]);
}

// The marketplace's side: blocks of one environment and its reserves.
const market = { env: 'devnet', blocks: new Map(), anchoredBlock: undefined, reservesFail: false };
// The cluster's side.
const rpc = { genesis: DEVNET_GENESIS_HASH, raw: undefined, slot: 777, err: null, calls: [] };

async function seal(b, key = authority) {
  b.hash = await blockHash(b);
  b.signature = await key.sign(hexBytes(b.hash));
}

async function ledger(env, n = 9) {
  market.env = env;
  market.blocks = new Map();
  market.anchoredBlock = undefined;
  market.reservesFail = false;
  let prev = 'ab'.repeat(32);
  for (let h = 1; h <= n; h++) {
    const b = { environment: env, height: h, prev_hash: prev, merkle_root: h.toString(16).padStart(64, '0'), tx_count: 1,
      sealed_at: `2026-11-27T10:${String(h).padStart(2, '0')}:00.5Z`, version: 2 };
    await seal(b);
    market.blocks.set(h, b);
    prev = b.hash;
  }
}

function anchor(h, raw, cluster = 'custom') {
  market.blocks.get(h).anchor = { signature: base58Encode(raw.subarray(1, 65)), slot: 777, cluster };
  market.anchoredBlock = h;
  rpc.raw = raw;
}

async function anchored(env = 'devnet', at = 7, { v0 = false, cluster = 'custom' } = {}) {
  await ledger(env);
  anchor(at, await signed(message(anchorMemo(market.blocks.get(at)), { v0 })), cluster);
}

const json = (res, status, body) => {
  res.writeHead(status, { 'Content-Type': 'application/json' });
  res.end(JSON.stringify(body));
};
const server = createServer((req, res) => {
  const chunks = [];
  req.on('data', (c) => chunks.push(c)).on('end', () => {
    if (req.method === 'POST') {
      const call = JSON.parse(Buffer.concat(chunks).toString());
      rpc.calls.push(call.method);
      let result = null;
      if (call.method === 'getGenesisHash') result = rpc.genesis;
      else if (call.method === 'getTransaction' && rpc.raw) {
        assert.deepEqual(call.params[1], { encoding: 'base64', maxSupportedTransactionVersion: 0, commitment: 'finalized' });
        result = { slot: rpc.slot, meta: { err: rpc.err }, transaction: [Buffer.from(rpc.raw).toString('base64'), 'base64'] };
      }
      return json(res, 200, { jsonrpc: '2.0', id: call.id, result });
    }
    if (req.url === '/v1/reserves') {
      if (market.reservesFail) return json(res, 503, { error: { code: 'chain_unavailable', message: 'the chain does not answer' } });
      return json(res, 200, { reserves: market.anchoredBlock ? [{ environment: market.env, anchored_block: market.anchoredBlock }] : [] });
    }
    const m = /^\/v1\/ledger\/(\w+)\/blocks\/(\d+)$/.exec(req.url);
    const b = m && m[1] === market.env && market.blocks.get(Number(m[2]));
    if (!b) return json(res, 404, { error: { code: 'block_not_found', message: 'no such block' } });
    json(res, 200, { block: b, transaction_hashes: [], transactions: [] });
  });
});

let base, client;
before(async () => {
  treasury = await generateSigningKey();
  authority = await generateSigningKey();
  await new Promise((r) => server.listen(0, '127.0.0.1', r));
  base = `http://127.0.0.1:${server.address().port}`;
  client = new Client(base);
});
after(() => new Promise((r) => server.close(r)));
beforeEach(() => Object.assign(rpc, { genesis: DEVNET_GENESIS_HASH, slot: 777, err: null }));

// Step 8 from block start of the ledger served, with the ledger authority's key.
async function walk(start, { key = authority.publicKey, solanaRPC = base + '/rpc' } = {}) {
  rpc.calls = [];
  return verifyAnchor(client, structuredClone(market.blocks.get(start)), key, { solanaRPC });
}
const failed = (r) => Object.fromEntries(r.checks.filter((c) => !c.ok).map((c) => [c.name, c.detail]));

test('an anchor is followed through the hash chain, legacy and v0', async () => {
  for (const v0 of [false, true]) {
    await anchored('devnet', 7, { v0 });
    const tx = parseSolanaTransaction(rpc.raw);
    assert.deepEqual([tx.version, tx.keys.length, tx.instructions.length], [v0 ? 0 : -1, 3, 1]);
    let r = await walk(5);
    assert.ok(r.ok, JSON.stringify(r));
    assert.deepEqual(r.checks.map((c) => c.name), ['hash chain', 'anchor']);
    assert.match(r.checks[0].detail, /blocks 5 to 7 each name the one before/);
    assert.equal(r.anchor, ANCHORED);
    assert.equal(r.anchoredBlock, 7);
    assert.deepEqual(r.anchoredBy, market.blocks.get(7).anchor);
    // A devnet block's anchor is read without asking the genesis.
    assert.deepEqual(rpc.calls, ['getTransaction']);
    r = await walk(7);
    assert.ok(r.ok, JSON.stringify(r));
    assert.equal(r.checks[0].detail, 'block 7 is anchored itself');
  }
});

test("a mainnet block's anchor counts only on Solana mainnet, known by its genesis hash", async () => {
  await anchored('mainnet', 7, { cluster: 'mainnet-beta' });
  rpc.genesis = DEVNET_GENESIS_HASH;
  let r = await walk(6);
  assert.deepEqual(Object.keys(failed(r)), ['anchor'], JSON.stringify(r));
  assert.match(failed(r).anchor, /must be on Solana mainnet/);
  assert.equal(r.anchor, undefined);
  // Refused before the transaction is read.
  assert.deepEqual(rpc.calls, ['getGenesisHash']);

  rpc.genesis = MAINNET_GENESIS_HASH;
  r = await walk(6);
  assert.ok(r.ok, JSON.stringify(r));
  assert.equal(r.anchor, ANCHORED);
  assert.deepEqual(rpc.calls, ['getGenesisHash', 'getTransaction']);
});

test('an anchor that does not hold is refused', async () => {
  await anchored();
  const good = rpc.raw;
  const stranger = { treasury: await generateSigningKey(), authority: await generateSigningKey() };
  const forged = Uint8Array.from(good);
  forged[70] ^= 1;
  const memo = (h) => anchorMemo(market.blocks.get(h));
  const cases = {
    'a failed transaction': { err: { InstructionError: [0, 'Custom'] } },
    'another slot': { slot: 778 },
    "another block's memo": { raw: await signed(message(memo(6))) },
    'the memo signed by the treasury alone': { raw: await signed(message(memo(7), { memoSigner: 0 })) },
    'a forged authority signature': { raw: forged },
    'the memo of another authority': { raw: await signed(message(memo(7), { keys: stranger }), stranger) },
    'a truncated transaction': { raw: good.subarray(0, good.length - 1) },
    'a transaction the cluster does not have': { raw: undefined },
  };
  for (const [name, change] of Object.entries(cases)) {
    Object.assign(rpc, { raw: good, slot: 777, err: null }, change);
    // The anchor names the transaction's own first signature.
    if (rpc.raw) market.blocks.get(7).anchor.signature = base58Encode(rpc.raw.subarray(1, 65));
    const r = await walk(5);
    assert.deepEqual(Object.keys(failed(r)), ['anchor'], `${name}: ${JSON.stringify(r)}`);
    assert.equal(r.anchor, undefined, name);
  }
  // A "custom" cluster has no public endpoint: without solanaRPC the
  // anchor is not read, which is no failure (the Go client says the same).
  const r = await walk(5, { solanaRPC: '' });
  assert.ok(r.ok, JSON.stringify(r));
  assert.equal(r.anchor, ANCHOR_NOT_CHECKED);
  assert.equal(r.anchoredBlock, 7);
  assert.match(r.anchorDetail, /not read: give its Solana RPC URL/);
  assert.deepEqual(rpc.calls, []);
});

test('a broken hash chain is refused', async () => {
  await anchored();
  market.blocks.get(6).prev_hash = 'cd'.repeat(32);
  await seal(market.blocks.get(6));
  assert.match(failed(await walk(5))['hash chain'], /block 6's prev_hash/);
  assert.deepEqual(rpc.calls, []);

  await anchored();
  await seal(market.blocks.get(6), await generateSigningKey());
  assert.match(failed(await walk(5))['hash chain'], /block 6's signature does not verify/);

  await anchored();
  market.blocks.get(6).tx_count = 2;
  assert.match(failed(await walk(5))['hash chain'], /block 6 does not hash to its hash/);

  // The marketplace reports an anchored block that serves none.
  await anchored();
  delete market.blocks.get(7).anchor;
  assert.match(failed(await walk(5))['hash chain'], /no block from 5 to it serves an anchor/);
});

test('not anchored yet is said, and no failure', async () => {
  // No chain for the environment.
  await ledger('devnet');
  let r = await walk(5);
  assert.deepEqual([r.ok, r.checks, r.anchor], [true, [], NOT_ANCHORED_YET]);
  assert.match(r.anchorDetail, /the devnet ledger is not anchored on Solana/);
  // Anchored only below the execution's block.
  await anchored('devnet', 3);
  r = await walk(5);
  assert.deepEqual([r.ok, r.anchor], [true, NOT_ANCHORED_YET]);
  assert.match(r.anchorDetail, /from 5 on/);
  // Without GET /v1/reserves the walk reads up to the newest block.
  await ledger('devnet');
  market.reservesFail = true;
  r = await walk(5);
  assert.deepEqual([r.ok, r.anchor], [true, NOT_ANCHORED_YET]);
  assert.match(r.anchorDetail, /from 5 to 9/);
  assert.deepEqual(rpc.calls, []);
});

test('the wire format refuses truncations, trailing bytes and long compact-u16', async () => {
  const raw = await signed(message('crtx:devnet:1:00', { v0: true }));
  parseSolanaTransaction(raw);
  for (let n = 0; n < raw.length; n++) assert.throws(() => parseSolanaTransaction(raw.subarray(0, n)), undefined, `${n} of ${raw.length} bytes`);
  assert.throws(() => parseSolanaTransaction(Uint8Array.from([...raw, 0])), /after the message/);
  assert.throws(() => parseSolanaTransaction(Uint8Array.of(0x80, 0x00)), /shortest form/);
});
