"""The marketplace's signed receipts, checked offline (docs/verify.md, step 7)."""

import json

from .canonical import canonical
from .keys import verify_signature

RECEIPT_MEMBERS = ("version", "issuer", "execution_id", "environment", "wallet", "agent_id", "status", "cost_usdc",
                   "creator_amount_usdc", "platform_amount_usdc", "refunded_usdc", "result_hash",
                   "creator_signature", "signing_public_key", "listing_transaction", "ledger_transaction",
                   "initiated_at", "completed_at", "payment", "signature")


def verify_receipt(data: bytes, marketplace_key: str) -> dict:
    """Checks a receipt as received against the marketplace's signing key and
    returns what it states; ValueError says what is wrong. A member the
    receipt does not have, or a name given twice (in any case), is refused:
    the signature would cover members that readers may take differently."""
    pairs = json.loads(data, object_pairs_hook=lambda p: p)
    if not isinstance(pairs, list):
        raise ValueError("the receipt is not a JSON object")
    seen = set()
    for name, _ in pairs:
        if name not in RECEIPT_MEMBERS or name.lower() in seen:
            raise ValueError(f"the receipt has an unknown or repeated member {name!r}")
        seen.add(name.lower())
    receipt = json.loads(data)
    sig = receipt.get("signature")
    if not isinstance(sig, str) or not sig.startswith("ed25519:"):
        raise ValueError("the receipt's signature lacks the ed25519: prefix")
    signed = canonical({k: v for k, v in receipt.items() if k != "signature"})
    if not verify_signature(marketplace_key, signed, sig):
        raise ValueError("the receipt's signature does not verify against the marketplace key")
    return receipt
