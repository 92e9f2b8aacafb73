// crtx SDK for JavaScript and TypeScript: the creator side (a handler for
// the marketplace's requests) and the caller side (Client).

export { base58Decode, base58Encode } from './lib/base58.js';
export { canonicalize } from './lib/canonical.js';
export { cidOf } from './lib/cid.js';
export { Client } from './lib/client.js';
export { createHandler, InvalidInput } from './lib/creator.js';
export { CrtxError } from './lib/errors.js';
export { fetchHandler } from './lib/fetch.js';
export { generateSigningKey, signingKey, signingKeyFromFile, verifySignature } from './lib/keys.js';
export { accountAddress, blockHash, proofProblem, transactionHash } from './lib/ledger.js';
export { listingStatement, signListing } from './lib/listing.js';
export { cachedMarketplaceKey, cachedMarketplaceKeys, fetchMarketplaceKey, fetchMarketplaceKeys } from './lib/marketplace-key.js';
export { nodeListener } from './lib/node-http.js';
export { requestSigningBytes, resultHash, signRequest, signResult, signUsage, usageStatement, verifyRequestSignature } from './lib/protocol.js';
export { verifyReceipt } from './lib/receipt.js';
export { MAINNET_GENESIS_HASH, MEMO_PROGRAM, anchorMemo, anchorProblem, parseSolanaTransaction } from './lib/solana.js';
export { ANCHORED, ANCHOR_NOT_CHECKED, NOT_ANCHORED_YET, verifyAnchor } from './lib/verify.js';
