// Against a real marketplace (sdk/typescript_test.go starts one and sets
// CRTX_URL, CRTX_API_KEY, CRTX_CREATOR_SEED): agents written with the SDK
// are listed, called sync and async, paid and verified by the SDK's caller
// side, which refuses a tampered result and a wrong key.
import assert from 'node:assert/strict';
import { createServer } from 'node:http';
import { after, before, test } from 'node:test';
import { Client, CrtxError, InvalidInput, NOT_ANCHORED_YET, createHandler, generateSigningKey, signingKey } from '@crtx-market/sdk';
import { inputSchema, wordCount } from '../examples/agent.js';

const { CRTX_URL: url, CRTX_API_KEY: apiKey, CRTX_CREATOR_SEED: seed, CI } = process.env;
const skip = !url && !CI ? 'set CRTX_URL, CRTX_API_KEY and CRTX_CREATOR_SEED (go test ./sdk does)' : false;

const servers = [];
after(() => Promise.all(servers.map((s) => new Promise((r) => s.close(r)))));

// serve runs a handler on Node's http on 127.0.0.1 and returns its URL.
async function serve(handler) {
  const server = createServer(handler.node);
  servers.push(server);
  await new Promise((r) => server.listen(0, '127.0.0.1', r));
  return `http://127.0.0.1:${server.address().port}/execute`;
}

const listing = (name, endpoint, extra = {}) => ({
  name, tagline: 'Counts the words of a text.', description: 'An agent written with the TypeScript SDK.', tags: ['writing'],
  input_schema: inputSchema, output_schema: { type: 'object' }, pricing_model: 'pay_per_use', price_per_call_usdc: 0.05,
  endpoint_url: endpoint, timeout_seconds: 30, ...extra,
});

let creator, caller, agentKey, agentId;
const seen = [];

before(async () => {
  if (skip) return;
  assert.ok(url && apiKey && seed, 'CRTX_URL, CRTX_API_KEY and CRTX_CREATOR_SEED must be set');
  creator = await Client.signIn(url, await signingKey(Buffer.from(seed, 'hex')));
  caller = new Client(url, apiKey);
  agentKey = await generateSigningKey();
  const handler = createHandler(agentKey, (r) => {
    seen.push(r);
    if (r.task === 'refuse') throw new InvalidInput('the task must name a file');
    return wordCount(r);
  }, { marketplace: url });
  const listed = await creator.createListing(listing('Word count (TypeScript)', await serve(handler)), { agentKey });
  agentId = listed.agent_id;
});

test('an agent written with the SDK is listed: reachability test, collateral, catalog', { skip }, async () => {
  const reach = seen.find((r) => r.test);
  assert.ok(reach, 'the marketplace sent no reachability test');
  assert.equal(reach.agentId, '');
  assert.equal(reach.environment, 'mainnet');
  assert.equal(reach.task, 'crtx reachability test');
  const mine = (await creator.request('GET', '/v1/creator/agents')).agents.find((a) => a.agent_id === agentId);
  assert.equal(mine.collateral_usdc, 10);
  assert.equal(mine.signing_public_key, agentKey.publicKey);
  for (let i = 0; ; i++) {
    const page = await caller.agents({ q: 'TypeScript', environment: 'devnet' });
    if (page.agents.some((a) => a.agent_id === agentId)) break;
    assert.ok(i < 50, 'the agent never appeared in the catalog');
    await new Promise((r) => setTimeout(r, 100));
  }
  assert.equal((await caller.agent(agentId)).name, 'Word count (TypeScript)');
});

