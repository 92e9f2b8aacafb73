"""The anchor on Solana (docs/verify.md, step 8): the ledger authority's SPL
Memo naming a block, read from a Solana JSON-RPC endpoint, and the wire
format of a Solana transaction, read as far as checking an anchor needs. It
is written here rather than imported so that the SDK pulls in no Solana
library for the few dozen lines a verifier needs."""

import base64
import dataclasses
import json
import urllib.error
import urllib.request

from . import base58
from .keys import verify_signature

MEMO_PROGRAM = "MemoSq4gqABAXKb96qnH8TysNcWxMyWCqXgDLGmfcHr"
"""The SPL Memo program (v2): an anchor is its instruction's data, nothing before it."""

MAINNET_GENESIS_HASH = "5eykt4UsFv8P8NJdTREpY1vzqKqZKvdpKuc147dw2N9d"
"""Solana mainnet's genesis hash: the cluster every anchor of a mainnet ledger must be on."""

_DEFAULT_RPC = {
    "mainnet-beta": "https://api.mainnet-beta.solana.com",
    "devnet": "https://api.devnet.solana.com",
    "testnet": "https://api.testnet.solana.com",
}


def default_rpc(cluster: str) -> str | None:
    """The public JSON-RPC endpoint of a cluster; a "custom" one has none."""
    return _DEFAULT_RPC.get(cluster)


def anchor_memo(block: dict) -> str:
    """The memo that anchors a block: crtx:<environment>:<height>:<hash>."""
    return f"crtx:{block.get('environment')}:{block.get('height')}:{block.get('hash')}"


class SolanaError(Exception):
    """The RPC endpoint could not be asked, or answered an error or nonsense."""


class AnchorError(Exception):
    """The anchor does not hold."""


class NoRPCError(AnchorError):
    """The anchor is on a cluster of no public endpoint (a local validator)
    and no RPC URL was given: nothing was read, nothing found wrong."""


@dataclasses.dataclass
class Instruction:
    """One instruction: its program and accounts as indexes into the
    message's keys, and its data."""
    program_index: int
    accounts: list[int]
    data: bytes


@dataclasses.dataclass
class Transaction:
    """A signed legacy (version -1) or v0 transaction: its signatures, in the
    order of the first account keys, and the message bytes they sign. A v0
    message may load more keys from address lookup tables, which no key
    checked here can come from (a program or a signer is always static)."""
    signatures: list[bytes]
    message_bytes: bytes
    version: int
    num_required_signatures: int
    num_readonly_signed: int
    num_readonly_unsigned: int
    account_keys: list[bytes]
    recent_blockhash: bytes
    instructions: list[Instruction]
    lookup_tables: int

    def signer(self, key: bytes) -> int | None:
        """The index of key among the signers (its signature's index), or None."""
        for i in range(self.num_required_signatures):
            if self.account_keys[i] == key:
                return i
        return None

    def program(self, ix: Instruction) -> bytes | None:
        """The instruction's program key, or None when its index points past
        the static keys (a program cannot come from a lookup table)."""
        return self.account_keys[ix.program_index] if ix.program_index < len(self.account_keys) else None


class _Reader:
    def __init__(self, b: bytes):
        self.b, self.off = b, 0

    def fail(self, what: str):
        raise ValueError(f"not a Solana transaction: at byte {self.off}: {what}")

    def byte(self) -> int:
        if self.off >= len(self.b):
            self.fail("unexpected end")
        self.off += 1
        return self.b[self.off - 1]

    def bytes(self, n: int) -> bytes:
        if n > len(self.b) - self.off:
            self.fail(f"{n} bytes wanted, {len(self.b) - self.off} left")
        self.off += n
        return self.b[self.off - n:self.off]

    def compact_u16(self) -> int:
        """Solana's "shortvec" length: 7 bits a byte, low first, at most three
        bytes, in its shortest form only (the runtime refuses any other, so
        two encodings of one transaction cannot both be valid)."""
        v = 0
        for i in range(3):
            x = self.byte()
            if i == 2 and x > 0x03:
                self.fail("compact-u16 overflows 16 bits")
            v |= (x & 0x7F) << (7 * i)
            if not x & 0x80:
                if i > 0 and x == 0:
                    self.fail("compact-u16 not in its shortest form")
                return v
        self.fail("compact-u16 longer than three bytes")


