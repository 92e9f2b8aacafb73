"""Verifying an execution as docs/verify.md says, trusting only the keys the
marketplace publishes (or the ones given): the result's hash and content id,
the creator's signature, the listing transaction that registered the key,
the ledger record, its inclusion in a block signed by the ledger authority,
the hash chain from that block to the first block anchored on Solana and the
anchor's transaction (step 8), and the marketplace's receipt."""

import dataclasses
import hashlib
import json
import time
import urllib.parse

from .errors import APIError
from .keys import verify_signature
from .ledger import account_address, block_hash, cid, listing_statement, micros, proof_problem, transaction_hash
from .protocol import result_hash
from .receipt import verify_receipt
from .solana import AnchorError, NoRPCError, SolanaError, check_anchor

ANCHORED = "anchored"
"""VerifyReport.anchor when the hash chain leads from the execution's block to
a block whose memo the ledger authority signed on Solana."""
NOT_ANCHORED_YET = "not_anchored_yet"
"""VerifyReport.anchor when no block from the execution's on is anchored yet,
or the environment has no chain: no failure of the proof, which then rests on
the authority's signature alone."""
ANCHOR_NOT_CHECKED = "not_checked"
"""VerifyReport.anchor when a block is anchored on a cluster of no public
endpoint (a local validator) and no solana_rpc was given: no failure either,
nothing was found wrong and nothing was read."""

# Bounds the blocks read forward when the marketplace does not say (GET
# /v1/reserves) which block it anchored last.
MAX_CHAIN_WALK = 10000


@dataclasses.dataclass
class Check:
    name: str
    ok: bool
    detail: str


@dataclasses.dataclass
class VerifyReport:
    execution_id: str
    checks: list[Check] = dataclasses.field(default_factory=list)
    # Whether the proof reached Solana (step 8): ANCHORED, NOT_ANCHORED_YET,
    # ANCHOR_NOT_CHECKED, or None when the verification stopped before the
    # execution's block or the anchor failed.
    anchor: str | None = None
    anchor_detail: str = ""
    # The block the anchor names and its {"signature", "slot", "cluster"},
    # when anchor is ANCHORED or ANCHOR_NOT_CHECKED.
    anchored_block: int | None = None
    anchored_by: dict | None = None

    @property
    def ok(self) -> bool:
        """Whether every check held (and there was one)."""
        return bool(self.checks) and all(c.ok for c in self.checks)

    def failures(self) -> list[Check]:
        return [c for c in self.checks if not c.ok]

    def add(self, name: str, ok: bool, detail: str) -> bool:
        self.checks.append(Check(name, bool(ok), detail))
        return bool(ok)

    def __str__(self) -> str:
        lines = [f"{'ok  ' if c.ok else 'FAIL'} {c.name}: {c.detail}" for c in self.checks]
        if self.anchor == NOT_ANCHORED_YET:
            lines.append(f"-    anchor: not anchored yet: {self.anchor_detail}")
        elif self.anchor == ANCHOR_NOT_CHECKED:
            lines.append(f"-    anchor: not checked: {self.anchor_detail}")
        return "\n".join(lines)


