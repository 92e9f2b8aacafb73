// The creator handler, served by Node's http and called through the Fetch
// API, with the test playing the marketplace (its requests signed as
// docs/creators.md says).
import assert from 'node:assert/strict';
import { createServer } from 'node:http';
import { test } from 'node:test';
import { createHandler, generateSigningKey, resultHash, signRequest, signUsage, verifySignature } from '@crtx-market/sdk';

const market = await generateSigningKey();
const agentKey = await generateSigningKey();

async function signed(body, { key = market, agentId = 'agt_one', signingKey = agentKey.publicKey, environment = 'devnet', test = false, ts } = {}) {
  const timestamp = String(ts ?? Math.floor(Date.now() / 1000));
  const text = JSON.stringify(body);
  const headers = { 'Content-Type': 'application/json', 'X-Crtx-Timestamp': timestamp, 'X-Crtx-Signing-Key': signingKey, 'X-Crtx-Environment': environment };
  if (agentId) headers['X-Crtx-Agent-Id'] = agentId;
  if (test) headers['X-Crtx-Test'] = 'true';
  headers['X-Crtx-Signature'] = await signRequest(key, { agentId, signingKey, environment, test }, timestamp, text);
  return { method: 'POST', headers, body: text };
}

const request = (id, timeout = 30) => ({ execution_id: id, task: 'hello', parameters: { n: 1 }, user_pubkey: 'U', timeout_seconds: timeout });

// serve runs h on Node's http until the test ends and returns its URL.
async function serve(t, h) {
  const server = createServer(h.node);
  await new Promise((r) => server.listen(0, '127.0.0.1', r));
  t.after(() => new Promise((r) => server.close(r)));
  return `http://127.0.0.1:${server.address().port}/execute`;
}

test('a completed reply is hashed and signed, and a repeated execution id gets the first answer', async (t) => {
  let runs = 0;
  const h = createHandler(agentKey, async (r) => {
    runs++;
    await new Promise((ok) => setTimeout(ok, 50));
    return { result: `${r.task} from ${r.agentId} on ${r.environment}, ${JSON.stringify(r.parameters)}`, tokensUsed: 7 };
  }, { marketplaceKey: market.publicKey, agentIds: ['agt_one'] });
  const url = await serve(t, h);
  const req = await signed(request('e1'));
  const [a, b] = await Promise.all([fetch(url, req), fetch(url, req)]);
  const [ta, tb] = [await a.text(), await b.text()];
  assert.equal(a.status, 200);
  assert.equal(ta, tb);
  const reply = JSON.parse(ta);
  assert.equal(reply.status, 'completed');
  assert.equal(reply.result, 'hello from agt_one on devnet, {"n":1}');
  assert.equal(reply.tokens_used, 7);
  assert.equal(reply.result_hash, await resultHash(reply.result));
  // The tokens are signed: a metered listing is charged from them.
  assert.equal(reply.usage_signature, await signUsage(agentKey, 'e1', reply.result_hash, 7));
  assert.ok(await verifySignature(agentKey.publicKey, reply.result_hash, reply.signature));
  assert.ok(reply.signature.startsWith('ed25519:'));
  assert.equal((await (await fetch(url, req)).text()), ta);
  assert.equal(runs, 1);
});

test('an exception and a deadline answer failed, the deadline before timeout_seconds', async () => {
  const h = createHandler(agentKey, async (r, signal) => {
    if (r.task === 'crash') throw new Error('no such file');
    await new Promise((ok) => signal.addEventListener('abort', ok));
    return 'too late';
  }, { marketplaceKey: market.publicKey });
  const crash = await h.fetch(new Request('http://agent/execute', await signed({ ...request('e2'), task: 'crash' })));
  assert.deepEqual(await crash.json(), { execution_id: 'e2', status: 'failed', result: null, result_hash: null, signature: null, error: 'no such file' });
  const start = Date.now();
  const slow = await (await h.fetch(new Request('http://agent/execute', await signed(request('e3', 1))))).json();
  const took = Date.now() - start;
  assert.equal(slow.status, 'failed');
  assert.match(slow.error, /did not finish within 0.8 s/);
  assert.ok(took >= 750 && took < 1000, `answered after ${took} ms`);
});

test('requests the marketplace did not sign, or signed for someone else, are refused', async (t) => {
  const other = await generateSigningKey();
  const h = createHandler(agentKey, () => 'done', { marketplaceKey: market.publicKey, agentIds: ['agt_one'] });
  const url = await serve(t, h);
  const cases = [
    [401, await signed(request('r1'), { key: other }), /does not verify/],
    [401, await signed(request('r2'), { ts: Math.floor(Date.now() / 1000) - 600 }), /too far from now/],
    [403, await signed(request('r3'), { signingKey: other.publicKey }), /another signing key/],
    [403, await signed(request('r4'), { agentId: '' }), /must be a test/],
    [403, await signed(request('r5'), { agentId: 'agt_two' }), /another agent/],
    [403, await signed(request('r6'), { environment: 'testnet' }), /neither mainnet nor devnet/],
  ];
  for (const [status, req, message] of cases) {
    const res = await fetch(url, req);
    assert.equal(res.status, status);
    assert.match((await res.json()).error, message);
  }
  // A changed header fails the signature.
  const req = await signed(request('r7'));
  req.headers['X-Crtx-Environment'] = 'mainnet';
  assert.equal((await fetch(url, req)).status, 401);
  // A test naming no agent is served.
  const ok = await fetch(url, await signed(request('r8'), { agentId: '', test: true }));
  assert.equal((await ok.json()).status, 'completed');
  assert.throws(() => createHandler(agentKey, () => 'x'), /needs marketplace/);
});