def parse_transaction(raw: bytes) -> Transaction:
    """Reads a signed transaction as the cluster sends it (getTransaction
    with encoding base64): the signatures, then a legacy or v0 message. Every
    byte must belong to it; ValueError otherwise."""
    r = _Reader(bytes(raw))
    signatures = [r.bytes(64) for _ in range(r.compact_u16())]
    start = r.off
    version = -1
    if r.off < len(r.b) and r.b[r.off] & 0x80:
        version = r.byte() & 0x7F
        if version != 0:
            r.fail(f"message version {version}")
    required, ro_signed, ro_unsigned = r.byte(), r.byte(), r.byte()
    keys = [r.bytes(32) for _ in range(r.compact_u16())]
    blockhash = r.bytes(32)
    instructions = []
    for _ in range(r.compact_u16()):
        program = r.byte()
        accounts = list(r.bytes(r.compact_u16()))
        instructions.append(Instruction(program, accounts, r.bytes(r.compact_u16())))
    tables = 0
    if version == 0:
        tables = r.compact_u16()
        for _ in range(tables):
            r.bytes(32)
            r.bytes(r.compact_u16())  # writable indexes
            r.bytes(r.compact_u16())  # read-only indexes
    if r.off != len(r.b):
        r.fail(f"{len(r.b) - r.off} bytes after the message")
    if required == 0:
        r.fail("no signer")
    if required > len(keys):
        r.fail(f"{required} signers among {len(keys)} keys")
    if ro_signed >= required:
        r.fail("no writable signer to pay the fee")
    if ro_unsigned > len(keys) - required:
        r.fail("more read-only unsigned keys than unsigned keys")
    if len(signatures) != required:
        r.fail(f"{len(signatures)} signatures for {required} required")
    return Transaction(signatures, r.b[start:], version, required, ro_signed, ro_unsigned, keys, blockhash,
                       instructions, tables)


def anchor_problem(got: dict, block: dict, authority: str) -> str | None:
    """What does not hold of a transaction getTransaction answered ({"slot",
    "err", "raw"}) for block's anchor, or None when it all does: it
    succeeded, in the anchor's slot, its first signature is the anchor's, the
    ledger authority signed it (its signature over the message verifies), and
    one Memo instruction, with the authority among its accounts, carries
    exactly the block's memo."""
    a = block["anchor"]
    sig = a.get("signature")
    if got.get("err") is not None:
        return f"transaction {sig} failed on the chain: {json.dumps(got['err'])}"
    if got.get("slot") != a.get("slot"):
        return f"transaction {sig} is in slot {got.get('slot')}, the block says {a.get('slot')}"
    try:
        tx = parse_transaction(got["raw"])
    except ValueError as e:
        return f"transaction {sig}: {e}"
    if base58.encode(tx.signatures[0]) != sig:
        return f"the cluster answered another transaction ({base58.encode(tx.signatures[0])}) for {sig}"
    try:
        key = base58.decode_key(authority, "the ledger authority key")
    except ValueError as e:
        return str(e)
    i = tx.signer(key)
    if i is None:
        return f"the ledger authority {authority} did not sign transaction {sig}"
    if not verify_signature(key, tx.message_bytes, tx.signatures[i]):
        return f"the ledger authority's signature in transaction {sig} does not verify"
    memo = anchor_memo(block).encode("utf-8")
    program = base58.decode(MEMO_PROGRAM)
    for ix in tx.instructions:
        if tx.program(ix) == program and ix.data == memo and i in ix.accounts:
            return None
    return f"transaction {sig} has no Memo instruction {memo.decode()!r} signed by the ledger authority"


