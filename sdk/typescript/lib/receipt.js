// The marketplace's signed receipt of an execution (docs/verify.md, step 7),
// checked from its bytes as served.

import { canonicalize, without } from './canonical.js';
import { verifySignature } from './keys.js';

const MEMBERS = ['version', 'issuer', 'execution_id', 'environment', 'wallet', 'agent_id', 'status', 'cost_usdc',
  'creator_amount_usdc', 'platform_amount_usdc', 'refunded_usdc', 'result_hash', 'creator_signature', 'signing_public_key',
  'listing_transaction', 'ledger_transaction', 'initiated_at', 'completed_at', 'payment', 'signature'];

// The member names of the object that text (known to parse) is, in order,
// repeats included: JSON.parse keeps only the last of two.
function memberNames(text) {
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

/**
 * Checks a receipt's text offline against the marketplace's base58 signing
 * key and resolves to what it states; rejects a receipt with a member not in
 * its layout, a name given twice (in any case), or a signature that does
 * not verify over its RFC 8785 form without signature.
 */
export async function verifyReceipt(text, marketplaceKey) {
  const receipt = JSON.parse(text);
  if (receipt === null || typeof receipt !== 'object' || Array.isArray(receipt)) throw new Error('the receipt is not a JSON object');
  const names = memberNames(text);
  const odd = names.filter((n, k) => !MEMBERS.includes(n) || names.findIndex((m) => m.toLowerCase() === n.toLowerCase()) !== k);
  if (odd.length) throw new Error(`the receipt has members not in its layout, or repeated: ${odd.join(', ')}`);
  if (typeof receipt.signature !== 'string' || !receipt.signature.startsWith('ed25519:')) throw new Error("the receipt's signature lacks the ed25519: prefix");
  if (!(await verifySignature(marketplaceKey, canonicalize(without(receipt, 'signature')), receipt.signature))) {
    throw new Error("the receipt's signature does not verify against the marketplace key");
  }
  return receipt;
}