// readEvents reads a Server-Sent Events body into [{event, data}].
function readEvents(text) {
  return text.split('\n\n').filter(Boolean).map((block) => {
    const e = {};
    for (const line of block.split('\n')) {
      const [field, ...rest] = line.split(': ');
      e[field] = rest.join(': ');
    }
    return e;
  });
}

test('a streaming agent sends each piece as it comes, then the result signed over them joined', async (t) => {
  let release;
  const held = new Promise((r) => { release = r; });
  const h = createHandler(agentKey, async function* (r) {
    yield 'Bon';
    await held; // the test reads the first piece before the agent writes the next
    yield 'jour, ';
    yield r.task;
    return { tokensUsed: 3 };
  }, { marketplaceKey: market.publicKey });
  const url = await serve(t, h);
  const req = await signed(request('s1'));
  const res = await fetch(url, { ...req, headers: { ...req.headers, Accept: 'application/json, text/event-stream' } });
  assert.equal(res.headers.get('content-type'), 'text/event-stream');
  const reader = res.body.getReader();
  const first = new TextDecoder().decode((await reader.read()).value);
  assert.match(first, /event: delta\ndata: \{"text":"Bon"\}/);
  release();
  let rest = '';
  for (let chunk = await reader.read(); !chunk.done; chunk = await reader.read()) rest += new TextDecoder().decode(chunk.value);
  const events = readEvents(first + rest);
  assert.deepEqual(events.filter((e) => e.event === 'delta').map((e) => JSON.parse(e.data).text), ['Bon', 'jour, ', 'hello']);
  const reply = JSON.parse(events.at(-1).data);
  assert.equal(events.at(-1).event, 'result');
  assert.equal(reply.result, 'Bonjour, hello');
  assert.equal(reply.tokens_used, 3);
  assert.equal(reply.result_hash, await resultHash('Bonjour, hello'));
  assert.ok(await verifySignature(agentKey.publicKey, reply.result_hash, reply.signature));

  // The retry gets the first answer, whole, as JSON; so does a request that does not accept a stream.
  const again = await fetch(url, { ...req, headers: { ...req.headers, Accept: 'text/event-stream' } });
  assert.equal(again.headers.get('content-type'), 'application/json');
  assert.deepEqual(JSON.parse(await again.text()), reply);
});

test('a result returned whole streams as one piece, through the Fetch API too', async () => {
  const h = createHandler(agentKey, async (r) => `whole ${r.task}`, { marketplaceKey: market.publicKey });
  const req = await signed(request('s2'));
  const res = await h.fetch(new Request('http://agent/execute', { ...req, headers: { ...req.headers, Accept: 'text/event-stream' } }));
  const events = readEvents(await res.text());
  assert.deepEqual(events.map((e) => e.event), ['delta', 'result']);
  assert.equal(JSON.parse(events[0].data).text, 'whole hello');
  assert.equal(JSON.parse(events[1].data).result, 'whole hello');
});

test('a metered listing signs its tokens, 0 too, and its function is told the most tokens the hold pays for', async (t) => {
  const h = createHandler(agentKey, async (r) => `at most ${r.maxTokens}`, { marketplaceKey: market.publicKey, metered: true });
  const url = await serve(t, h);
  const reply = await (await fetch(url, await signed({ ...request('m1'), max_tokens: 1200 }))).json();
  assert.equal(reply.result, 'at most 1200');
  assert.equal(reply.tokens_used, 0);
  assert.equal(reply.usage_signature, await signUsage(agentKey, 'm1', reply.result_hash, 0));
});

test('a marketplace rotating its key: its keys accepted across the switch, read again hourly, and on an unknown key once a minute at most', async () => {
  const next = await generateSigningKey();
  let published = { signing_public_key: market.publicKey, next_signing_public_key: next.publicKey };
  let reads = 0, down = false;
  const fakeFetch = async () => {
    reads++;
    if (down) throw new Error('connection refused');
    return new Response(JSON.stringify(published), { headers: { 'Content-Type': 'application/json' } });
  };
  let clock = Date.now();
  const h = createHandler(agentKey, () => 'ok', { marketplace: 'http://market.example', fetch: fakeFetch, now: () => clock });
  const status = async (id, key) => (await h.fetch(new Request('http://agent/execute', await signed(request(id), { key, ts: Math.floor(clock / 1000) })))).status;
  assert.equal(await status('r1', market), 200);
  assert.equal(await status('r2', next), 200); // a replica switched already
  published = { signing_public_key: next.publicKey }; // the switch is done
  assert.equal(await status('r3', next), 200);
  assert.equal(reads, 1);

  // A handler that read the old key alone follows the switch by reading again,
  // but not more than once a minute for signatures that verify against nothing.
  const newer = await generateSigningKey();
  published = { signing_public_key: newer.publicKey };
  assert.equal(await status('r4', newer), 401); // read a moment ago
  assert.equal(reads, 1);
  clock += 61_000;
  assert.equal(await status('r5', newer), 200);
  assert.equal(reads, 2);
  assert.equal(await status('r6', await generateSigningKey()), 401);
  assert.equal(reads, 2);

  // An hour on, the keys are read again: the previous key, which replicas
  // not switched yet sign with, is accepted; a read that fails keeps them.
  published = { signing_public_key: newer.publicKey, previous_signing_public_key: next.publicKey };
  clock += 3_600_001;
  assert.equal(await status('r7', next), 200);
  assert.equal(reads, 3);
  down = true;
  clock += 3_600_001;
  assert.equal(await status('r8', newer), 200);
  assert.equal(reads, 4);
  assert.equal(await status('r9', await generateSigningKey()), 401); // no read within the minute
  assert.equal(reads, 4);
});
