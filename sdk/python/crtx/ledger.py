"""The ledger's hashes and proofs (docs/ledger.md, "Hashes"; docs/verify.md)."""

import base64
import calendar
import hashlib
import math
import re

from . import base58
from .canonical import canonical
from .keys import verify_signature


def sha256(*parts: bytes) -> bytes:
    h = hashlib.sha256()
    for p in parts:
        h.update(p)
    return h.digest()


def transaction_canonical(tx: dict) -> bytes:
    """The bytes a transaction's hash covers, for its version."""
    if tx.get("version") == 2:
        return canonical({k: v for k, v in tx.items() if k not in ("seq", "block_height", "hash")})
    if tx.get("version") == 1:
        return _v1_transaction(tx).encode("utf-8")
    raise ValueError(f"unknown transaction version {tx.get('version')!r}")


def transaction_hash(tx: dict) -> str:
    return sha256(transaction_canonical(tx)).hex()


def block_canonical(block: dict) -> bytes:
    """The bytes a block's hash covers. anchor names the Solana transaction
    written after the block was signed: not part of its hash."""
    if block.get("version") == 2:
        return canonical({k: v for k, v in block.items() if k not in ("hash", "signature", "anchor")})
    if block.get("version") == 1:
        return _v1_block(block).encode("utf-8")
    raise ValueError(f"unknown block version {block.get('version')!r}")


def block_hash(block: dict) -> str:
    return sha256(block_canonical(block)).hex()


def merkle_leaf(tx_hash_hex: str) -> bytes:
    return sha256(b"\0", bytes.fromhex(tx_hash_hex))


def merkle_node(left: bytes, right: bytes) -> bytes:
    return sha256(b"\1", left, right)


def merkle_root(tx_hashes: list[str]) -> str:
    """The root over a block's transaction hashes; an odd node at the end of
    a level is carried up unchanged."""
    if not tx_hashes:
        raise ValueError("no leaves")
    level = [merkle_leaf(h) for h in tx_hashes]
    while len(level) > 1:
        nxt = [merkle_node(level[i], level[i + 1]) for i in range(0, len(level) - 1, 2)]
        if len(level) % 2:
            nxt.append(level[-1])
        level = nxt
    return level[0].hex()


_HEX64 = re.compile(r"[0-9a-f]{64}")


def proof_problem(proof: dict, tx: dict, authority: str) -> str | None:
    """What is wrong with an inclusion proof of tx (docs/verify.md, step 6),
    or None when it holds: the transaction hashes to the proven leaf, the
    path leads to the block's Merkle root, the block hashes to its hash and
    the ledger authority signed that hash."""
    computed = transaction_hash(tx)
    if computed != tx.get("hash"):
        return f"the transaction hashes to {computed}, not its served hash {tx.get('hash')}"
    if proof.get("transaction_hash") != computed:
        return "the transaction does not hash to the proven leaf"
    block = proof.get("block") or {}
    node = merkle_leaf(computed)
    for i, step in enumerate(proof.get("path") or []):
        h, pos = step.get("hash"), step.get("position")
        if not isinstance(h, str) or not _HEX64.fullmatch(h) or pos not in ("left", "right"):
            return f"proof step {i} is malformed"
        node = merkle_node(bytes.fromhex(h), node) if pos == "left" else merkle_node(node, bytes.fromhex(h))
    if node.hex() != block.get("merkle_root"):
        return "the path does not lead to the block's Merkle root"
    h = block_hash(block)
    if h != block.get("hash"):
        return "the block header does not hash to the block's hash"
    if not verify_signature(authority, bytes.fromhex(h), block.get("signature", "")):
        return "the block signature does not verify against the ledger authority key"
    return None


def account_address(kind: str, id_: str) -> str:
    """A ledger account's address: base58 of SHA-256 of "crtx:<kind>:<id>"."""
    return base58.encode(sha256(f"crtx:{kind}:{id_}".encode("utf-8")))


def cid(content: bytes) -> str:
    """The CIDv1 (raw, SHA-256) of a result's bytes, as its ipfs_url ends."""
    raw = bytes([0x01, 0x55, 0x12, 0x20]) + sha256(content)
    return "b" + base64.b32encode(raw).decode().lower().rstrip("=")