def verify_execution(client, execution_id: str, *, authority_key: str | None = None,
                     marketplace_key: str | None = None, wait: float = 60,
                     solana_rpc: str | None = None) -> VerifyReport:
    """Checks one execution of the client's API key. Network errors and the
    marketplace's error answers raise; everything checked is a Check in the
    report. wait is how long to wait for the execution to end and its
    transactions to be sealed. solana_rpc is the Solana JSON-RPC endpoint the
    anchor is read from (default: the public one of the anchor's cluster; a
    "custom" cluster, a local validator, needs it)."""
    r = VerifyReport(execution_id)
    until = time.monotonic() + wait

    # 0. The marketplace's keys: pinned ones must be the published ones.
    wk = client.well_known()
    authority, market = wk.get("ledger_authority_public_key"), wk.get("signing_public_key")
    if authority_key is not None and not r.add("ledger authority key", authority == authority_key,
                                               f"published {authority}, pinned {authority_key}"):
        authority = authority_key
    if marketplace_key is not None and not r.add("marketplace key", market == marketplace_key,
                                                 f"published {market}, pinned {marketplace_key}"):
        market = marketplace_key
    host = urllib.parse.urlsplit(wk.get("public_url", "")).netloc

    # 1. The record, once final.
    while True:
        rec = client.execution(execution_id)
        if rec.get("status") in ("completed", "failed", "disputed") or time.monotonic() >= until:
            break
        time.sleep(0.3)
    status = rec.get("status")
    if not r.add("final", status in ("completed", "failed", "disputed") and rec.get("execution_id") == execution_id,
                 f"{execution_id} is {status} in {rec.get('environment')}"):
        return r
    env = rec["environment"]
    completed = status != "failed"
    # The receipt, read now: its wallet is where a refund goes (step 5); it is checked in step 7.
    raw = _waiting(lambda: client.receipt(execution_id), "not_final", until)
    try:
        caller = json.loads(raw).get("wallet")
    except (ValueError, AttributeError):
        caller = None

    listing = None
    if completed:
        # 2. The result, and 3. the creator's signature over its hash.
        if rec.get("ipfs_url") is None:
            # A private execution's result is published nowhere: the record,
            # which only its caller reads, holds it.
            content = (rec.get("result") or "").encode("utf-8")
            r.add("result hash", result_hash(rec.get("result") or "") == rec.get("result_hash"),
                  f"sha256 of the {len(content)} bytes of the private result; the record says {rec.get('result_hash')}")
        else:
            content = client.content(rec["ipfs_url"])
            got = "sha256:" + hashlib.sha256(content).hexdigest()
            r.add("result hash", got == rec.get("result_hash"),
                  f"sha256 of the {len(content)} bytes at ipfs_url is {got}; the record says {rec.get('result_hash')}")
            want = cid(content)
            r.add("content id", urllib.parse.urlsplit(rec["ipfs_url"]).path.rstrip("/").rsplit("/", 1)[-1] == want,
                  f"the content's CID is {want}")
        r.add("creator signature", verify_signature(rec.get("signing_public_key", ""), (rec.get("result_hash") or "").encode(),
                                          rec.get("signature") or ""),
              f"over the result hash by the listing's key {rec.get('signing_public_key')}")
    else:
        r.add("refunded", micros(rec["refunded_usdc"]) == micros(rec["cost_usdc"])
              and micros(rec["creator_amount_usdc"]) == 0 and micros(rec["platform_amount_usdc"]) == 0
              and rec.get("result_hash") is None,
              f"refunded {rec['refunded_usdc']} of {rec['cost_usdc']} USDC, nothing paid, no result")

    # 4. The key is the creator's.
    if completed or rec.get("listing_transaction"):
        listing = _listing(client, r, rec, authority, host, until)

    # 5. The ledger record, and 6. its inclusion in a signed block.
    ledger_tx = None
    if not rec.get("ledger_transaction"):
        r.add("ledger record", False, "the record names no ledger transaction")
    else:
        ledger_tx = client.transaction(env, rec["ledger_transaction"])
        d = ledger_tx.get("data") or {}
        escrow = account_address("escrow", execution_id)
        if completed:
            ok = (ledger_tx.get("kind") == "ExecutionRecord" and d.get("execution_id") == execution_id
                  and d.get("result_hash") == rec.get("result_hash") and d.get("signature") == rec.get("signature")
                  and d.get("signing_public_key") == rec.get("signing_public_key")
                  and d.get("listing_tx") == rec.get("listing_transaction")
                  and (rec.get("ipfs_url") is not None or "cid" not in d))
            r.add("ledger record", ok, f"the ExecutionRecord {ledger_tx.get('id')} commits the result hash, "
                                       "the creator's signature, the key and the listing")
            want = []
            if listing and micros(rec["creator_amount_usdc"]) > 0:
                want.append((escrow, account_address("wallet", listing["data"].get("creator", "")),
                             micros(rec["creator_amount_usdc"])))
            if micros(rec["platform_amount_usdc"]) > 0:
                want.append((escrow, account_address("treasury", "platform"), micros(rec["platform_amount_usdc"])))
            what = f"{rec['creator_amount_usdc']} USDC to the creator, {rec['platform_amount_usdc']} to the treasury"
        else:
            r.add("ledger record", ledger_tx.get("kind") == "EscrowRefunded" and d.get("execution_id") == execution_id,
                  f"the EscrowRefunded {ledger_tx.get('id')} of the execution")
            want = []
            if caller:
                want.append((escrow, account_address("wallet", caller), micros(rec["cost_usdc"])))
            what = f"{rec['cost_usdc']} USDC back to the caller"
        got = sorted((p.get("from"), p.get("to"), micros(p.get("amount_usdc", 0))) for p in ledger_tx.get("postings") or [])
        r.add("ledger postings", got == sorted(want), what if got == sorted(want) else f"got {got}, want {sorted(want)}")
        block = _sealed(client, r, "ledger", env, ledger_tx, authority, until)
        # 8. The hash chain forward to the first anchored block, and its anchor.
        if block is not None:
            verify_anchor(client, r, block, authority, solana_rpc=solana_rpc)

    # 7. The receipt.
    try:
        rc = verify_receipt(raw, market)
    except ValueError as e:
        r.add("receipt", False, str(e))
        return r
    expect = {"execution_id": execution_id, "environment": env, "agent_id": rec.get("agent_id"),
              "status": "completed" if status == "disputed" else status,
              "result_hash": rec.get("result_hash"), "creator_signature": rec.get("signature"),
              "signing_public_key": rec.get("signing_public_key"),
              "listing_transaction": rec.get("listing_transaction"),
              "ledger_transaction": rec.get("ledger_transaction")}
    odd = [k for k, v in expect.items() if rc.get(k) != v]
    odd += [k for k in ("cost_usdc", "creator_amount_usdc", "platform_amount_usdc", "refunded_usdc")
            if micros(rc.get(k, -1)) != micros(rec.get(k, -2))]
    if ledger_tx is not None:
        total = sum(micros(p.get("amount_usdc", 0)) for p in ledger_tx.get("postings") or [])
        if micros(rc.get("cost_usdc", -1)) != total:
            odd.append("cost_usdc (the ledger's postings)")
    r.add("receipt", not odd, f"signed by the marketplace key {market}, stating what the record and the ledger say"
          if not odd else f"the receipt's {', '.join(odd)} differ from the record's")
    return r


