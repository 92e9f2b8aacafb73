"""Ed25519 keys in the Solana CLI's key file format, and base58 signatures."""

import json
import os

from cryptography.exceptions import InvalidSignature
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey, Ed25519PublicKey
from cryptography.hazmat.primitives.serialization import Encoding, NoEncryption, PrivateFormat, PublicFormat

from . import base58


class SigningKey:
    """An Ed25519 private key: an agent's signing key or a wallet's."""

    def __init__(self, seed: bytes):
        if len(seed) != 32:
            raise ValueError(f"an Ed25519 seed is 32 bytes, not {len(seed)}")
        self._key = Ed25519PrivateKey.from_private_bytes(seed)
        self.seed = seed
        self.public_bytes = self._key.public_key().public_bytes(Encoding.Raw, PublicFormat.Raw)

    @classmethod
    def generate(cls) -> "SigningKey":
        k = Ed25519PrivateKey.generate()
        return cls(k.private_bytes(Encoding.Raw, PrivateFormat.Raw, NoEncryption()))

    @classmethod
    def load(cls, path: str) -> "SigningKey":
        """Reads a key file written by save or by solana-keygen: a JSON array
        of the 64 bytes of seed and public key."""
        with open(path, encoding="utf-8") as f:
            raw = json.load(f)
        if not isinstance(raw, list) or len(raw) != 64 or not all(isinstance(b, int) and 0 <= b <= 255 for b in raw):
            raise ValueError(f"{path}: not a key file (a JSON array of 64 bytes)")
        key = cls(bytes(raw[:32]))
        # The file holds the public half too; make sure it belongs to the seed.
        if key.public_bytes != bytes(raw[32:]):
            raise ValueError(f"{path}: the public key does not match the seed")
        return key

    @classmethod
    def load_or_create(cls, path: str) -> "SigningKey":
        """Reads the key file at path or, when there is none, writes a new
        key there with mode 0600."""
        try:
            return cls.load(path)
        except FileNotFoundError:
            key = cls.generate()
            key.save(path)
            return key

    def save(self, path: str) -> None:
        """Writes the key with mode 0600, never replacing an existing file."""
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
        with os.fdopen(fd, "w", encoding="utf-8") as f:
            json.dump(list(self.seed + self.public_bytes), f, separators=(",", ":"))

    @property
    def public_key(self) -> str:
        """The base58 public key: a listing's signing_public_key, or a wallet address."""
        return base58.encode(self.public_bytes)

    def sign(self, message: bytes) -> bytes:
        return self._key.sign(message)

    def sign_base58(self, message: bytes) -> str:
        return base58.encode(self.sign(message))


def verify_signature(public_key: str | bytes, message: bytes, signature: str | bytes) -> bool:
    """Whether signature (64 bytes, or their base58; an "ed25519:" prefix is
    stripped) is public_key's (32 bytes, or base58) over message. Malformed
    keys and signatures are False, not errors."""
    try:
        if isinstance(public_key, str):
            public_key = base58.decode_key(public_key)
        if isinstance(signature, str):
            signature = base58.decode(signature.removeprefix("ed25519:"))
        if len(public_key) != 32 or len(signature) != 64:
            return False
        Ed25519PublicKey.from_public_bytes(public_key).verify(signature, message)
        return True
    except (ValueError, InvalidSignature):
        return False
