"""The creator handler, through its ASGI adapter called as an ASGI server
would, with requests signed by a marketplace key of the test's own."""

import asyncio
import json
import threading
import time
import unittest

import crtx.asgi
from crtx import Handler, SigningKey, result_hash
from crtx import verify_signature
from crtx.protocol import request_signing_bytes, usage_statement
from tests import jsonserver

MARKET = SigningKey(bytes([3] * 32))


def signed_headers(body: bytes, signing_key: str, *, agent_id="agt_1", environment="devnet", test=False,
                   market=MARKET, at=None) -> list[tuple[bytes, bytes]]:
    ts = str(int(at if at is not None else time.time()))
    sig = "ed25519:" + market.sign_base58(request_signing_bytes(ts, agent_id, signing_key, environment, test, body))
    h = {"X-Crtx-Timestamp": ts, "X-Crtx-Signing-Key": signing_key, "X-Crtx-Environment": environment,
         "X-Crtx-Signature": sig, "Content-Type": "application/json"}
    if agent_id:
        h["X-Crtx-Agent-Id"] = agent_id
    if test:
        h["X-Crtx-Test"] = "true"
    return [(k.lower().encode(), v.encode()) for k, v in h.items()]


def call(app, body: bytes, headers, method="POST", chunks=2) -> tuple[int, dict, bytes]:
    """One request to an ASGI app: its status, headers and body."""
    parts = [body[i * len(body) // chunks:(i + 1) * len(body) // chunks] for i in range(chunks)]
    messages = [{"type": "http.request", "body": p, "more_body": i < chunks - 1} for i, p in enumerate(parts)]
    sent = []

    async def receive():
        return messages.pop(0) if messages else {"type": "http.disconnect"}

    async def send(msg):
        sent.append(msg)

    scope = {"type": "http", "asgi": {"version": "3.0"}, "http_version": "1.1", "method": method,
             "path": "/execute", "raw_path": b"/execute", "query_string": b"", "headers": headers}
    asyncio.run(app(scope, receive, send))
    start, body_msgs = sent[0], sent[1:]
    return (start["status"], {k.decode(): v.decode() for k, v in start["headers"]},
            b"".join(m.get("body", b"") for m in body_msgs))


def request_body(execution_id="e1", task="hi", timeout=60) -> bytes:
    return json.dumps({"execution_id": execution_id, "task": task, "parameters": {"n": 1}, "user_pubkey": "U",
                       "timeout_seconds": timeout}).encode()


class CreatorHandler(unittest.TestCase):
    def setUp(self):
        self.key = SigningKey.generate()
        self.seen = []
        self.calls = 0
        self.lock = threading.Lock()

        def fn(req):
            with self.lock:
                self.calls += 1
                self.seen.append(req)
            if req.task == "raise":
                raise RuntimeError("the model is down")
            if req.task == "slow":
                time.sleep(5)
            if req.task == "wait":
                time.sleep(0.3)
            return req.task.upper() + " ✓", 7

        self.handler = Handler(self.key, fn, marketplace_key=MARKET.public_key, agent_ids=["agt_1"])
        self.app = crtx.asgi.app(self.handler)

    def post(self, body, **kw):
        return call(self.app, body, signed_headers(body, self.key.public_key, **kw))

    def test_completed_hashed_and_signed(self):
        status, headers, out = self.post(request_body())
        self.assertEqual(status, 200)
        self.assertEqual(headers["content-type"], "application/json")
        reply = json.loads(out)
        self.assertEqual(reply["status"], "completed")
        self.assertEqual(reply["result"], "HI ✓")
        self.assertEqual(reply["result_hash"], result_hash("HI ✓"))
        self.assertTrue(reply["signature"].startswith("ed25519:"))
        self.assertTrue(verify_signature(self.key.public_key, reply["result_hash"].encode(), reply["signature"]))
        self.assertEqual(reply["tokens_used"], 7)
        # The tokens are signed: a metered listing is charged from them.
        self.assertTrue(verify_signature(self.key.public_key, usage_statement(reply["execution_id"], reply["result_hash"], 7),
                                         reply["usage_signature"].removeprefix("ed25519:")))
        req = self.seen[0]
        self.assertEqual((req.agent_id, req.environment, req.test, req.parameters, req.user_pubkey),
                         ("agt_1", "devnet", False, {"n": 1}, "U"))

    def test_metered_signs_no_tokens_too(self):
        # A metered listing's reply reports and signs its tokens, 0 too;
        # the function is told the most tokens the hold pays for.
        handler = Handler(self.key, lambda req: f"quiet, at most {req.max_tokens}", marketplace_key=MARKET.public_key, metered=True)
        body = json.dumps({**json.loads(request_body()), "max_tokens": 1200}).encode()
        status, _, out = call(crtx.asgi.app(handler), body, signed_headers(body, self.key.public_key))
        reply = json.loads(out)
        self.assertEqual((status, reply["tokens_used"], reply["result"]), (200, 0, "quiet, at most 1200"))
        self.assertTrue(verify_signature(self.key.public_key, usage_statement(reply["execution_id"], reply["result_hash"], 0),
                                         reply["usage_signature"].removeprefix("ed25519:")))

    def test_refusals(self):
        body = request_body()
        other = SigningKey.generate()
        cases = {
            "a wrong marketplace key": (401, signed_headers(body, self.key.public_key, market=other)),
            "a changed environment": (401, [(k, b"mainnet" if k == b"x-crtx-environment" else v)
                                            for k, v in signed_headers(body, self.key.public_key)]),
            "an old timestamp": (401, signed_headers(body, self.key.public_key, at=time.time() - 600)),
            "another signing key": (403, signed_headers(body, other.public_key)),
            "another agent": (403, signed_headers(body, self.key.public_key, agent_id="agt_2")),
            "no agent, not a test": (403, signed_headers(body, self.key.public_key, agent_id="")),
            "another environment": (403, signed_headers(body, self.key.public_key, environment="testnet")),
            "no signature": (401, [(b"x-crtx-timestamp", str(int(time.time())).encode())]),
        }
        for name, (want, headers) in cases.items():
            with self.subTest(name):
                status, _, out = call(self.app, body, headers)
                self.assertEqual(status, want, out)
                self.assertIn("error", json.loads(out))
        # Changed on the way, the body no longer verifies either.
        status, _, _ = call(self.app, request_body(task="other"), signed_headers(body, self.key.public_key))
        self.assertEqual(status, 401)
        self.assertEqual(self.calls, 0)
        # A test naming no agent is served: a new listing's reachability test.
        status, _, out = self.post(request_body(), agent_id="", test=True, environment="mainnet")
        self.assertEqual((status, json.loads(out)["status"]), (200, "completed"))
        self.assertTrue(self.seen[0].test)

    def test_not_post(self):
        status, headers, _ = call(self.app, b"", [], method="GET")
        self.assertEqual((status, headers.get("allow")), (405, "POST"))

    def test_not_a_request(self):
        status, _, _ = self.post(b'{"task":"no id"}')
        self.assertEqual(status, 400)

    def test_exception_is_failed(self):
        status, _, out = self.post(request_body(task="raise"))
        reply = json.loads(out)
        self.assertEqual((status, reply["status"], reply["error"]), (200, "failed", "the model is down"))
        self.assertIsNone(reply["result"])
        self.assertIsNone(reply["result_hash"])
        self.assertIsNone(reply["signature"])

    def test_deadline_is_failed_before_the_timeout(self):
        started = time.monotonic()
        status, _, out = self.post(request_body(task="slow", timeout=2))
        took = time.monotonic() - started
        reply = json.loads(out)
        self.assertEqual((status, reply["status"]), (200, "failed"))
        self.assertIn("did not finish within 1.8 s", reply["error"])
        # Answered at the margin, before the marketplace's 2 s run out.
        self.assertLess(took, 2.0)
        self.assertGreaterEqual(took, 1.75)

    def test_repeated_execution_id_answers_the_first_answer(self):
        body = request_body(execution_id="dup", task="wait")
        answers = []

        def post():
            answers.append(self.post(body)[2])

        threads = [threading.Thread(target=post) for _ in range(3)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        answers.append(self.post(body)[2])
        self.assertEqual(self.calls, 1)
        self.assertEqual(len(set(answers)), 1)
        self.assertEqual(json.loads(answers[0])["status"], "completed")

    def test_async_function(self):
        async def fn(req):
            await asyncio.sleep(0.01)
            return "async " + req.task

        app = crtx.asgi.app(Handler(self.key, fn, marketplace_key=MARKET.public_key))
        body = request_body()
        _, _, out = call(app, body, signed_headers(body, self.key.public_key))
        self.assertEqual(json.loads(out)["result"], "async hi")

    def test_needs_a_marketplace(self):
        with self.assertRaises(ValueError):
            Handler(self.key, lambda r: "x")
        h = Handler(self.key, lambda r: "x", accept_unsigned=True)
        status, _, out = call(crtx.asgi.app(h), request_body(), [])
        self.assertEqual((status, json.loads(out)["status"]), (200, "completed"))

    def test_lifespan(self):
        msgs = [{"type": "lifespan.startup"}, {"type": "lifespan.shutdown"}]
        sent = []

        async def receive():
            return msgs.pop(0)

        async def send(m):
            sent.append(m["type"])

        asyncio.run(self.app({"type": "lifespan"}, receive, send))
        self.assertEqual(sent, ["lifespan.startup.complete", "lifespan.shutdown.complete"])


if __name__ == "__main__":
    unittest.main()


def read_events(raw: bytes) -> list[dict]:
    out = []
    for block in raw.decode().split("\n\n"):
        if block:
            out.append(dict(line.split(": ", 1) for line in block.split("\n")))
    return out


class StreamTest(unittest.TestCase):
    """A generator streams its pieces to a request that accepts a stream,
    over ASGI and the standard library's server, and signs them joined."""

    def test_generator_streams_over_asgi(self):
        key = SigningKey(bytes([9] * 32))

        def shout(req):
            for word in req.task.split():
                yield word.upper() + " "
            return 4

        app = crtx.asgi.app(Handler(key, shout, marketplace_key=MARKET.public_key))
        body = json.dumps({"execution_id": "s1", "task": "bon jour", "timeout_seconds": 5}).encode()
        headers = signed_headers(body, key.public_key) + [(b"accept", b"application/json, text/event-stream")]
        status, hdrs, raw = call(app, body, headers)
        self.assertEqual((status, hdrs["content-type"]), (200, "text/event-stream"))
        events = read_events(raw)
        self.assertEqual([json.loads(e["data"])["text"] for e in events if e.get("event") == "delta"], ["BON ", "JOUR "])
        reply = json.loads(events[-1]["data"])
        self.assertEqual((events[-1]["event"], reply["result"], reply["tokens_used"]), ("result", "BON JOUR ", 4))
        self.assertEqual(reply["result_hash"], result_hash("BON JOUR "))
        self.assertTrue(verify_signature(key.public_key, reply["result_hash"].encode(), reply["signature"]))
        # The retry is answered whole, as JSON.
        status, hdrs, again = call(app, body, headers)
        self.assertEqual((hdrs["content-type"], json.loads(again)), ("application/json", reply))

    def test_async_generator_and_whole_results_over_httpserver(self):
        import http.client

        import crtx.httpserver

        key = SigningKey(bytes([10] * 32))

        async def pieces(req):
            yield "Bon"
            yield "jour"

        for fn, want in ((pieces, ["Bon", "jour"]), (lambda req: "whole", ["whole"])):
            server = crtx.httpserver.serve(Handler(key, fn, marketplace_key=MARKET.public_key))
            threading.Thread(target=server.serve_forever, daemon=True).start()
            try:
                body = json.dumps({"execution_id": "s-" + want[0], "task": "x", "timeout_seconds": 5}).encode()
                headers = {k.decode(): v.decode() for k, v in signed_headers(body, key.public_key)}
                headers["Accept"] = "text/event-stream"
                conn = http.client.HTTPConnection(*server.server_address)
                conn.request("POST", "/execute", body, headers)
                resp = conn.getresponse()
                events = read_events(resp.read())
                self.assertEqual(resp.getheader("Content-Type"), "text/event-stream")
                self.assertEqual([json.loads(e["data"])["text"] for e in events if e.get("event") == "delta"], want)
                self.assertEqual(json.loads(events[-1]["data"])["result"], "".join(want))
            finally:
                server.shutdown()
                server.server_close()


class MarketplaceRotation(unittest.TestCase):
    """A marketplace rotating its key publishes the next one first: a handler
    that read both accepts requests signed with either, across the switch,
    without reading the keys again; one that read only the old key follows
    the switch by reading again, at most once per refresh interval."""

    def setUp(self):
        self.next = SigningKey(bytes([4] * 32))
        self.published = {"signing_public_key": MARKET.public_key}
        self.reads = 0

        def answer(method, body):
            self.reads += 1
            return self.published

        self.server, self.url = jsonserver.serve(answer)
        self.key = SigningKey.generate()

    def tearDown(self):
        self.server.shutdown()
        self.server.server_close()

    def post(self, app, market, execution_id):
        body = request_body(execution_id)
        status, _, out = call(app, body, signed_headers(body, self.key.public_key, market=market))
        return status, out

    def test_overlap(self):
        self.published["next_signing_public_key"] = self.next.public_key
        app = crtx.asgi.app(Handler(self.key, lambda req: "ok", marketplace=self.url))
        self.assertEqual(self.post(app, MARKET, "e1")[0], 200)
        self.assertEqual(self.post(app, self.next, "e2")[0], 200)  # a replica switched already
        self.published = {"signing_public_key": self.next.public_key}  # the switch is done
        self.assertEqual(self.post(app, self.next, "e3")[0], 200)
        self.assertEqual(self.reads, 1)
        status, out = self.post(app, SigningKey.generate(), "e4")
        self.assertEqual(status, 401, out)

    def test_refresh(self):
        from crtx.marketplace_key import MarketplaceKey

        now = [0.0]
        keys = MarketplaceKey(self.url, refresh_after=60, clock=lambda: now[0])
        self.assertEqual(keys.keys(), [MARKET.public_bytes])
        self.published = {"signing_public_key": MARKET.public_key, "next_signing_public_key": self.next.public_key}
        self.assertEqual(keys.refresh(), [MARKET.public_bytes])  # read a moment ago: not again
        now[0] = 61
        self.assertEqual(keys.refresh(), [MARKET.public_bytes, self.next.public_bytes])
        self.assertEqual(self.reads, 2)
        # An hour on, keys() reads them again: the switch is known, with the
        # previous key that replicas not switched yet sign with.
        self.published = {"signing_public_key": self.next.public_key, "previous_signing_public_key": MARKET.public_key}
        self.assertEqual(keys.keys(), [MARKET.public_bytes, self.next.public_bytes])
        now[0] = 61 + 3600
        self.assertEqual(keys.keys(), [self.next.public_bytes, MARKET.public_bytes])
        self.assertEqual(self.reads, 3)
        # A read that fails keeps the keys, and is not tried again within the minute.
        self.server.shutdown()
        self.server.server_close()
        now[0] += 3600
        self.assertEqual(keys.keys(), [self.next.public_bytes, MARKET.public_bytes])
        self.assertEqual(keys.refresh(), [self.next.public_bytes, MARKET.public_bytes])
        self.assertEqual(self.reads, 3)
