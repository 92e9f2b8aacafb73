"""Base58 in the Bitcoin alphabet, as Solana writes keys and signatures."""

ALPHABET = "123456789ABCDEFGHJKLMNPQRSTUVWXYZabcdefghijkmnopqrstuvwxyz"
_INDEX = {c: i for i, c in enumerate(ALPHABET)}


def encode(data: bytes) -> str:
    """Base58 of data; each leading zero byte is one leading '1'."""
    zeros = len(data) - len(data.lstrip(b"\0"))
    n = int.from_bytes(data, "big")
    out = []
    while n:
        n, r = divmod(n, 58)
        out.append(ALPHABET[r])
    return "1" * zeros + "".join(reversed(out))


def decode(text: str) -> bytes:
    """The bytes of base58 text; ValueError on a character outside the alphabet."""
    if not isinstance(text, str):
        raise ValueError("base58: not a string")
    zeros = len(text) - len(text.lstrip("1"))
    n = 0
    for c in text:
        i = _INDEX.get(c)
        if i is None:
            raise ValueError(f"base58: invalid character {c!r}")
        n = n * 58 + i
    body = n.to_bytes((n.bit_length() + 7) // 8, "big") if n else b""
    return b"\0" * zeros + body


def decode_key(text: str, what: str = "key") -> bytes:
    """The 32 bytes of a base58 Ed25519 public key (an address)."""
    raw = decode(text)
    if len(raw) != 32:
        raise ValueError(f"{what} is {len(raw)} bytes, not 32")
    return raw