def listing_statement(kind: str, data: dict) -> bytes:
    """The statement a listing transaction's creator_signature and
    key_signature cover (docs/creators.md, "The listing statement"), with
    listing_nonce, marketplace and replaces only when data has them."""
    if kind == "AgentListed":
        names = ["creator", "name", "price_per_call_usdc", "signing_public_key"]
        if data.get("pricing_model") == "metered":
            # A metered listing's prices are all signed.
            names += ["pricing_model", "price_per_1k_tokens_usdc", "max_price_per_call_usdc"]
    elif kind == "ListingUpdated":
        names = ["agent_id", "creator", "signing_public_key"]
    else:
        raise ValueError(f"{kind} registers no key")
    stmt = {"kind": kind}
    for n in names:
        if not isinstance(data.get(n), str):
            raise ValueError(f"the listing transaction's data lacks {n}")
        stmt[n] = data[n]
    optional = ["listing_nonce", "marketplace"] + (["replaces"] if kind == "ListingUpdated" else [])
    for n in optional:
        if n in data:
            stmt[n] = data[n]
    return canonical(stmt)


def micros(amount) -> int:
    """An amount in USDC as served (a JSON number) in micro-USDC."""
    if isinstance(amount, bool) or not isinstance(amount, (int, float, str)):
        raise ValueError(f"not an amount: {amount!r}")
    return math.floor(float(amount) * 1e6 + 0.5)


# Version 1 (docs/ledger.md, end of "Hashes"): Go's encoding/json with a fixed
# member order, times in microseconds and amounts in micro-USDC.

def _go_string(s: str) -> str:
    out = ['"']
    for ch in s:
        c = ord(ch)
        if ch == '"':
            out.append('\\"')
        elif ch == "\\":
            out.append("\\\\")
        elif ch == "\n":
            out.append("\\n")
        elif ch == "\r":
            out.append("\\r")
        elif ch == "\t":
            out.append("\\t")
        elif c < 0x20 or ch in "<>&" or c in (0x2028, 0x2029):
            out.append(f"\\u{c:04x}")
        else:
            out.append(ch)
    out.append('"')
    return "".join(out)


_TIME = re.compile(r"(\d{4})-(\d\d)-(\d\d)T(\d\d):(\d\d):(\d\d)(?:\.(\d{1,9}))?Z")


def _micros_of_time(s) -> int:
    m = _TIME.fullmatch(str(s))
    if not m:
        raise ValueError(f"not an RFC 3339 UTC time: {s}")
    secs = calendar.timegm(tuple(int(g) for g in m.groups()[:6]))
    return secs * 1_000_000 + int((m.group(7) or "").ljust(6, "0")[:6])


def _v1_transaction(tx: dict) -> str:
    d = tx.get("data") or {}
    data = "{" + ",".join(_go_string(k) + ":" + _go_string(d[k]) for k in sorted(d, key=lambda k: k.encode())) + "}"
    postings = "[" + ",".join(
        f'{{"from":{_go_string(p["from"])},"to":{_go_string(p["to"])},"amount":{micros(p["amount_usdc"])}}}'
        for p in tx.get("postings") or []) + "]"
    accounts = "[" + ",".join(_go_string(a) for a in tx.get("accounts") or []) + "]"
    return (f'{{"id":{_go_string(tx["id"])},"environment":{_go_string(tx["environment"])},'
            f'"kind":{_go_string(tx["kind"])},"data":{data},"postings":{postings},"accounts":{accounts},'
            f'"created_at_us":{_micros_of_time(tx["created_at"])}}}')


def _v1_block(b: dict) -> str:
    return (f'{{"environment":{_go_string(b["environment"])},"height":{b["height"]},'
            f'"prev_hash":{_go_string(b["prev_hash"])},"merkle_root":{_go_string(b["merkle_root"])},'
            f'"tx_count":{b["tx_count"]},"sealed_at_us":{_micros_of_time(b["sealed_at"])}}}')
