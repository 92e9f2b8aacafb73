"""Verifying an execution as docs/verify.md says, trusting only the keys the
marketplace publishes (or the ones given): the result's hash and content id,
the creator's signature, the listing transaction that registered the key,
the ledger record, its inclusion in a block signed by the ledger authority,
and the marketplace's receipt. Step 8, the Solana anchor, is not checked here
(the Go client's Verify and examples/verify-node do it)."""

import dataclasses
import hashlib
import json
import time
import urllib.parse

from .errors import APIError
from .keys import verify_signature
from .ledger import account_address, cid, listing_statement, micros, proof_problem, transaction_hash
from .protocol import result_hash
from .receipt import verify_receipt


@dataclasses.dataclass
class Check:
    name: str
    ok: bool
    detail: str


@dataclasses.dataclass
class VerifyReport:
    execution_id: str
    checks: list[Check] = dataclasses.field(default_factory=list)

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
        return "\n".join(f"{'ok  ' if c.ok else 'FAIL'} {c.name}: {c.detail}" for c in self.checks)


def verify_execution(client, execution_id: str, *, authority_key: str | None = None,
                     marketplace_key: str | None = None, wait: float = 60) -> VerifyReport:
    """Checks one execution of the client's API key. Network errors and the
    marketplace's error answers raise; everything checked is a Check in the
    report. wait is how long to wait for the execution to end and its
    transactions to be sealed."""
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
        _sealed(client, r, "ledger", env, ledger_tx, authority, until)

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


def _sealed(client, r: VerifyReport, what: str, env: str, tx: dict, authority: str, until: float) -> None:
    """Step 5's hash and step 6's proof of tx."""
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
    r.add(f"{what} sealed in a block", problem is None and proof.get("environment", env) == env,
          problem or f"in {env} block {block.get('height')}, signed by the ledger authority {authority}")


def _waiting(fn, code: str, until: float):
    """fn's answer, asked again while it is the error code (409: not yet)."""
    while True:
        try:
            return fn()
        except APIError as e:
            if e.code != code or time.monotonic() >= until:
                raise
        time.sleep(0.2)
