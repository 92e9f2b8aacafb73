"""The SDK against a real marketplace: an agent served by crtx.httpserver is
listed, executed, paid and verified by the SDK's own caller side."""

import json
import unittest

from crtx import NOT_ANCHORED_YET, APIError, Client, SigningKey, verify_receipt
from crtx.ledger import micros

from . import dropping_proxy, marketplace


class Marketplace(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        marketplace.require()
        cls.agent = marketplace.listed()
        cls.client = Client(marketplace.URL, marketplace.API_KEY)

    def available(self) -> int:
        return micros(self.client.wallet()["balances"]["devnet"]["available_usdc"])

    def test_listed_with_collateral(self):
        listing = self.agent.listing
        # The reachability test passed (the listing exists) and the
        # collateral of its price tier is locked.
        self.assertEqual(listing["status"], "active")
        self.assertEqual(micros(listing["collateral_usdc"]), 10_000_000)
        self.assertEqual(listing["signing_public_key"], self.agent.key.public_key)
        self.assertGreaterEqual(self.agent.calls.get("crtx reachability test", 0), 1)
        ids = [a["agent_id"] for a in self.client.agents(environment="devnet", limit=100)["agents"]]
        self.assertIn(self.agent.agent_id, ids)
        self.assertEqual(self.client.agent(self.agent.agent_id, "devnet")["name"], "Shout")

    def test_sync_paid_and_verified(self):
        before = self.available()
        rec = self.client.execute(self.agent.agent_id, "the quick brown fox")
        self.assertEqual(rec["status"], "completed")
        self.assertEqual(rec["result"], "THE QUICK BROWN FOX")
        self.assertEqual(rec["tokens_used"], 4)
        self.assertEqual(micros(rec["cost_usdc"]), 10_000)
        self.assertEqual(micros(rec["creator_amount_usdc"]) + micros(rec["platform_amount_usdc"]), 10_000)
        self.assertEqual(before - self.available(), 10_000, "the caller paid the price once")
        report = self.client.verify(rec["execution_id"])
        self.assertTrue(report.ok, str(report))
        names = {c.name for c in report.checks}
        for want in ("result hash", "content id", "creator signature", "listing key", "listing signature",
                     "listing key signature", "listing sealed in a block", "ledger record", "ledger postings",
                     "ledger transaction hash", "ledger sealed in a block", "receipt"):
            self.assertIn(want, names)
        # The marketplace has no chain: the ledger is anchored nowhere, which is said and no failure.
        self.assertEqual(report.anchor, NOT_ANCHORED_YET, str(report))
        self.assertIn("the devnet ledger is not anchored on Solana", report.anchor_detail)
        listed = self.client.executions(agent_id=self.agent.agent_id, limit=100)
        self.assertIn(rec["execution_id"], [e["execution_id"] for e in listed["executions"]])

    def test_async_polled(self):
        rec = self.client.execute(self.agent.agent_id, "async words", {"count": True}, asynchronous=True,
                                  poll_every=0.1)
        self.assertEqual((rec["status"], rec["result"]), ("completed", "2"))
        pending = self.client.submit(self.agent.agent_id, "wait for me")
        self.assertEqual(pending["status"], "pending")
        done = self.client.wait(pending["execution_id"], every=0.1, timeout=30)
        self.assertEqual((done["status"], done["result"]), ("completed", "WAIT FOR ME"))
        self.assertTrue(self.client.verify(done["execution_id"]).ok)

    def test_private_result_verified(self):
        rec = self.client.execute(self.agent.agent_id, "keep it private", private=True)
        self.assertIsNone(rec["ipfs_url"])
        report = self.client.verify(rec["execution_id"])
        self.assertTrue(report.ok, str(report))

    def test_tampered_result_and_wrong_keys_refused(self):
        rec = self.client.execute(self.agent.agent_id, "tamper with me")
        eid = rec["execution_id"]

        class Tampering(Client):
            def content(self, ipfs_url):
                return super().content(ipfs_url).replace(b"TAMPER", b"TAMPRE")

        report = Tampering(marketplace.URL, marketplace.API_KEY).verify(eid)
        self.assertFalse(report.ok)
        self.assertEqual({c.name for c in report.failures()}, {"result hash", "content id"}, str(report))

        other = SigningKey.generate().public_key
        report = self.client.verify(eid, marketplace_key=other)
        self.assertEqual({c.name for c in report.failures()}, {"marketplace key", "receipt"}, str(report))
        report = self.client.verify(eid, authority_key=other)
        self.assertEqual({c.name for c in report.failures()},
                         {"ledger authority key", "listing sealed in a block", "ledger sealed in a block"}, str(report))

        market = self.client.well_known()["signing_public_key"]
        raw = self.client.receipt(eid)
        self.assertEqual(verify_receipt(raw, market)["execution_id"], eid)
        with self.assertRaisesRegex(ValueError, "does not verify"):
            verify_receipt(raw, other)
        body = json.loads(raw)
        with self.assertRaisesRegex(ValueError, "does not verify"):
            verify_receipt(json.dumps(dict(body, cost_usdc=0)).encode(), market)
        with self.assertRaisesRegex(ValueError, "unknown or repeated"):
            verify_receipt(raw.rstrip()[:-1] + b',"COST_USDC":0}', market)

    def test_exception_is_failed_and_refunded(self):
        before = self.available()
        with self.assertRaises(APIError) as e:
            self.client.execute(self.agent.agent_id, "raise")
        self.assertEqual((e.exception.status, e.exception.code), (500, "execution_failed"))
        rec = self.client.execution(e.exception.execution_id)
        self.assertEqual(rec["status"], "failed")
        self.assertIn("the model is down", rec["error"]["message"])
        self.assertEqual(self.available(), before, "a failed execution is refunded")
        report = self.client.verify(rec["execution_id"])
        self.assertTrue(report.ok, str(report))
        self.assertIn("refunded", {c.name for c in report.checks})

    def test_invalid_input_is_the_callers_and_refunded(self):
        before = self.available()
        with self.assertRaises(APIError) as e:
            self.client.execute(self.agent.agent_id, "refuse")
        self.assertEqual((e.exception.status, e.exception.code), (400, "invalid_input"))
        self.assertIn("the task must name a file", e.exception.message)
        self.assertEqual(self.available(), before, "a refused input is refunded")

    def test_slow_handler_fails_before_the_deadline(self):
        with self.assertRaises(APIError) as e:
            self.client.execute(self.agent.agent_id, "slow task", timeout_seconds=2)
        # The handler answered failed itself, a margin of 0.2 s before the
        # 2 s: the marketplace got an answer (execution_failed), it did not
        # time out (execution_timeout).
        self.assertEqual(e.exception.code, "execution_failed", str(e.exception))
        self.assertIn("did not finish within 1.8 s", e.exception.message)
        self.assertEqual(self.client.execution(e.exception.execution_id)["error"]["code"], "execution_failed")

    def test_retry_after_a_lost_answer_is_charged_once(self):
        url, proxy = dropping_proxy.start(marketplace.URL)
        self.addCleanup(proxy.server_close)
        self.addCleanup(proxy.shutdown)
        before = self.available()
        rec = Client(url, marketplace.API_KEY).execute(self.agent.agent_id, "wait, retry me", retries=6)
        self.assertEqual((rec["status"], rec["result"]), ("completed", "WAIT, RETRY ME"))
        self.assertEqual(self.agent.calls["wait, retry me"], 1)
        self.assertEqual(before - self.available(), 10_000, "charged once")
        mine = [e for e in self.client.executions(agent_id=self.agent.agent_id, limit=100)["executions"]
                if e["execution_id"] == rec["execution_id"]]
        self.assertEqual(len(mine), 1)

    def test_refuses_unsigned_requests(self):
        # The agent's service, called directly by someone other than the
        # marketplace, does nothing.
        import urllib.error
        import urllib.request
        req = urllib.request.Request(self.agent.endpoint, data=b'{"execution_id":"x","task":"free"}', method="POST")
        with self.assertRaises(urllib.error.HTTPError) as e:
            urllib.request.urlopen(req, timeout=10)
        self.assertEqual(e.exception.code, 401)
        self.assertNotIn("free", self.agent.calls)


if __name__ == "__main__":
    unittest.main()