def _listing(client, r: VerifyReport, rec: dict, authority: str, host: str, until: float) -> dict | None:
    """Step 4: the listing transaction registered the record's key for its
    agent, signed by the creator's wallet (and by the key), for this
    marketplace, and is sealed in a signed block."""
    lt = rec.get("listing_transaction")
    if not lt:
        r.add("listing key", False, "the record names no listing transaction")
        return None
    tx = client.transaction("mainnet", lt)
    d = tx.get("data") or {}
    if not r.add("listing key", tx.get("kind") in ("AgentListed", "ListingUpdated")
                 and d.get("agent_id") == rec.get("agent_id") and d.get("signing_public_key") == rec.get("signing_public_key"),
                 f"{tx.get('kind')} {lt} registers {d.get('signing_public_key')} for {d.get('agent_id')}"):
        return tx
    if "marketplace" in d:
        r.add("listing marketplace", d["marketplace"] == host,
              f"signed for {d['marketplace']}; this marketplace is {host}")
    try:
        stmt = listing_statement(tx["kind"], d)
    except ValueError as e:
        r.add("listing signature", False, str(e))
        return tx
    r.add("listing signature", verify_signature(d.get("creator", ""), stmt, d.get("creator_signature", "")),
          f"the listing statement signed by the creator's wallet {d.get('creator')}")
    if "key_signature" in d:
        r.add("listing key signature", verify_signature(d.get("signing_public_key", ""), stmt, d["key_signature"]),
              f"the listing statement signed by the key {d.get('signing_public_key')}")
    _sealed(client, r, "listing", "mainnet", tx, authority, until)
    return tx


def _sealed(client, r: VerifyReport, what: str, env: str, tx: dict, authority: str, until: float) -> dict | None:
    """Step 5's hash and step 6's proof of tx: the proof's block when it holds."""
    try:
        computed = transaction_hash(tx)
    except (ValueError, KeyError, TypeError) as e:
        r.add(f"{what} transaction hash", False, str(e))
        return
    if not r.add(f"{what} transaction hash", computed == tx.get("hash"),
                 f"recomputed {computed}, served {tx.get('hash')}"):
        return
    try:
        proof = _waiting(lambda: client.proof(env, tx["id"]), "not_sealed", until)
    except APIError as e:
        r.add(f"{what} sealed in a block", False, str(e))
        return
    problem = proof_problem(proof, tx, authority)
    block = proof.get("block") or {}
    if problem is None and (proof.get("environment", env) != env or block.get("environment") != env):
        problem = f"the proof is of a block of {block.get('environment')}, not of {env}"
    ok = r.add(f"{what} sealed in a block", problem is None,
               problem or f"in {env} block {block.get('height')}, signed by the ledger authority {authority}")
    return block if ok else None


