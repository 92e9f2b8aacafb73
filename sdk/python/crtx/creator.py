"""The creator side: one function behind the creator protocol.

    key = SigningKey.load_or_create("agent-key.json")
    handler = Handler(key, lambda req: req.task.upper(), marketplace="https://crtx.example")
    status, headers, body = handler.handle(body_bytes, request_headers)

crtx.asgi and crtx.httpserver serve a Handler over HTTP.

A language model's words can go out as it writes them: a generator function
(or an async one) yields pieces, each sent as it comes to a marketplace that
accepts a stream, and the result is the pieces joined, signed
(docs/creators.md, "Streaming"); a generator's return value is its tokens
used.
"""

import asyncio
import collections
import dataclasses
import inspect
import json
import queue
import threading
import time
from collections.abc import Callable, Iterator, Mapping

from . import base58
from .keys import SigningKey
from .marketplace_key import MarketplaceKey
from .protocol import (HEADER_AGENT_ID, HEADER_ENVIRONMENT, HEADER_SIGNATURE, HEADER_SIGNING_KEY, HEADER_TEST,
                       HEADER_TIMESTAMP, result_hash, sign_result, sign_usage, verify_request_signature)

MAX_BODY = 1 << 20
MAX_RESULT_BYTES = 4 << 20


@dataclasses.dataclass(frozen=True)
class Request:
    """One task from the marketplace."""
    execution_id: str
    task: str
    parameters: dict
    user_pubkey: str
    timeout_seconds: int
    # The listing the request is for (X-Crtx-Agent-Id); "" for the
    # reachability test of a new listing and the Test Execution tool.
    agent_id: str
    environment: str
    # True for the marketplace's reachability and test requests, which
    # nobody pays for.
    test: bool
    # time.monotonic() at which the handler answers failed if the function
    # has not returned: a margin before the marketplace's own deadline.
    deadline: float
    # For a metered listing's call, the most tokens the caller's hold pays
    # for (usage above it is not charged); None for a price per call.
    max_tokens: int | None = None

    def remaining(self) -> float:
        """Seconds left before the handler gives up."""
        return max(0.0, self.deadline - time.monotonic())


# A function returns the result, or (result, tokens_used); raising means
# failed, with the exception's text as the error. A generator function (or
# an async one) yields the result's pieces instead.
Func = Callable[[Request], "str | tuple[str, int]"]


class InvalidInput(Exception):
    """Raised by a function, says the call failed for its input, not the agent:
    the caller gets a 400 invalid_input and the failure is counted apart."""


class Refused(Exception):
    """A request the handler does not run, with the HTTP status it answers."""

    def __init__(self, status: int, message: str):
        super().__init__(message)
        self.status = status


