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
    """signing_public_key of a marketplace, fetched on first use and kept.

    A signature that does not verify with the kept key makes it read the
    key again, at most once per refresh_after seconds, so that a marketplace
    that rotates its key is followed without letting unsigned requests make
    the service fetch on every call.
    """

    def __init__(self, marketplace_url: str, refresh_after: float = 60, clock=time.monotonic):
        self.url = marketplace_url
        self._refresh_after = refresh_after
        self._clock = clock
        self._lock = threading.Lock()
        self._key: bytes | None = None
        self._fetched = 0.0

    def get(self) -> bytes:
        with self._lock:
            if self._key is None:
                self._fetch()
            return self._key

    def refresh(self) -> bytes | None:
        """Reads the key again unless it was read recently; the new key, or
        None when it was not read again or did not change."""
        with self._lock:
            if self._key is not None and self._clock() - self._fetched < self._refresh_after:
                return None
            old = self._key
            self._fetch()
            return self._key if self._key != old else None

    def _fetch(self) -> None:
        wk = fetch_well_known(self.url)
        self._key = base58.decode_key(wk.get("signing_public_key", ""), "signing_public_key")
        self._fetched = self._clock()
