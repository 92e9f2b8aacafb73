// The worked examples of docs/creators.md, signed and checked by the SDK.
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { test } from 'node:test';
import { listingStatement, resultHash, signingKey, signListing, signRequest, signUsage, usageStatement, verifyRequestSignature } from '@crtx-market/sdk';

const seed = (b) => new Uint8Array(32).fill(b);

test('the request signature of docs/creators.md', async () => {
  const market = await signingKey(seed(3));
  assert.equal(market.publicKey, 'GyGKxMyg1p9SsHfm15MkNUu1u9TN2JtTspcdmrtGUdse');
  const scope = { agentId: 'agt_8zmONHevjO0ED8RI', signingKey: '9hSR6S7WPtxmTojgo6GG3k4yDPecgJY292j7xrsUGWBu', environment: 'mainnet', test: false };
  const body = '{"execution_id":"e1","task":"hi","parameters":{},"user_pubkey":"U","timeout_seconds":60}';
  const sig = await signRequest(market, scope, '1700000000', body);
  assert.equal(sig, 'ed25519:5qsstjTAMLcq3BYU9hHeo4WLaBefBuE1Yk8TC2JJYxAUmBVZSe5upmz5PsL7dpAwjf6yFqHY1DQoSWVZduX3YR53');
  assert.ok(await verifyRequestSignature(market.publicKey, scope, '1700000000', body, sig));
  // Each signed field counts: another environment, test flag or body fails.
  assert.ok(!(await verifyRequestSignature(market.publicKey, { ...scope, environment: 'devnet' }, '1700000000', body, sig)));
  assert.ok(!(await verifyRequestSignature(market.publicKey, { ...scope, test: true }, '1700000000', body, sig)));
  assert.ok(!(await verifyRequestSignature(market.publicKey, scope, '1700000000', body + ' ', sig)));
});

test('the listing statement of docs/creators.md', async () => {
  const wallet = await signingKey(seed(1));
  const agentKey = await signingKey(seed(2));
  assert.equal(wallet.publicKey, 'AKnL4NNf3DGWZJS6cPknBuEGnVsV4A4m5tgebLHaRSZ9');
  const params = { name: ' Word counter ', price_per_call_usdc: 0.05, listing_nonce: 'lst_4fQx9ZbT2mKpW7sLrN3vYc', marketplace: 'crtx.example.com' };
  await signListing(params, { wallet, agentKey });
  assert.equal(params.signing_public_key, '9hSR6S7WPtxmTojgo6GG3k4yDPecgJY292j7xrsUGWBu');
  assert.equal(params.creator_signature, '4o25uJmrJEQbHLFgA2HzoFhUmLkc4AprU6m18UeWfGhEYZ6mUMQiYoPPGsZgrvcZKsmJojSQj33tE6EREKch1gmq');
  assert.equal(params.key_signature, 'YjDLAxbNWVn3i5TnVfK52GJwbR6DNESfo3idFqDpnAwPhASYdBpN4iEQk7jsN5RYN7K3rcCjYtppYChCSdYcWFX');

  const change = { signing_public_key: agentKey.publicKey, listing_nonce: 'lst_8HdN2kVq5TzR1wLmXp7bJe', marketplace: 'crtx.example.com', replaces: '3FZbgi29cpjq2GjdwV8eyHuJJnkLtktZc5' };
  await signListing(change, { wallet, agentKey, agentId: 'agt_8zmONHevjO0ED8RI' });
  assert.equal(change.creator_signature, '4BBpMvqPyYo6y9aXASoWNMZq4VTYkzkTGopsLGRR3KfgDpMpTfycrSXoD3EKjHbEyyuTsNjhp8896pKKb3XvFz6Y');
  assert.equal(change.key_signature, '4jZ7emfPtT3mcnsZm99XN2ZvggLSDW5azqdxqEegM5LxuutcFgumM5Z7qbjoZzhndwUmHVNdLPjEUGwJuVtszwGU');
  assert.throws(() => listingStatement('AgentDelisted', {}), /registers no signing key/);
});

test('the result hash is sha256: and the hex digest of the UTF-8 bytes', async () => {
  assert.equal(await resultHash(''), 'sha256:e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855');
  assert.equal(await resultHash('é'), 'sha256:' + createHash('sha256').update(Buffer.from([0xc3, 0xa9])).digest('hex'));
});

test('the usage statement of docs/creators.md', async () => {
  const id = '01a2367e-0871-71f3-9730-8341caea378f';
  const hash = 'sha256:2cf24dba5fb0a30e26e83b2ac5b9e29e1b161e5c1fa7425e73043362938b9824';
  assert.equal(usageStatement(id, hash, 1234), `crtx-usage-v1\n${id}\n${hash}\n1234`);
  assert.equal(await signUsage(await signingKey(seed(0)), id, hash, 1234),
    'ed25519:41qsc12ym9JRV5yy6gGtuwuSg3XkoxZcEBdMYsP5FB4CE7BHb56ut2Bqr3drNdr1Yc4CSshVBNTGgF1bmY8jtEBv');
});

test('a metered listing signs all three prices', async () => {
  const wallet = await signingKey(seed(1));
  const agentKey = await signingKey(seed(2));
  const params = { name: 'Word counter', pricing_model: 'metered', price_per_call_usdc: 0.001, price_per_1k_tokens_usdc: 0.0025,
    max_price_per_call_usdc: 0.5, listing_nonce: 'lst_4fQx9ZbT2mKpW7sLrN3vYc', marketplace: 'crtx.example.com' };
  await signListing(params, { wallet, agentKey });
  const statement = listingStatement('AgentListed', { creator: wallet.publicKey, name: 'Word counter', price_per_call_usdc: '0.001',
    signing_public_key: agentKey.publicKey, listing_nonce: params.listing_nonce, marketplace: params.marketplace,
    pricing_model: 'metered', price_per_1k_tokens_usdc: '0.0025', max_price_per_call_usdc: '0.5' });
  assert.match(statement, /"max_price_per_call_usdc":"0.5"/);
  assert.equal(params.creator_signature, await wallet.sign(statement));
});