class Handler:
    """Runs fn for each request of the creator protocol and answers as the
    marketplace verifies: hashed, signed, failed before the deadline, the
    first answer again for a repeated execution_id.

    marketplace (its URL; the key is read from /.well-known/crtx.json and
    kept) or marketplace_key (base58) makes the handler refuse (401) a request
    whose X-Crtx-Signature does not verify or whose timestamp is more than
    max_skew seconds off, and (403) one signed for another signing key, for
    an environment other than mainnet or devnet, naming no agent without
    being a test, or, with agent_ids, for another agent. Without either,
    accept_unsigned=True must say that anyone may call it for free.

    metered=True is for a metered listing: every completed reply reports its
    tokens (0 too) and signs them (usage_signature), which the marketplace
    charges from. Without it, a reply that reports tokens signs them too.
    """

    def __init__(self, key: SigningKey, fn: Func, *, marketplace: str | None = None,
                 marketplace_key: str | None = None, agent_ids: list[str] | None = None,
                 accept_unsigned: bool = False, max_skew: float = 300, margin: float | None = None,
                 remember: int = 10_000, now: Callable[[], float] = time.time, metered: bool = False):
        if marketplace is None and marketplace_key is None and not accept_unsigned:
            raise ValueError("give marketplace (its URL) or marketplace_key, so that requests the marketplace "
                             "did not sign are refused; accept_unsigned=True is for local tests only")
        self.key = key
        self.fn = fn
        self._market = MarketplaceKey(marketplace) if marketplace else None
        self._market_key = base58.decode_key(marketplace_key, "marketplace_key") if marketplace_key else None
        self.agent_ids = list(agent_ids or [])
        self.max_skew = max_skew
        self.margin = margin
        self.remember = remember
        self.now = now
        self.metered = metered
        self._lock = threading.Lock()
        self._answers: dict[str, _Answer] = {}
        self._order: collections.deque[str] = collections.deque()

    @property
    def public_key(self) -> str:
        """The base58 key to register as the listing's signing_public_key."""
        return self.key.public_key

    def handle(self, body: bytes, headers: Mapping[str, str], stream: bool = False
               ) -> tuple[int, list[tuple[str, str]], "bytes | Iterator[bytes]"]:
        """Answers one POST: its status, headers and body. headers may be any
        mapping; names are matched without regard to case. Blocks until the
        answer is ready (at the latest a margin before the deadline).

        With stream=True (a server that can send a body as it comes), a
        first request that accepts text/event-stream is answered at once
        with an iterator of the stream's events, which blocks for each."""
        hdr = {k.lower(): v for k, v in headers.items()}
        try:
            if len(body) > MAX_BODY:
                raise Refused(413, "the request is too large")
            if self._market is not None or self._market_key is not None:
                self._check_signature(body, hdr)
            try:
                msg = json.loads(body)
            except (ValueError, UnicodeDecodeError):
                msg = None
            if not isinstance(msg, dict) or not isinstance(msg.get("execution_id"), str) or not msg["execution_id"]:
                raise Refused(400, "the body is not a creator execution request")
        except Refused as e:
            return e.status, [("Content-Type", "application/json")], json.dumps({"error": str(e)}).encode()
        answer, first = self._claim(msg["execution_id"])
        if first and stream and _accepts(hdr.get("accept", ""), "text/event-stream"):
            pieces: queue.Queue = queue.Queue()

            def run():
                try:
                    answer.body = self._run(msg, hdr, pieces.put)
                finally:
                    answer.done.set()
                    pieces.put(None)

            threading.Thread(target=run, name=f"crtx-stream-{msg['execution_id']}", daemon=True).start()
            return 200, [("Content-Type", "text/event-stream"), ("Cache-Control", "no-store")], _events(pieces, answer)
        if first:
            try:
                answer.body = self._run(msg, hdr)
            finally:
                answer.done.set()
        else:
            answer.done.wait()
        return 200, [("Content-Type", "application/json")], answer.body

    def _check_signature(self, body: bytes, hdr: Mapping[str, str]) -> None:
        ts = hdr.get(HEADER_TIMESTAMP.lower(), "")
        if not ts.isascii() or not ts.lstrip("-").isdigit():
            raise Refused(401, f"missing or malformed {HEADER_TIMESTAMP}")
        if abs(self.now() - int(ts)) > self.max_skew:
            raise Refused(401, f"{HEADER_TIMESTAMP} is too far from now")
        agent_id = hdr.get(HEADER_AGENT_ID.lower(), "")
        signing_key = hdr.get(HEADER_SIGNING_KEY.lower(), "")
        environment = hdr.get(HEADER_ENVIRONMENT.lower(), "")
        test = hdr.get(HEADER_TEST.lower()) == "true"
        sig = hdr.get(HEADER_SIGNATURE.lower(), "")

        def verifies(key):
            return verify_request_signature(key, ts, agent_id, signing_key, environment, test, body, sig)

        if self._market_key is not None:
            ok = verifies(self._market_key)
        else:
            ok = any(verifies(k) for k in self._market.keys())
            if not ok:
                # The marketplace may have a new key; refresh reads its keys
                # at most once a minute.
                new = self._market.refresh()
                ok = new is not None and any(verifies(k) for k in new)
        if not ok:
            raise Refused(401, f"{HEADER_SIGNATURE} does not verify against the marketplace key")
        if signing_key != self.public_key:
            raise Refused(403, f"the request is for another signing key ({HEADER_SIGNING_KEY})")
        if environment not in ("mainnet", "devnet"):
            raise Refused(403, f"{HEADER_ENVIRONMENT} is neither mainnet nor devnet")
        if not agent_id:
            if not test:
                raise Refused(403, f"a request that names no agent ({HEADER_AGENT_ID}) must be a test")
            return
        if self.agent_ids and agent_id not in self.agent_ids:
            raise Refused(403, f"the request is for another agent ({HEADER_AGENT_ID})")

    def _claim(self, execution_id: str) -> tuple["_Answer", bool]:
        """The answer slot of an execution id and whether this request is the
        first to ask, forgetting the oldest answers past remember."""
        with self._lock:
            a = self._answers.get(execution_id)
            if a is not None:
                return a, False
            a = _Answer()
            self._answers[execution_id] = a
            self._order.append(execution_id)
            while len(self._order) > self.remember:
                del self._answers[self._order.popleft()]
            return a, True

    def _margin(self, timeout: float) -> float:
        if self.margin is not None:
            return self.margin
        return min(max(timeout / 10, 0.2), 2.0)

    def _run(self, msg: dict, hdr: Mapping[str, str], on_piece: Callable[[str], None] | None = None) -> bytes:
        timeout = msg.get("timeout_seconds")
        if not isinstance(timeout, int) or isinstance(timeout, bool) or timeout <= 0:
            timeout = 60
        limit = timeout - self._margin(timeout)
        params = msg.get("parameters")
        req = Request(execution_id=msg["execution_id"], task=str(msg.get("task", "")),
                      parameters=params if isinstance(params, dict) else {},
                      user_pubkey=str(msg.get("user_pubkey", "")), timeout_seconds=timeout,
                      agent_id=hdr.get(HEADER_AGENT_ID.lower(), ""),
                      environment=hdr.get(HEADER_ENVIRONMENT.lower(), ""),
                      test=hdr.get(HEADER_TEST.lower()) == "true", deadline=time.monotonic() + limit,
                      max_tokens=msg["max_tokens"] if isinstance(msg.get("max_tokens"), int) else None)
        outcome: dict = {}
        done = threading.Event()
        collected: list[str] = []

        def piece(p):
            if not isinstance(p, str):
                raise TypeError(f"the agent yielded {type(p).__name__}, not text")
            if p and not done.is_set():
                collected.append(p)
                if on_piece is not None:
                    on_piece(p)

        def work():
            try:
                if inspect.isasyncgenfunction(self.fn):
                    async def drain():
                        async for p in self.fn(req):
                            piece(p)
                    asyncio.run(asyncio.wait_for(drain(), limit))
                    out = "".join(collected)
                elif inspect.isgeneratorfunction(self.fn):
                    gen = self.fn(req)
                    while True:
                        try:
                            piece(next(gen))
                        except StopIteration as stop:
                            out = ("".join(collected), stop.value or 0)
                            break
                elif inspect.iscoroutinefunction(self.fn):
                    out = asyncio.run(asyncio.wait_for(self.fn(req), limit))
                else:
                    out = self.fn(req)
                outcome["value"] = out
            except BaseException as e:  # noqa: BLE001 — any failure of the agent is a failed answer
                outcome["error"] = e
            finally:
                done.set()

        # A daemon thread: a function that never returns is answered failed
        # at the deadline and must not keep the process from exiting.
        threading.Thread(target=work, name=f"crtx-{req.execution_id}", daemon=True).start()
        if not done.wait(limit):
            return _failed(req.execution_id, f"the agent did not finish within {limit:g} s")
        if "error" in outcome:
            e = outcome["error"]
            if isinstance(e, (TimeoutError, asyncio.TimeoutError)):
                return _failed(req.execution_id, f"the agent did not finish within {limit:g} s")
            return _failed(req.execution_id, str(e) or type(e).__name__, isinstance(e, InvalidInput))
        return self._completed(req.execution_id, outcome["value"])

    def _completed(self, execution_id: str, value) -> bytes:
        tokens = 0
        if isinstance(value, tuple) and len(value) == 2:
            value, tokens = value
        if not isinstance(value, str):
            return _failed(execution_id, f"the agent returned {type(value).__name__}, not text")
        try:
            size = len(value.encode("utf-8"))
        except UnicodeEncodeError:
            return _failed(execution_id, "the agent's result is not valid text (a lone surrogate)")
        if "\0" in value:
            return _failed(execution_id, "the agent's result holds U+0000, which the marketplace refuses")
        if size > MAX_RESULT_BYTES:
            return _failed(execution_id, f"the agent's result is {size} bytes, over the 4 MiB limit")
        h = result_hash(value)
        reply = {"execution_id": execution_id, "status": "completed", "result": value, "result_hash": h,
                 "signature": sign_result(self.key, h)}
        if not isinstance(tokens, int) or isinstance(tokens, bool) or tokens < 0:
            tokens = 0
        if tokens > 0 or self.metered:
            # Signed, so that a metered listing is charged from the
            # creator's own word (docs/creators.md, "Metered listings").
            reply["tokens_used"] = tokens
            reply["usage_signature"] = sign_usage(self.key, execution_id, h, tokens)
        return json.dumps(reply, ensure_ascii=False).encode("utf-8")


