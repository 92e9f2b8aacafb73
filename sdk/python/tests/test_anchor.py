"""Step 8, the anchor on Solana, without Solana: a chain of blocks signed
here, served by a stand-in for the marketplace, and a JSON-RPC server on
127.0.0.1 answering getGenesisHash and getTransaction with memo transactions
written and signed here in the wire format (legacy and v0)."""

import base64
import json
import unittest

from crtx import ANCHOR_NOT_CHECKED, ANCHORED, NOT_ANCHORED_YET, APIError, SigningKey, VerifyReport, base58, verify_anchor
from crtx.ledger import block_hash
from tests import jsonserver
from crtx.solana import MAINNET_GENESIS_HASH, MEMO_PROGRAM, anchor_memo, parse_transaction

DEVNET_GENESIS_HASH = "EtWTRABZaYq6iMfeYKouRu166VU2xqa1wcaWoxPkrZBG"


def shortvec(n: int) -> bytes:
    out = bytearray()
    while True:
        b = n & 0x7F
        n >>= 7
        out.append(b | (0x80 if n else 0))
        if not n:
            return bytes(out)


class Keys:
    def __init__(self):
        self.treasury = SigningKey.generate()
        self.authority = SigningKey.generate()

    def message(self, memo: str, *, v0: bool = False, memo_signer: int = 1) -> bytes:
        """The marketplace's anchor: the treasury pays the fee, the ledger
        authority signs the memo (its account in the Memo instruction)."""
        data = memo.encode()
        return b"".join([
            b"\x80" if v0 else b"", bytes([2, 1, 1]), shortvec(3), self.treasury.public_bytes,
            self.authority.public_bytes, base58.decode(MEMO_PROGRAM), bytes([7]) * 32, shortvec(1), bytes([2]),
            shortvec(1), bytes([memo_signer]), shortvec(len(data)), data, shortvec(0) if v0 else b""])

    def transaction(self, message: bytes) -> bytes:
        return shortvec(2) + self.treasury.sign(message) + self.authority.sign(message) + message


class Ledger:
    """Blocks of one environment, signed by the authority, served as GET
    /v1/ledger/{env}/blocks/{height} and GET /v1/reserves answer them."""

    def __init__(self, env: str, keys: Keys, heights: range):
        self.env, self.keys = env, keys
        self.blocks: dict[int, dict] = {}
        prev = "ab" * 32
        for h in heights:
            b = {"environment": env, "height": h, "prev_hash": prev, "merkle_root": f"{h:064x}", "tx_count": 1,
                 "sealed_at": f"2026-11-27T10:{h % 60:02d}:00.5Z", "version": 2}
            self.seal(b)
            self.blocks[h] = b
            prev = b["hash"]
        self.anchored_block: int | None = None
        self.reserves_fail = False

    def seal(self, b: dict, key: SigningKey | None = None):
        b["hash"] = block_hash(b)
        b["signature"] = (key or self.keys.authority).sign_base58(bytes.fromhex(b["hash"]))

    def anchor(self, h: int, raw: bytes, cluster: str = "custom", slot: int = 777):
        self.blocks[h]["anchor"] = {"signature": base58.encode(raw[1:65]), "slot": slot, "cluster": cluster}
        self.anchored_block = h

    # The client's methods the walk calls.
    def reserves(self) -> dict:
        if self.reserves_fail:
            raise APIError(503, "chain_unavailable", "the chain does not answer")
        rs = [] if self.anchored_block is None else [{"environment": self.env, "anchored_block": self.anchored_block}]
        return {"reserves": rs}

    def block(self, env: str, height: int) -> dict:
        if env != self.env or height not in self.blocks:
            raise APIError(404, "block_not_found", f"no block {height}")
        return {"block": json.loads(json.dumps(self.blocks[height])), "transaction_hashes": []}


class RPC:
    """A Solana JSON-RPC endpoint on 127.0.0.1: getGenesisHash answers
    genesis, getTransaction the transaction set (or null)."""

    def __init__(self):
        self.genesis = DEVNET_GENESIS_HASH
        self.raw: bytes | None = None
        self.slot, self.err = 777, None
        self.calls: list[str] = []
        self.server, self.url = jsonserver.serve(self._answer)

    def _answer(self, method, body):
        call = json.loads(body)
        self.calls.append(call["method"])
        result = None
        if call["method"] == "getGenesisHash":
            result = self.genesis
        elif call["method"] == "getTransaction" and self.raw is not None:
            assert call["params"][1] == {"encoding": "base64", "maxSupportedTransactionVersion": 0,
                                         "commitment": "finalized"}, call
            result = {"slot": self.slot, "meta": {"err": self.err},
                      "transaction": [base64.b64encode(self.raw).decode(), "base64"]}
        return {"jsonrpc": "2.0", "id": call["id"], "result": result}

    def close(self):
        self.server.shutdown()
        self.server.server_close()


