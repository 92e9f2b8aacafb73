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
    kept: signing_public_key, and during a rotation next_signing_public_key,
    the key that signs after the switch.

    They are read again after ttl seconds, so that the next key a
    marketplace publishes before a rotation is known by the switch; and a
    signature that verifies with neither makes it read them again, at most
    once per refresh_after seconds, so that a marketplace that rotates
    its key is followed without letting unsigned requests make the service
    fetch on every call.
    """

    def __init__(self, marketplace_url: str, refresh_after: float = 60, ttl: float = 3600, clock=time.monotonic):
        self.url = marketplace_url
        self._refresh_after = refresh_after
        self._ttl = ttl
        self._clock = clock
        self._lock = threading.Lock()
        self._keys: list[bytes] | None = None
        self._fetched = 0.0

    def get(self) -> bytes:
        """The key the marketplace signs with now."""
        return self.keys()[0]

    def keys(self) -> list[bytes]:
        """The keys requests may be signed with: the marketplace's, then the next one."""
        with self._lock:
            if self._keys is None:
                self._fetch()
            elif self._clock() - self._fetched >= self._ttl:
                try:
                    self._fetch()
                except Exception:
                    # Keep the keys read before; try again in refresh_after.
                    self._fetched = self._clock() - self._ttl + self._refresh_after
            return self._keys

    def refresh(self) -> list[bytes] | None:
        """Reads the keys again unless they were read recently; the new keys,
        or None when they were not read again or did not change."""
        with self._lock:
            if self._keys is not None and self._clock() - self._fetched < self._refresh_after:
                return None
            old = self._keys
            self._fetch()
            return self._keys if self._keys != old else None

    def _fetch(self) -> None:
        wk = fetch_well_known(self.url)
        keys = [base58.decode_key(wk.get("signing_public_key", ""), "signing_public_key")]
        if wk.get("next_signing_public_key"):
            keys.append(base58.decode_key(wk["next_signing_public_key"], "next_signing_public_key"))
        self._keys = keys
        self._fetched = self._clock()
