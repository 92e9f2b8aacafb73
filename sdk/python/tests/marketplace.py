"""A marketplace to test against, and the example agent listed on it.

go test ./sdk starts crtxd on 127.0.0.1 and runs these tests with
CRTX_TEST_URL (the marketplace), CRTX_TEST_API_KEY (a funded devnet key) and
CRTX_TEST_CREATOR_SEED (hex seed of a wallet holding mainnet collateral).
"""

import os
import threading
import time
import unittest

import crtx
import crtx.httpserver
from crtx import Client, SigningKey, listing_statement
from examples.shout import shout

URL = os.environ.get("CRTX_TEST_URL", "")
API_KEY = os.environ.get("CRTX_TEST_API_KEY", "")
CREATOR_SEED = os.environ.get("CRTX_TEST_CREATOR_SEED", "")
PRICE = "0.01"


def require():
    if not (URL and API_KEY and CREATOR_SEED):
        raise unittest.SkipTest("no marketplace: go test ./sdk runs these against crtxd")


class Listed:
    """The example's function, with a slow, a failing and a waiting task, served by
    crtx.httpserver and listed by a creator wallet of its own."""

    def __init__(self):
        self.calls: dict[str, int] = {}
        self.lock = threading.Lock()
        self.key = SigningKey.generate()
        self.handler = crtx.Handler(self.key, self.fn, marketplace=URL)
        self.server = crtx.httpserver.serve(self.handler, "127.0.0.1", 0)
        threading.Thread(target=self.server.serve_forever, daemon=True).start()
        self.endpoint = f"http://127.0.0.1:{self.server.server_address[1]}/execute"
        self.wallet = SigningKey(bytes.fromhex(CREATOR_SEED))
        self.listing = create_listing(self.wallet, self.key, self.endpoint)
        self.agent_id = self.listing["agent_id"]

    def fn(self, req: crtx.Request):
        with self.lock:
            self.calls[req.task] = self.calls.get(req.task, 0) + 1
        if req.task.startswith("slow"):
            time.sleep(req.timeout_seconds + 5)
        if req.task == "raise":
            raise RuntimeError("the model is down")
        if req.task == "refuse":
            raise crtx.InvalidInput("the task must name a file")
        if req.task.startswith("wait"):
            time.sleep(0.5)
        return shout(req)


def sign_in(wallet: SigningKey) -> Client:
    """A client acting with a session of wallet."""
    anon = Client(URL)
    ch = anon._json("POST", "/v1/auth/challenge", {"wallet": wallet.public_key})
    s = anon._json("POST", "/v1/auth/session", {"wallet": wallet.public_key, "message": ch["message"],
                                                "signature": wallet.sign_base58(ch["message"].encode())})
    return Client(URL, s["session_token"])


def create_listing(wallet: SigningKey, agent_key: SigningKey, endpoint: str) -> dict:
    """Lists an agent as docs/creators.md says: a nonce, the listing
    statement signed by the wallet and by the agent's key."""
    c = sign_in(wallet)
    nonce = c._json("POST", "/v1/creator/listing-nonces")
    name = "Shout"
    data = {"creator": wallet.public_key, "listing_nonce": nonce["nonce"], "marketplace": nonce["marketplace"],
            "name": name, "price_per_call_usdc": PRICE, "signing_public_key": agent_key.public_key}
    stmt = listing_statement("AgentListed", data)
    return c._json("POST", "/v1/creator/agents", {
        "name": name, "tagline": "Answers in capitals.", "description": "Answers the task in capitals.",
        "tags": ["writing"], "input_schema": {"type": "object"}, "output_schema": {"type": "string"},
        "pricing_model": "pay_per_use", "price_per_call_usdc": float(PRICE), "endpoint_url": endpoint,
        "signing_public_key": agent_key.public_key, "timeout_seconds": 30, "listing_nonce": nonce["nonce"],
        "marketplace": nonce["marketplace"], "creator_signature": wallet.sign_base58(stmt),
        "key_signature": agent_key.sign_base58(stmt)})


_listed = None
_once = threading.Lock()


def listed() -> Listed:
    """The agent, listed on first use and shared by the tests."""
    global _listed
    with _once:
        if _listed is None:
            _listed = Listed()
        return _listed