class _Answer:
    def __init__(self):
        self.done = threading.Event()
        self.body = b""


def _failed(execution_id: str, error: str, invalid_input: bool = False) -> bytes:
    error = error.replace("\0", "").encode("utf-8", "replace").decode("utf-8")
    reply = {"execution_id": execution_id, "status": "failed", "result": None, "result_hash": None,
             "signature": None, "error": error}
    if invalid_input:
        reply["error_code"] = "invalid_input"
    return json.dumps(reply, ensure_ascii=False).encode("utf-8")


def _accepts(accept: str, media_type: str) -> bool:
    return any(part.split(";")[0].strip().lower() == media_type for part in accept.split(","))


def _events(pieces: "queue.Queue[str | None]", answer: _Answer) -> Iterator[bytes]:
    """A streamed answer's body: a delta event for each piece as it comes,
    then the result event with the signed reply. A result that came whole
    is sent as one delta first, so that the deltas joined are the result."""
    n, sent = 0, False
    while (p := pieces.get()) is not None:
        n += 1
        sent = True
        yield f"id: {n}\nevent: delta\ndata: {json.dumps({'text': p}, ensure_ascii=False)}\n\n".encode()
    reply = json.loads(answer.body)
    if reply.get("status") == "completed" and not sent and reply.get("result"):
        yield f"id: {n + 1}\nevent: delta\ndata: {json.dumps({'text': reply['result']}, ensure_ascii=False)}\n\n".encode()
    yield b"event: result\ndata: " + answer.body + b"\n\n"
