// The listing statement (docs/creators.md, "The listing statement"): what
// the creator's wallet and the agent's signing key both sign to register
// the key, and what a verifier rebuilds from a listing transaction's data.

import { canonicalize } from './canonical.js';

const MEMBERS = {
  AgentListed: ['creator', 'name', 'price_per_call_usdc', 'signing_public_key', 'listing_nonce', 'marketplace'],
  ListingUpdated: ['agent_id', 'creator', 'signing_public_key', 'listing_nonce', 'marketplace', 'replaces'],
};
const METERED = ['pricing_model', 'price_per_1k_tokens_usdc', 'max_price_per_call_usdc'];
// Listings written before nonces, marketplaces and key transactions were required lack them.
const OPTIONAL = new Set(['listing_nonce', 'marketplace', 'replaces']);

/**
 * The statement of a listing transaction of kind AgentListed or
 * ListingUpdated, from its data (all strings), as the text both sign.
 */
export function listingStatement(kind, data) {
  let members = MEMBERS[kind];
  if (!members) throw new Error(`a ${kind} transaction registers no signing key`);
  // A metered listing's prices are all signed.
  if (kind === 'AgentListed' && data.pricing_model === 'metered') members = [...members, ...METERED];
  const s = { kind };
  for (const m of members) {
    if (data[m] === undefined && OPTIONAL.has(m)) continue;
    if (typeof data[m] !== 'string') throw new Error(`the listing statement needs ${m} as a string`);
    s[m] = data[m];
  }
  return canonicalize(s);
}

/**
 * Signs a listing body in place for the wallet and the agent's signing key:
 * a new listing (agentId omitted) or a change of key (agentId and, in
 * params, replaces). params must hold listing_nonce and marketplace, from
 * POST /v1/creator/listing-nonces.
 */
export async function signListing(params, { wallet, agentKey, agentId }) {
  if (params.signing_public_key === undefined) params.signing_public_key = agentKey.publicKey;
  if (params.signing_public_key !== agentKey.publicKey) {
    throw new Error(`the agent key is ${agentKey.publicKey}, not the listing's signing_public_key ${params.signing_public_key}`);
  }
  const data = {
    creator: wallet.publicKey, signing_public_key: params.signing_public_key,
    listing_nonce: params.listing_nonce, marketplace: params.marketplace,
  };
  let kind = 'AgentListed';
  if (agentId) {
    kind = 'ListingUpdated';
    Object.assign(data, { agent_id: agentId, replaces: params.replaces });
  } else {
    Object.assign(data, { name: String(params.name ?? '').trim(), price_per_call_usdc: String(params.price_per_call_usdc) });
    if (params.pricing_model === 'metered') {
      Object.assign(data, { pricing_model: 'metered', price_per_1k_tokens_usdc: String(params.price_per_1k_tokens_usdc),
        max_price_per_call_usdc: String(params.max_price_per_call_usdc) });
    }
  }
  const statement = listingStatement(kind, data);
  params.creator_signature = await wallet.sign(statement);
  params.key_signature = await agentKey.sign(statement);
  return params;
}
