"""The encodings, hashes and signatures against the vectors the docs give."""

import json
import pathlib
import unittest

from crtx import SigningKey, base58, canonical, listing_statement, merkle_root, transaction_hash
from crtx import verify_signature as verify
from crtx.ledger import account_address, block_hash, cid, sha256
from crtx.protocol import request_signing_bytes, sign_usage, usage_statement, verify_request_signature

REPO = pathlib.Path(__file__).resolve().parents[3]


class Encodings(unittest.TestCase):
    def test_base58(self):
        self.assertEqual(base58.encode(bytes([0, 0, 0x28, 0x7F, 0xB4, 0xCD])), "11233QC4")
        k = "CfFyHyDm1Xo2Ytn1wr3uSzKtJY7QVHDokq5ubD28QKS8"
        self.assertEqual(base58.encode(base58.decode(k)), k)
        self.assertEqual(base58.decode(""), b"")
        with self.assertRaises(ValueError):
            base58.decode("0OIl")

    def test_canonical(self):
        got = canonical({"b": [1e21, 1.5e-7, 0.000001, -0.0, 10, 1.000001], "a": '<&>\u2028é\n"\\',
                         "\u20ac": 1, "\U0001F600": 2, "\u00e9": 3, "\uff5e": 4})
        # Members in UTF-16 order: U+1F600 (D83D DE00) before U+FF5E.
        self.assertEqual(got.decode(), '{"a":"<&>\u2028é\\n\\"\\\\","b":[1e+21,1.5e-7,0.000001,0,10,1.000001],'
                                       '"é":3,"€":1,"\U0001F600":2,"\uff5e":4}')
        self.assertEqual(canonical([0.1, 123456789012345680000, 5e-324, True, None]).decode(),
                         "[0.1,123456789012345680000,5e-324,true,null]")
        with self.assertRaises(ValueError):
            canonical("\ud800")

    def test_ed25519_rfc8032(self):
        pub = bytes.fromhex("d75a980182b10ab7d54bfed3c964073a0ee172f3daa62325af021a68f707511a")
        sig = bytes.fromhex("e5564300c360ac729086e2cc806e828a84877f1eb8e5d974d873e065224901555fb8821590a33bacc61e39701cf"
                            "9b46bd25bf5f0595bbe24655141438e7a100b")
        self.assertTrue(verify(base58.encode(pub), b"", base58.encode(sig)))
        self.assertFalse(verify(base58.encode(pub), b"x", base58.encode(sig)))
        self.assertFalse(verify("not base58 0", b"", base58.encode(sig)))

    def test_cid_and_addresses(self):
        self.assertEqual(cid(b""), "bafkreihdwdcefgh4dqkjv67uzcmw7ojee6xedzdetojuzjevtenxquvyku")
        self.assertEqual(account_address("escrow", "0192f3a1-7c2e-7d4b-9a41-5be7c0d3f8a2"),
                         "CfFyHyDm1Xo2Ytn1wr3uSzKtJY7QVHDokq5ubD28QKS8")

    def test_usage_statement_vector(self):
        # docs/creators.md, "Metered listings".
        eid, h = "01a2367e-0871-71f3-9730-8341caea378f", "sha256:2cf24dba5fb0a30e26e83b2ac5b9e29e1b161e5c1fa7425e73043362938b9824"
        self.assertEqual(usage_statement(eid, h, 1234), f"crtx-usage-v1\n{eid}\n{h}\n1234".encode())
        self.assertEqual(sign_usage(SigningKey(bytes(32)), eid, h, 1234),
                         "ed25519:41qsc12ym9JRV5yy6gGtuwuSg3XkoxZcEBdMYsP5FB4CE7BHb56ut2Bqr3drNdr1Yc4CSshVBNTGgF1bmY8jtEBv")

    def test_request_signature_example(self):
        # docs/creators.md, "Requests from the marketplace".
        market = SigningKey(bytes([3] * 32))
        self.assertEqual(market.public_key, "GyGKxMyg1p9SsHfm15MkNUu1u9TN2JtTspcdmrtGUdse")
        body = b'{"execution_id":"e1","task":"hi","parameters":{},"user_pubkey":"U","timeout_seconds":60}'
        scope = ("1700000000", "agt_8zmONHevjO0ED8RI", "9hSR6S7WPtxmTojgo6GG3k4yDPecgJY292j7xrsUGWBu", "mainnet", False)
        sig = "ed25519:5qsstjTAMLcq3BYU9hHeo4WLaBefBuE1Yk8TC2JJYxAUmBVZSe5upmz5PsL7dpAwjf6yFqHY1DQoSWVZduX3YR53"
        self.assertEqual("ed25519:" + market.sign_base58(request_signing_bytes(*scope, body)), sig)
        self.assertTrue(verify_request_signature(market.public_key, *scope, body, sig))
        self.assertFalse(verify_request_signature(market.public_key, *scope[:4], True, body, sig))
        self.assertFalse(verify_request_signature(market.public_key, *scope, body + b" ", sig))

    def test_listing_statement_examples(self):
        # docs/creators.md, "The listing statement".
        wallet, agent = SigningKey(bytes([1] * 32)), SigningKey(bytes([2] * 32))
        self.assertEqual(wallet.public_key, "AKnL4NNf3DGWZJS6cPknBuEGnVsV4A4m5tgebLHaRSZ9")
        self.assertEqual(agent.public_key, "9hSR6S7WPtxmTojgo6GG3k4yDPecgJY292j7xrsUGWBu")
        listed = {"creator": wallet.public_key, "listing_nonce": "lst_4fQx9ZbT2mKpW7sLrN3vYc",
                  "marketplace": "crtx.example.com", "name": "Word counter", "price_per_call_usdc": "0.05",
                  "signing_public_key": agent.public_key, "agent_id": "agt_x", "status": "active"}
        stmt = listing_statement("AgentListed", listed)
        self.assertEqual(stmt.decode(), '{"creator":"AKnL4NNf3DGWZJS6cPknBuEGnVsV4A4m5tgebLHaRSZ9","kind":"AgentListed",'
                         '"listing_nonce":"lst_4fQx9ZbT2mKpW7sLrN3vYc","marketplace":"crtx.example.com",'
                         '"name":"Word counter","price_per_call_usdc":"0.05",'
                         '"signing_public_key":"9hSR6S7WPtxmTojgo6GG3k4yDPecgJY292j7xrsUGWBu"}')
        self.assertEqual(wallet.sign_base58(stmt), "4o25uJmrJEQbHLFgA2HzoFhUmLkc4AprU6m18UeWfGhEYZ6mUMQiYoPPGsZgrvcZ"
                                                   "KsmJojSQj33tE6EREKch1gmq")
        self.assertEqual(agent.sign_base58(stmt), "YjDLAxbNWVn3i5TnVfK52GJwbR6DNESfo3idFqDpnAwPhASYdBpN4iEQk7jsN5RYN7K"
                                                  "3rcCjYtppYChCSdYcWFX")
        updated = {"agent_id": "agt_8zmONHevjO0ED8RI", "creator": wallet.public_key,
                   "listing_nonce": "lst_8HdN2kVq5TzR1wLmXp7bJe", "marketplace": "crtx.example.com",
                   "replaces": "3FZbgi29cpjq2GjdwV8eyHuJJnkLtktZc5", "signing_public_key": agent.public_key}
        stmt = listing_statement("ListingUpdated", updated)
        self.assertTrue(verify(wallet.public_key, stmt, "4BBpMvqPyYo6y9aXASoWNMZq4VTYkzkTGopsLGRR3KfgDpMpTfycrSXoD3EK"
                                                        "jHbEyyuTsNjhp8896pKKb3XvFz6Y"))
        self.assertTrue(verify(agent.public_key, stmt, "4jZ7emfPtT3mcnsZm99XN2ZvggLSDW5azqdxqEegM5LxuutcFgumM5Z7qbjo"
                                                       "ZzhndwUmHVNdLPjEUGwJuVtszwGU"))

    def test_transaction_v2_example(self):
        # docs/ledger.md's worked example: the canonical bytes read back and
        # written again are the same bytes, and hash as the docs say.
        text = ('{"accounts":[],"created_at":"2026-11-23T14:05:09.1205Z","data":{"agent_id":"agt_ssLrwuK2hYrMqw7D",'
                '"cid":"bafkreihdwdcefgh4dqkjv67uzcmw7ojee6xedzdetojuzjevtenxquvyku","execution_id":'
                '"0192f3a1-7c2e-7d4b-9a41-5be7c0d3f8a2","execution_time_ms":"412","listing_tx":'
                '"3GkQ6H9acCC6pfYkpmX4Cd6QhRAtUNgjf","result_hash":'
                '"sha256:a1b7eb2ee7a6aded8dda4e6cf30826f5afffb28a5597ee9389e91eb326d4e319","signature":'
                '"ed25519:4vJ9JU1bJJE96FWSJKvHsmmFADCg4gpZQff4P3bkLKi2Np5ZThpQcxvXbgqr5CJ7L3qXgZP8UJmRBwUpDKzTSQoC",'
                '"signing_public_key":"CmHxG4NfaEV3Hn9eBPvWvWaZ8mh2Uh5nZeJXhZzXbJzL","status":"completed"},'
                '"environment":"devnet","id":"3GkQ7QDDnjb2RB8xWctb7UMA9VHSrren8","kind":"ExecutionRecord","postings":'
                '[{"amount_usdc":0.0495,"from":"CfFyHyDm1Xo2Ytn1wr3uSzKtJY7QVHDokq5ubD28QKS8","to":'
                '"6VoZVjQhvK9tSdPaxjHRofkuaSpcrVDUS1yfd4KuXCT9"},{"amount_usdc":0.0005,"from":'
                '"CfFyHyDm1Xo2Ytn1wr3uSzKtJY7QVHDokq5ubD28QKS8","to":"GT8MxiFyGL3dcd8BKGSLsaggCYXAfg6rdGeR3x3JwNuh"}],'
                '"version":2}')
        tx = json.loads(text)
        self.assertEqual(canonical(tx).decode(), text)
        tx.update(seq=9, block_height=31, hash="ignored")
        self.assertEqual(transaction_hash(tx), "8fc64fbe69975de6e4347e54bd63c04078d6655da7c4578b97f6f4ae20694540")
        self.assertEqual(merkle_root([transaction_hash(tx)]),
                         "75d4eb94e143b095053f7df92866867e448e9a116d051fb8e71d987c81a88d3c")
        block = {"environment": "devnet", "height": 31, "prev_hash": "5f0c6d3e0b1a9c8e7d6f5a4b3c2d1e0f9a8b7c6d5e4f3a2b1c0d"
                 "9e8f7a6b5c4d", "merkle_root": "75d4eb94e143b095053f7df92866867e448e9a116d051fb8e71d987c81a88d3c",
                 "tx_count": 1, "sealed_at": "2026-11-23T14:05:11.120503Z", "version": 2}
        self.assertEqual(block_hash(block), "0b5c69cbab638acec378d0d31f3832fca0523a76cf11ac48a42de00a6e612a3c")

    def test_version_1_fixture(self):
        f = json.loads((REPO / "examples/verify-node/fixtures/ledger-v1.json").read_text())
        hashes = [transaction_hash(t) for t in f["transactions"]]
        self.assertEqual(hashes, [t["hash"] for t in f["transactions"]])
        self.assertEqual(merkle_root(hashes), f["block"]["merkle_root"])
        self.assertEqual(block_hash(f["block"]), f["block"]["hash"])
        self.assertTrue(verify(f["authority"], bytes.fromhex(f["block"]["hash"]), f["block"]["signature"]))
        changed = dict(f["transactions"][1], data=dict(f["transactions"][1]["data"], note="x"))
        self.assertNotEqual(transaction_hash(changed), f["transactions"][1]["hash"])

    def test_merkle_odd_node_carried_up(self):
        hs = [sha256(bytes([i])).hex() for i in range(3)]
        from crtx.ledger import merkle_leaf, merkle_node
        want = merkle_node(merkle_node(merkle_leaf(hs[0]), merkle_leaf(hs[1])), merkle_leaf(hs[2]))
        self.assertEqual(merkle_root(hs), want.hex())

    def test_key_file(self):
        import os
        import tempfile
        with tempfile.TemporaryDirectory() as d:
            path = os.path.join(d, "agent-key.json")
            k = SigningKey.load_or_create(path)
            self.assertEqual(os.stat(path).st_mode & 0o777, 0o600)
            self.assertEqual(SigningKey.load_or_create(path).public_key, k.public_key)
            with open(path) as f:
                raw = json.load(f)
            self.assertEqual(len(raw), 64)
            raw[40] ^= 1
            with open(path, "w") as f:
                json.dump(raw, f)
            with self.assertRaises(ValueError):
                SigningKey.load(path)


if __name__ == "__main__":
    unittest.main()