def verify_anchor(client, r: VerifyReport, block: dict, authority: str, *, solana_rpc: str | None = None,
                  timeout: float = 60) -> None:
    """Step 8, from block (the execution's, already checked): follows the hash
    chain forward to the first block with an anchor, checking each block's
    prev_hash, hash and authority signature, then reads that anchor's
    transaction from Solana (crtx.solana.check_anchor). Adds the checks "hash
    chain" and "anchor" to r and sets r.anchor; no anchored block from block
    on (yet), or no chain for its environment, is NOT_ANCHORED_YET, and an
    anchor on a cluster it has no endpoint for is ANCHOR_NOT_CHECKED: not
    failures. GET /v1/reserves' anchored_block only bounds the walk: a block is
    called anchored only once its chain and its memo are checked."""
    env, start = block.get("environment"), block.get("height")
    last = start + MAX_CHAIN_WALK
    try:
        reserves = client.reserves().get("reserves")
    except (APIError, OSError, ValueError, AttributeError):
        reserves = None
    if isinstance(reserves, list):
        last = next((x.get("anchored_block") or 0 for x in reserves if x.get("environment") == env), 0)
        if last == 0:
            return _not_yet(r, f"the {env} ledger is not anchored on Solana "
                               "(the marketplace reports no chain or no anchor for it)")
        if last < start:
            return _not_yet(r, f"no block of {env} from {start} on is anchored on Solana yet")
    prev = None
    for h in range(start, last + 1):
        try:
            view = client.block(env, h)
        except APIError as e:
            if e.code == "block_not_found":
                return _not_yet(r, f"no block of {env} from {start} to {h - 1} is anchored on Solana yet")
            r.add("hash chain", False, f"block {h}: {e}")
            return
        except (OSError, ValueError) as e:
            r.add("hash chain", False, f"block {h}: {e}")
            return
        b = (view or {}).get("block") or {}
        bad = _chain_problem(b, env, h, block if h == start else None, prev, authority)
        if bad:
            r.add("hash chain", False, bad)
            return
        prev = b
        if not b.get("anchor"):
            continue
        r.add("hash chain", True, f"block {h} is anchored itself" if h == start else
              f"blocks {start} to {h} each name the one before and are signed by the ledger authority")
        a = b["anchor"]
        try:
            check_anchor(b, authority, solana_rpc, timeout)
        except NoRPCError as e:
            r.anchor, r.anchored_block, r.anchored_by = ANCHOR_NOT_CHECKED, h, a
            r.anchor_detail = (f"block {h} is anchored by Solana transaction {a.get('signature')} "
                               f"on a {a.get('cluster')!r} cluster, not read: {e}")
            return
        except (AnchorError, SolanaError) as e:
            r.add("anchor", False, f"block {h}: {e}")
            return
        r.add("anchor", True, f"block {h} is named by the memo of Solana transaction {a.get('signature')} "
                              f"(slot {a.get('slot')}, {a.get('cluster')}), signed by the ledger authority")
        r.anchor, r.anchored_block, r.anchored_by = ANCHORED, h, a
        r.anchor_detail = f"through block {h}, Solana transaction {a.get('signature')}"
        return
    if last == start + MAX_CHAIN_WALK:
        return _not_yet(r, f"no block of {env} from {start} to {last} is anchored on Solana")
    r.add("hash chain", False, f"the marketplace reports block {last} of {env} anchored, "
                               f"but no block from {start} to it serves an anchor")


def _chain_problem(b: dict, env: str, h: int, first: dict | None, prev: dict | None, authority: str) -> str | None:
    """What is wrong with block b, served as block h of env: it must be the
    execution's block first (same hash), then name the block before it, hash
    to its hash and be signed by the ledger authority."""
    if b.get("environment") != env or b.get("height") != h:
        return f"GET block {h} of {env} served block {b.get('height')} of {b.get('environment')}"
    if first is not None and b.get("hash") != first.get("hash"):
        return f"block {h} is served with hash {b.get('hash')}, its proof with {first.get('hash')}"
    if prev is not None and b.get("prev_hash") != prev.get("hash"):
        return f"block {h}'s prev_hash {b.get('prev_hash')} is not block {h - 1}'s hash {prev.get('hash')}"
    try:
        computed = block_hash(b)
    except (ValueError, KeyError, TypeError) as e:
        return f"block {h}: {e}"
    if computed != b.get("hash"):
        return f"block {h} does not hash to its hash"
    if not verify_signature(authority, bytes.fromhex(computed), b.get("signature") or ""):
        return f"block {h}'s signature does not verify against the ledger authority key"
    return None


def _not_yet(r: VerifyReport, detail: str) -> None:
    r.anchor, r.anchor_detail = NOT_ANCHORED_YET, detail


def _waiting(fn, code: str, until: float):
    """fn's answer, asked again while it is the error code (409: not yet)."""
    while True:
        try:
            return fn()
        except APIError as e:
            if e.code != code or time.monotonic() >= until:
                raise
        time.sleep(0.2)