test('sync and async executions are paid, listed and verified', { skip }, async () => {
  const sync = await caller.execute(agentId, { task: 'one two three\nfour', parameters: { per_line: true } });
  assert.equal(sync.status, 'completed');
  assert.equal(sync.result, '{"words":4,"lines":[3,1]}');
  assert.equal(sync.cost_usdc, 0.05);
  assert.ok(sync.creator_amount_usdc > 0 && sync.platform_amount_usdc > 0);
  assert.equal(seen.at(-1).agentId, agentId);
  assert.equal(seen.at(-1).environment, 'devnet');

  const accepted = await caller.execute(agentId, { task: 'a b', async: true });
  assert.equal(accepted.status, 'pending');
  const polled = await caller.wait(accepted.execution_id, { pollMs: 100 });
  assert.equal(polled.status, 'completed');
  assert.equal(polled.result, '{"words":2}');
  const waited = await caller.execute(agentId, { task: 'x', async: true }, { wait: true, pollMs: 100 });
  assert.equal(waited.result, '{"words":1}');

  // A retry with the same Idempotency-Key is the same execution, charged once.
  const again = await caller.execute(agentId, { task: 'a b', async: true }, { idempotencyKey: 'ts-sdk-retry' });
  const retried = await caller.execute(agentId, { task: 'a b', async: true }, { idempotencyKey: 'ts-sdk-retry' });
  assert.equal(retried.execution_id, again.execution_id);
  await caller.wait(again.execution_id, { pollMs: 100 });

  const ids = (await caller.executions({ agent_id: agentId, limit: 50 })).executions.map((e) => e.execution_id);
  for (const id of [sync.execution_id, accepted.execution_id, waited.execution_id, again.execution_id]) assert.ok(ids.includes(id), `${id} is not listed`);

  for (const id of [sync.execution_id, accepted.execution_id]) {
    const report = await caller.verify(id);
    assert.ok(report.ok, JSON.stringify(report.checks, null, 1));
    assert.deepEqual(report.checks.map((c) => c.name),
      ['final', 'result hash', 'content id', 'creator signature', 'listing key', 'ledger record', 'sealed in a block', 'receipt']);
    // The marketplace has no chain: the ledger is anchored nowhere, which is said and no failure.
    assert.equal(report.anchor, NOT_ANCHORED_YET);
    assert.match(report.anchorDetail, /the devnet ledger is not anchored on Solana/);
  }
});

// A client whose answers a man in the middle changes with alter(url, body text).
const tampered = (alter) => new Client(url, apiKey, {
  fetch: async (u, init) => {
    const res = await fetch(u, init);
    const text = alter(String(u), await res.text());
    return new Response(text, { status: res.status, headers: res.headers });
  },
});
const failed = (report) => report.checks.filter((c) => !c.ok).map((c) => c.name);

test('a tampered result and a wrong key are refused by verify', { skip }, async () => {
  const { execution_id: id } = await caller.execute(agentId, { task: 'the original result' });
  const content = tampered((u, text) => (u.includes('/ipfs/') ? text.replace('3', '4') : text));
  assert.deepEqual(failed(await content.verify(id)), ['result hash', 'content id']);

  const other = await generateSigningKey();
  const key = tampered((u, text) => (u.endsWith(`/v1/executions/${id}`) ? text.replace(agentKey.publicKey, other.publicKey) : text));
  const wrong = failed(await key.verify(id));
  assert.ok(wrong.includes('creator signature') && wrong.includes('listing key'), wrong.join(', '));

  const receipt = tampered((u, text) => (u.endsWith('/receipt') ? text.replace('"cost_usdc":0.05', '"cost_usdc":0.01') : text));
  assert.ok(failed(await receipt.verify(id)).includes('receipt'));
});

test('a service with the wrong key, or trusting another marketplace, fails the reachability test', { skip }, async () => {
  const otherKey = await generateSigningKey();
  // The service signs with agentKey, the listing registers otherKey: the service refuses (403) a request for another key.
  const service = await serve(createHandler(agentKey, wordCount, { marketplace: url }));
  await assert.rejects(creator.createListing(listing('Wrong key (TypeScript)', service), { agentKey: otherKey }),
    (e) => e instanceof CrtxError && e.code === 'endpoint_unreachable' && /403/.test(e.message));
  const impostor = await generateSigningKey();
  const trusting = await serve(createHandler(otherKey, wordCount, { marketplaceKey: impostor.publicKey }));
  await assert.rejects(creator.createListing(listing('Other marketplace (TypeScript)', trusting), { agentKey: otherKey }),
    (e) => e instanceof CrtxError && e.code === 'endpoint_unreachable' && /401/.test(e.message));
});

