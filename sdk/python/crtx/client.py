"""The caller side: a client of one marketplace with one API key.

    c = Client("https://crtx.example", "crtx_test_…")
    page = c.agents(tags="data", sort="success_rate")
    rec = c.execute("agt_…", "The quick brown fox", {"top": 3})
    report = c.verify(rec["execution_id"])
"""

import http.client
import json
import time
import urllib.error
import urllib.parse
import urllib.request
import uuid

from .errors import APIError

_FINAL = ("completed", "failed", "disputed")


class Client:
    def __init__(self, url: str, api_key: str = "", *, timeout: float = 300):
        self.url = url.rstrip("/")
        self.api_key = api_key
        self.timeout = timeout

    # HTTP

    def request(self, method: str, path: str, body=None, headers: dict | None = None) -> tuple[int, dict, bytes]:
        """Sends a request (body: JSON-encodable, or bytes) with the API key
        and returns the status, headers and body of a 2xx answer; any other
        answer raises APIError. A path starting with http is a full URL."""
        url = path if path.startswith(("http://", "https://")) else self.url + path
        hdrs = {"Accept": "application/json", **(headers or {})}
        if self.api_key and "Authorization" not in hdrs:
            hdrs["Authorization"] = "Bearer " + self.api_key
        data = None
        if body is not None:
            data = body if isinstance(body, bytes) else json.dumps(body).encode("utf-8")
            hdrs.setdefault("Content-Type", "application/json")
        req = urllib.request.Request(url, data=data, method=method, headers=hdrs)
        try:
            with urllib.request.urlopen(req, timeout=self.timeout) as resp:
                return resp.status, dict(resp.headers.items()), resp.read()
        except urllib.error.HTTPError as e:
            raw = e.read()
            try:
                err = json.loads(raw)["error"]
                code, message, exec_id = err["code"], err.get("message", ""), err.get("execution_id")
            except (ValueError, KeyError, TypeError):
                code, message, exec_id = "unexpected_response", f"not an error body: {raw[:200]!r}", None
            raise APIError(e.code, code, message, exec_id, e.headers.get("X-Request-Id", ""),
                           e.headers.get("Retry-After", "")) from None

    def _json(self, method: str, path: str, body=None, headers: dict | None = None):
        _, _, raw = self.request(method, path, body, headers)
        return json.loads(raw) if raw else None

    # The marketplace

    def well_known(self) -> dict:
        """/.well-known/crtx.json: the marketplace's keys and public URL."""
        return self._json("GET", "/.well-known/crtx.json")

    def agents(self, **query) -> dict:
        """GET /v1/agents: {"agents": [...], "total", ...}; query takes limit,
        offset, tags, min_success_rate, min_executions, verified_only, sort, q,
        environment."""
        return self._json("GET", _with_query("/v1/agents", query))

    def agent(self, agent_id: str, environment: str | None = None) -> dict:
        """An agent's full listing, with its statistics in environment."""
        return self._json("GET", _with_query("/v1/agents/" + _seg(agent_id), {"environment": environment}))

    def wallet(self) -> dict:
        """The API key's wallet and its balances."""
        return self._json("GET", "/v1/wallet")

    # Executions

    def execute(self, agent_id: str, task: str, parameters: dict | None = None, *, asynchronous: bool = False,
                timeout_seconds: int | None = None, max_cost_usdc: float | None = None,
                webhook_url: str | None = None, private: bool = False, idempotency_key: str | None = None,
                retries: int = 2, poll_every: float = 0.5) -> dict:
        """Runs an agent and returns its final execution record.

        Synchronously by default: a failed execution raises APIError with
        its execution_id. With asynchronous=True the marketplace answers at
        once and the record is polled until final (a failed one is returned,
        status "failed"). A request that got no answer (a load balancer's 502
        or 504 included: the replica went away mid-request), a 503, or a 409
        idempotency_in_progress is sent again, up to retries times, with the
        same Idempotency-Key (a random one unless given), so that a retry is
        never charged twice."""
        rec = self._execute(agent_id, task, parameters, asynchronous, timeout_seconds, max_cost_usdc, webhook_url,
                            private, idempotency_key, retries)
        if asynchronous:
            return self.wait(rec["execution_id"], every=poll_every)
        return rec

    def submit(self, agent_id: str, task: str, parameters: dict | None = None, **options) -> dict:
        """Starts an asynchronous execution and returns at once
        {"execution_id", "status": "pending"}; wait() follows it."""
        return self._execute(agent_id, task, parameters, True, options.get("timeout_seconds"),
                             options.get("max_cost_usdc"), options.get("webhook_url"), options.get("private", False),
                             options.get("idempotency_key"), options.get("retries", 2))

    def _execute(self, agent_id, task, parameters, asynchronous, timeout_seconds, max_cost_usdc, webhook_url,
                 private, idempotency_key, retries) -> dict:
        body = {"task": task, "parameters": parameters if parameters is not None else {}}
        if asynchronous:
            body["async"] = True
        if timeout_seconds is not None:
            body["timeout_seconds"] = timeout_seconds
        if max_cost_usdc is not None:
            body["max_cost_usdc"] = float(max_cost_usdc)
        if webhook_url:
            body["webhook_url"] = webhook_url
        if private:
            body["private"] = True
        raw = json.dumps(body).encode("utf-8")
        if retries > 0 and not idempotency_key:
            idempotency_key = "crtx-py-" + str(uuid.uuid4())
        headers = {"Idempotency-Key": idempotency_key} if idempotency_key else {}
        backoff = 0.2
        for attempt in range(retries + 1):
            try:
                return self._json("POST", f"/v1/agents/{_seg(agent_id)}/execute", raw, headers)
            except (APIError, OSError, http.client.HTTPException) as e:
                if attempt >= retries or not _retryable(e):
                    raise
            time.sleep(backoff)
            backoff = min(backoff * 2, 5)
        raise AssertionError("unreachable")

    def execution(self, execution_id: str) -> dict:
        """GET /v1/executions/{id}: the execution record."""
        return self._json("GET", "/v1/executions/" + _seg(execution_id))

    def executions(self, **query) -> dict:
        """GET /v1/executions: the key's executions; query takes limit,
        offset, status, agent_id, from and to."""
        return self._json("GET", _with_query("/v1/executions", query))

    def wait(self, execution_id: str, every: float = 0.5, timeout: float | None = None) -> dict:
        """Polls an execution until it is final; TimeoutError after timeout
        seconds (None: as long as it takes)."""
        until = None if timeout is None else time.monotonic() + timeout
        while True:
            rec = self.execution(execution_id)
            if rec.get("status") in _FINAL:
                return rec
            if until is not None and time.monotonic() >= until:
                raise TimeoutError(f"execution {execution_id} is still {rec.get('status')}")
            time.sleep(every)

    def cancel(self, execution_id: str) -> dict:
        """Cancels a pending execution that was not dispatched yet."""
        return self._json("POST", f"/v1/executions/{_seg(execution_id)}/cancel")

    def receipt(self, execution_id: str) -> bytes:
        """The marketplace's signed receipt of a final execution, as its exact
        bytes (keep them; crtx.verify_receipt reads them). APIError not_final
        before the execution ends."""
        return self.request("GET", f"/v1/executions/{_seg(execution_id)}/receipt")[2]

    def content(self, ipfs_url: str) -> bytes:
        """The bytes at a result's ipfs_url, fetched without the API key: the
        result is public."""
        url = urllib.parse.urljoin(self.url + "/", ipfs_url)
        with urllib.request.urlopen(url, timeout=self.timeout) as resp:
            return resp.read()

    # The ledger

    def transaction(self, environment: str, tx_id: str) -> dict:
        return self._json("GET", f"/v1/ledger/{_seg(environment)}/transactions/{_seg(tx_id)}")

    def proof(self, environment: str, tx_id: str) -> dict:
        """A sealed transaction's inclusion proof; APIError not_sealed before."""
        return self._json("GET", f"/v1/ledger/{_seg(environment)}/transactions/{_seg(tx_id)}/proof")

    def block(self, environment: str, height: int) -> dict:
        return self._json("GET", f"/v1/ledger/{_seg(environment)}/blocks/{int(height)}")

    def reserves(self) -> dict:
        """GET /v1/reserves: {"reserves": [...]}, one per environment with a
        chain, each with its newest anchored block (anchored_block)."""
        return self._json("GET", "/v1/reserves")

    def verify(self, execution_id: str, *, authority_key: str | None = None, marketplace_key: str | None = None,
               wait: float = 60, solana_rpc: str | None = None):
        """Checks an execution as docs/verify.md does (crtx.verify.verify_execution),
        reading its anchor from solana_rpc (default: the public endpoint of
        the anchor's cluster)."""
        from .verify import verify_execution
        return verify_execution(self, execution_id, authority_key=authority_key, marketplace_key=marketplace_key,
                                wait=wait, solana_rpc=solana_rpc)


def _retryable(e: Exception) -> bool:
    if isinstance(e, APIError):
        gateway = e.status in (502, 504) and e.code == "unexpected_response"  # a load balancer's, not crtx's
        return gateway or e.status == 503 or e.code == "idempotency_in_progress"
    return True  # no answer at all


def _seg(s: str) -> str:
    return urllib.parse.quote(str(s), safe="")


def _with_query(path: str, query: dict) -> str:
    q = {k: ("true" if v is True else "false" if v is False else ",".join(v) if isinstance(v, (list, tuple)) else v)
         for k, v in query.items() if v is not None}
    return path + ("?" + urllib.parse.urlencode(q) if q else "")
