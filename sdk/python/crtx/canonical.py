"""RFC 8785 (JCS) canonical JSON, as the ledger, receipts and listing
statements are hashed and signed.

Member names are sorted by UTF-16 code units and numbers are written as
ECMAScript's Number#toString writes the nearest double, which is what JCS
specifies; Python's own json module sorts by code points and writes 1e-06.
"""

import json
import math
from decimal import Decimal


def canonical(value) -> bytes:
    """The UTF-8 bytes of value's RFC 8785 form."""
    return _encode(value).encode("utf-8")


def _encode(v) -> str:
    if v is None:
        return "null"
    if v is True:
        return "true"
    if v is False:
        return "false"
    if isinstance(v, (int, float)):
        return number(v)
    if isinstance(v, str):
        return _string(v)
    if isinstance(v, (list, tuple)):
        return "[" + ",".join(_encode(x) for x in v) + "]"
    if isinstance(v, dict):
        for k in v:
            if not isinstance(k, str):
                raise TypeError(f"canonical: member name {k!r} is not a string")
        keys = sorted(v, key=lambda k: k.encode("utf-16-be", "surrogatepass"))
        return "{" + ",".join(_string(k) + ":" + _encode(v[k]) for k in keys) + "}"
    raise TypeError(f"canonical: cannot encode {type(v).__name__}")


def _string(s: str) -> str:
    # JSON.stringify escapes only '"', '\\' and control characters, as
    # json.dumps does without ensure_ascii; a lone surrogate has no UTF-8.
    try:
        s.encode("utf-8")
    except UnicodeEncodeError as e:
        raise ValueError("canonical: lone surrogate in string") from e
    return json.dumps(s, ensure_ascii=False)


def number(x) -> str:
    """ECMAScript's Number#toString of the double nearest x."""
    x = float(x)
    if not math.isfinite(x):
        raise ValueError("canonical: non-finite number")
    if x == 0:
        return "0"
    sign = "-" if x < 0 else ""
    # repr is the shortest text that reads back as x, the digits ECMAScript picks.
    t = Decimal(repr(abs(x))).normalize().as_tuple()
    digits = "".join(map(str, t.digits))
    k = len(digits)
    n = k + t.exponent  # x = 0.digits × 10^n
    if k <= n <= 21:
        out = digits + "0" * (n - k)
    elif 0 < n <= 21:
        out = digits[:n] + "." + digits[n:]
    elif -6 < n <= 0:
        out = "0." + "0" * -n + digits
    else:
        e = n - 1
        mant = digits if k == 1 else digits[0] + "." + digits[1:]
        out = mant + "e" + ("+" if e > 0 else "-") + str(abs(e))
    return sign + out