test('a refused input is the caller\'s: a 400 invalid_input, refunded', { skip }, async () => {
  const err = await caller.execute(agentId, { task: 'refuse' }).then(() => undefined, (e) => e);
  assert.ok(err instanceof CrtxError && err.status === 400 && err.code === 'invalid_input', `${err}`);
  assert.match(err.message, /the task must name a file/);
  const rec = await caller.execution(err.executionId);
  assert.equal(rec.status, 'failed');
  assert.equal(rec.refunded_usdc, rec.cost_usdc);
});

test('a slow handler answers failed before the deadline, and the caller is refunded', { skip }, async () => {
  const slowKey = await generateSigningKey();
  const handler = createHandler(slowKey, async (r, signal) => {
    if (r.test) return 'ready';
    await new Promise((resolve) => signal.addEventListener('abort', resolve));
    return 'too late';
  }, { marketplace: url });
  const { agent_id: slow } = await creator.createListing(listing('Slow (TypeScript)', await serve(handler), { timeout_seconds: 2 }), { agentKey: slowKey });
  const start = Date.now();
  const err = await caller.execute(slow, { task: 'wait' }).then(() => undefined, (e) => e);
  const took = Date.now() - start;
  assert.ok(err instanceof CrtxError && err.executionId, `the execution did not fail: ${err}`);
  assert.ok(took < 2000, `answered after ${took} ms, not before the 2 s timeout`);
  const rec = await caller.execution(err.executionId);
  assert.equal(rec.status, 'failed');
  assert.match(rec.error.message, /did not finish within 1.8 s/);
  assert.equal(rec.refunded_usdc, rec.cost_usdc);
  const report = await caller.verify(err.executionId);
  assert.ok(report.ok, JSON.stringify(report.checks, null, 1));
});

test('a streaming agent reaches a caller who asked for a stream as it writes, charged once the whole verifies', { skip }, async () => {
  const streamKey = await generateSigningKey();
  const handler = createHandler(streamKey, async function* (r) {
    if (r.test) {
      yield 'ready';
      return;
    }
    for (const word of r.task.split(' ')) yield `${word.toUpperCase()} `;
    return { tokensUsed: 2 };
  }, { marketplace: url });
  const { agent_id: streaming } = await creator.createListing(listing('Shouting (TypeScript)', await serve(handler)), { agentKey: streamKey });
  const res = await fetch(`${url}/v1/agents/${streaming}/execute`, {
    method: 'POST', headers: { Authorization: `Bearer ${apiKey}`, 'Content-Type': 'application/json' },
    body: JSON.stringify({ task: 'bon jour', stream: true }),
  });
  assert.equal(res.headers.get('content-type'), 'text/event-stream');
  const events = (await res.text()).split('\n\n').filter(Boolean).map((block) => Object.fromEntries(block.split('\n').map((l) => {
    const i = l.indexOf(': ');
    return [l.slice(0, i), l.slice(i + 2)];
  })));
  assert.deepEqual(events.filter((e) => e.event === 'delta').map((e) => JSON.parse(e.data).text), ['BON ', 'JOUR ']);
  const rec = JSON.parse(events.at(-1).data);
  assert.equal(events.at(-1).event, 'completed');
  assert.equal(rec.result, 'BON JOUR ');
  assert.equal(rec.tokens_used, 2);
  const report = await caller.verify(rec.execution_id);
  assert.ok(report.ok, JSON.stringify(report.checks, null, 1));
});