def rpc_call(rpc: str, method: str, params: list | None = None, timeout: float = 60):
    """Calls method on the Solana JSON-RPC endpoint at rpc and returns its
    result (None when it is null); SolanaError when it cannot be asked or
    answers an error."""
    body = json.dumps({"jsonrpc": "2.0", "id": 1, "method": method, "params": params or []}).encode()
    req = urllib.request.Request(rpc, data=body, method="POST", headers={"Content-Type": "application/json"})
    try:
        with urllib.request.urlopen(req, timeout=timeout) as resp:
            data = resp.read(8 << 20)
    except urllib.error.HTTPError as e:
        data = e.read(8 << 20)
    except OSError as e:
        raise SolanaError(f"solana rpc {rpc}: {method}: {e}") from None
    try:
        out = json.loads(data)
    except ValueError:
        raise SolanaError(f"solana rpc {rpc}: {method}: not a JSON-RPC answer: {data[:200]!r}") from None
    if not isinstance(out, dict):
        raise SolanaError(f"solana rpc {rpc}: {method}: not a JSON-RPC answer: {data[:200]!r}")
    err = out.get("error")
    if err is not None:
        code, message = (err.get("code"), err.get("message")) if isinstance(err, dict) else (None, err)
        raise SolanaError(f"solana rpc {rpc}: {method}: {code} {message}")
    return out.get("result")


def get_transaction(rpc: str, signature: str, timeout: float = 60) -> dict:
    """The finalized transaction of signature as the cluster at rpc holds it:
    {"slot", "err" (meta.err), "raw" (its bytes)}. AnchorError when the
    cluster does not have it finalized; SolanaError when the answer is not
    one."""
    res = rpc_call(rpc, "getTransaction", [signature, {"encoding": "base64", "maxSupportedTransactionVersion": 0,
                                                       "commitment": "finalized"}], timeout)
    if res is None:
        raise AnchorError(f"transaction {signature} is not finalized on the cluster at {rpc}")
    meta = res.get("meta") if isinstance(res, dict) else None
    if not isinstance(meta, dict) or "err" not in meta:
        raise SolanaError(f"solana rpc {rpc}: transaction {signature} is served without its status (meta.err)")
    tx = res.get("transaction")
    if not isinstance(tx, list) or len(tx) != 2 or tx[1] != "base64" or not isinstance(tx[0], str):
        raise SolanaError(f"solana rpc {rpc}: transaction {signature} is not served in base64")
    try:
        raw = base64.b64decode(tx[0], validate=True)
    except ValueError as e:
        raise SolanaError(f"solana rpc {rpc}: transaction {signature}: {e}") from None
    return {"slot": res.get("slot"), "err": meta["err"], "raw": raw}


def check_anchor(block: dict, authority: str, rpc: str | None = None, timeout: float = 60) -> None:
    """Reads block's anchor transaction from the cluster (at rpc, else the
    public endpoint of the anchor's cluster) and checks it (anchor_problem);
    AnchorError when it does not hold (NoRPCError when it has no endpoint to
    read it from), SolanaError when the cluster cannot be asked. A mainnet block's anchor counts only on Solana mainnet, known by
    its genesis hash, whatever cluster the marketplace names: a memo on
    devnet (free, and reset from time to time) or on a validator of its own
    proves nothing to a mainnet reader. That is asked first."""
    a = block["anchor"]
    rpc = rpc or default_rpc(a.get("cluster"))
    if not rpc:
        raise NoRPCError(f"the anchor is on a {a.get('cluster')!r} cluster: give its Solana RPC URL (solana_rpc)")
    if block.get("environment") == "mainnet":
        genesis = rpc_call(rpc, "getGenesisHash", [], timeout)
        if genesis != MAINNET_GENESIS_HASH:
            raise AnchorError(f"a mainnet block's anchor must be on Solana mainnet (genesis {MAINNET_GENESIS_HASH}); "
                              f"the cluster at {rpc} has genesis {genesis!r}")
    problem = anchor_problem(get_transaction(rpc, a.get("signature"), timeout), block, authority)
    if problem:
        raise AnchorError(problem)
