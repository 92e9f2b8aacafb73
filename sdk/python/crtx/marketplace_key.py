"""The marketplace's request-signing key, read from its /.well-known/crtx.json."""

import json
import threading
import time
import urllib.request

from . import base58


def fetch_well_known(marketplace_url: str, timeout: float = 10) -> dict:
    """GET /.well-known/crtx.json of the marketplace at marketplace_url."""
    url = marketplace_url.rstrip("/") + "/.well-known/crtx.json"
    with urllib.request.urlopen(urllib.request.Request(url, headers={"Accept": "application/json"}),
                                timeout=timeout) as resp:
        return json.loads(resp.read(1 << 20))


class MarketplaceKey:
    """The keys a marketplace signs requests with, fetched on first use and
    kept: signing_public_key, during a rotation next_signing_public_key (the
    key that signs after the switch), and for a while after the switch
    previous_signing_public_key (which replicas not switched yet sign with).

    They are read again after ttl seconds, so that the next key a
    marketplace publishes before a rotation is known by the switch; and a
    signature that verifies with none makes them read again. Never twice
    within refresh_after seconds, so that forged requests cannot make the
    service fetch on every call; a read that fails keeps the keys read
    before.
    """

    def __init__(self, marketplace_url: str, refresh_after: float = 60, ttl: float = 3600, clock=time.monotonic):
        self.url = marketplace_url
        self._refresh_after = refresh_after
        self._ttl = ttl
        self._clock = clock
        self._lock = threading.Lock()
        self._keys: list[bytes] | None = None
        self._fetched = 0.0
        self._attempt: float | None = None
        self._error: Exception | None = None

    def get(self) -> bytes:
        """The key the marketplace signs with now."""
        return self.keys()[0]

    def keys(self) -> list[bytes]:
        """The keys requests may be signed with: the marketplace's, then those of a rotation.
        Raises the read's error when none could be read yet."""
        with self._lock:
            if self._keys is None or self._clock() - self._fetched >= self._ttl:
                self._read()
            if self._keys is None:
                raise RuntimeError(f"the keys of {self.url} could not be read") from self._error
            return self._keys

    def refresh(self) -> list[bytes] | None:
        """Reads the keys again unless they were read recently, and answers
        them as they stand (None when none could be read): another request
        may have just read the key a signature needs."""
        with self._lock:
            self._read()
            return self._keys

    def _read(self) -> None:
        now = self._clock()
        # Until keys are first read, a failed read is tried again sooner: a
        # marketplace briefly down while the service starts.
        wait = self._refresh_after if self._keys is not None else min(self._refresh_after, 5)
        if self._attempt is not None and now - self._attempt < wait:
            return
        self._attempt = now
        try:
            wk = fetch_well_known(self.url)
            keys = [base58.decode_key(wk.get("signing_public_key", ""), "signing_public_key")]
            for field in ("next_signing_public_key", "previous_signing_public_key"):
                if wk.get(field):
                    keys.append(base58.decode_key(wk[field], field))
        except Exception as e:  # the marketplace unreachable, or a bad document: keep what was read
            self._error = e
            return
        self._keys, self._fetched, self._error = keys, self._clock(), None