class Anchor(unittest.TestCase):
    def setUp(self):
        self.keys = Keys()
        self.rpc = RPC()
        self.addCleanup(self.rpc.close)

    def walk(self, ledger: Ledger, start: int, rpc: str | None = "default") -> VerifyReport:
        r = VerifyReport("e1")
        r.add("ledger sealed in a block", True, "the execution's block, checked before")
        self.rpc.calls = []
        verify_anchor(ledger, r, ledger.blocks[start], self.keys.authority.public_key,
                      solana_rpc=self.rpc.url if rpc == "default" else rpc, timeout=10)
        return r

    def anchored(self, env: str = "devnet", at: int = 7, *, v0: bool = False, cluster: str = "custom") -> Ledger:
        ledger = Ledger(env, self.keys, range(1, 10))
        raw = self.keys.transaction(self.keys.message(anchor_memo(ledger.blocks[at]), v0=v0))
        ledger.anchor(at, raw, cluster)
        self.rpc.raw = raw
        return ledger

    def failed(self, r: VerifyReport) -> dict[str, str]:
        return {c.name: c.detail for c in r.failures()}

    def test_anchored_through_the_chain(self):
        for v0 in (False, True):
            ledger = self.anchored(v0=v0)
            tx = parse_transaction(self.rpc.raw)
            self.assertEqual((tx.version, len(tx.account_keys), len(tx.instructions)), (0 if v0 else -1, 3, 1))
            r = self.walk(ledger, 5)
            self.assertTrue(r.ok, str(r))
            self.assertEqual([c.name for c in r.checks], ["ledger sealed in a block", "hash chain", "anchor"])
            self.assertIn("blocks 5 to 7 each name the one before", r.checks[1].detail)
            self.assertEqual((r.anchor, r.anchored_block, r.anchored_by), (ANCHORED, 7, ledger.blocks[7]["anchor"]))
            # A devnet block's anchor is read without asking the genesis.
            self.assertEqual(self.rpc.calls, ["getTransaction"])
            # The anchored block itself.
            r = self.walk(ledger, 7)
            self.assertTrue(r.ok, str(r))
            self.assertEqual(r.checks[1].detail, "block 7 is anchored itself")

    def test_mainnet_anchor_only_on_mainnet(self):
        ledger = self.anchored("mainnet", cluster="mainnet-beta")
        self.rpc.genesis = DEVNET_GENESIS_HASH
        r = self.walk(ledger, 6)
        self.assertEqual(list(self.failed(r)), ["anchor"], str(r))
        self.assertIn("must be on Solana mainnet", self.failed(r)["anchor"])
        self.assertIsNone(r.anchor)
        # Refused before the transaction is read.
        self.assertEqual(self.rpc.calls, ["getGenesisHash"])

        self.rpc.genesis = MAINNET_GENESIS_HASH
        r = self.walk(ledger, 6)
        self.assertTrue(r.ok, str(r))
        self.assertEqual(r.anchor, ANCHORED)
        self.assertEqual(self.rpc.calls, ["getGenesisHash", "getTransaction"])

    def test_anchor_refusals(self):
        ledger = self.anchored()
        good = self.rpc.raw
        other = self.keys.transaction(self.keys.message(anchor_memo(ledger.blocks[6])))
        treasury_only = self.keys.transaction(self.keys.message(anchor_memo(ledger.blocks[7]), memo_signer=0))
        stranger = Keys()
        another_authority = stranger.transaction(stranger.message(anchor_memo(ledger.blocks[7])))
        forged = bytearray(good)
        forged[70] ^= 1
        cases = {
            "a failed transaction": dict(err={"InstructionError": [0, "Custom"]}),
            "another slot": dict(slot=778),
            "another block's memo": dict(raw=other),
            "the memo signed by the treasury alone": dict(raw=treasury_only),
            "a forged authority signature": dict(raw=bytes(forged)),
            "the memo of another authority": dict(raw=another_authority),
            "a truncated transaction": dict(raw=good[:-1]),
            "a transaction the cluster does not have": dict(raw=None),
        }
        for name, change in cases.items():
            with self.subTest(name):
                self.rpc.raw, self.rpc.slot, self.rpc.err = good, 777, None
                for k, v in change.items():
                    setattr(self.rpc, k, v)
                # The anchor names the transaction's own first signature.
                if self.rpc.raw is not None and len(self.rpc.raw) > 65:
                    ledger.blocks[7]["anchor"]["signature"] = base58.encode(self.rpc.raw[1:65])
                r = self.walk(ledger, 5)
                self.assertEqual(list(self.failed(r)), ["anchor"], str(r))
                self.assertIsNone(r.anchor)
        # A "custom" cluster has no public endpoint: without solana_rpc the
        # anchor is not read, which is no failure (the Go client says the same).
        r = self.walk(ledger, 5, rpc=None)
        self.assertTrue(r.ok, str(r))
        self.assertEqual((r.anchor, r.anchored_block), (ANCHOR_NOT_CHECKED, 7))
        self.assertIn("not read: the anchor is on a 'custom' cluster: give its Solana RPC URL", r.anchor_detail)
        self.assertIn("-    anchor: not checked: ", str(r))
        self.assertEqual(self.rpc.calls, [])

    def test_broken_chain(self):
        ledger = self.anchored()
        ledger.blocks[6]["prev_hash"] = "cd" * 32
        ledger.seal(ledger.blocks[6])
        r = self.walk(ledger, 5)
        self.assertIn("block 6's prev_hash", self.failed(r)["hash chain"])
        self.assertEqual(self.rpc.calls, [])

        ledger = self.anchored()
        ledger.seal(ledger.blocks[6], SigningKey.generate())
        r = self.walk(ledger, 5)
        self.assertIn("block 6's signature does not verify", self.failed(r)["hash chain"])

        ledger = self.anchored()
        ledger.blocks[6]["tx_count"] = 2
        r = self.walk(ledger, 5)
        self.assertIn("block 6 does not hash to its hash", self.failed(r)["hash chain"])

        # The marketplace reports an anchored block that serves none.
        ledger = self.anchored()
        del ledger.blocks[7]["anchor"]
        r = self.walk(ledger, 5)
        self.assertIn("no block from 5 to it serves an anchor", self.failed(r)["hash chain"])

    def test_not_anchored_yet(self):
        # No chain for the environment: no anchor, and no failure.
        ledger = Ledger("devnet", self.keys, range(1, 10))
        r = self.walk(ledger, 5)
        self.assertTrue(r.ok, str(r))
        self.assertEqual((r.anchor, len(r.checks)), (NOT_ANCHORED_YET, 1))
        self.assertIn("the devnet ledger is not anchored on Solana", r.anchor_detail)
        self.assertIn("-    anchor: not anchored yet: ", str(r))
        # Anchored only below the execution's block.
        ledger = self.anchored(at=3)
        r = self.walk(ledger, 5)
        self.assertTrue(r.ok, str(r))
        self.assertEqual(r.anchor, NOT_ANCHORED_YET)
        self.assertIn("from 5 on", r.anchor_detail)
        # Without GET /v1/reserves the walk reads up to the last block.
        ledger = Ledger("devnet", self.keys, range(1, 10))
        ledger.reserves_fail = True
        r = self.walk(ledger, 5)
        self.assertTrue(r.ok, str(r))
        self.assertEqual(r.anchor, NOT_ANCHORED_YET)
        self.assertIn("from 5 to 9", r.anchor_detail)
        self.assertEqual(self.rpc.calls, [])

    def test_wire_format_refusals(self):
        raw = self.keys.transaction(self.keys.message("crtx:devnet:1:00", v0=True))
        parse_transaction(raw)
        for n in range(len(raw)):
            with self.assertRaises(ValueError, msg=f"{n} of {len(raw)} bytes"):
                parse_transaction(raw[:n])
        with self.assertRaisesRegex(ValueError, "after the message"):
            parse_transaction(raw + b"\0")
        with self.assertRaisesRegex(ValueError, "shortest form"):
            parse_transaction(bytes([0x80, 0x00]))


if __name__ == "__main__":
    unittest.main()
