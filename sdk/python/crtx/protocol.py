"""The creator protocol's hashes and signatures (docs/creators.md)."""

import hashlib

from .keys import SigningKey, verify_signature

HEADER_TIMESTAMP = "X-Crtx-Timestamp"
HEADER_AGENT_ID = "X-Crtx-Agent-Id"
HEADER_SIGNING_KEY = "X-Crtx-Signing-Key"
HEADER_ENVIRONMENT = "X-Crtx-Environment"
HEADER_TEST = "X-Crtx-Test"
HEADER_SIGNATURE = "X-Crtx-Signature"

REQUEST_PREAMBLE = "crtx-request-v2\n"


def result_hash(result: str) -> str:
    """"sha256:" and the hex SHA-256 of the result's UTF-8 bytes."""
    return "sha256:" + hashlib.sha256(result.encode("utf-8")).hexdigest()


def sign_result(key: SigningKey, hash_: str) -> str:
    """The reply's signature: "ed25519:" and base58 of the key's signature of
    the result_hash string itself (not of the digest)."""
    return "ed25519:" + key.sign_base58(hash_.encode("utf-8"))


USAGE_PREAMBLE = "crtx-usage-v1\n"


def usage_statement(execution_id: str, hash_: str, tokens: int) -> bytes:
    """The bytes a metered listing's creator signs for a call's usage: the
    preamble, the execution id, the result hash and the tokens in decimal,
    apart by line feeds (docs/creators.md, "Metered listings")."""
    return f"{USAGE_PREAMBLE}{execution_id}\n{hash_}\n{tokens}".encode("utf-8")


def sign_usage(key: SigningKey, execution_id: str, hash_: str, tokens: int) -> str:
    """A reply's usage_signature: "ed25519:" and base58 of the key's
    signature of the usage statement."""
    return "ed25519:" + key.sign_base58(usage_statement(execution_id, hash_, tokens))


def request_signing_bytes(timestamp: str, agent_id: str, signing_key: str, environment: str, test: bool,
                          body: bytes) -> bytes:
    """The bytes the marketplace signs for a request to a creator: the
    preamble, then six lines, then the body exactly as sent."""
    head = REQUEST_PREAMBLE + "".join(
        f"{v}\n" for v in (timestamp, agent_id, signing_key, environment, "true" if test else "false"))
    return head.encode("utf-8") + body


def verify_request_signature(marketplace_key: str | bytes, timestamp: str, agent_id: str, signing_key: str,
                             environment: str, test: bool, body: bytes, signature: str) -> bool:
    """Whether X-Crtx-Signature is the marketplace's over the request. A field
    holding a line feed is refused: it would move the fields."""
    if not signature.startswith("ed25519:") or "\n" in timestamp + agent_id + signing_key + environment:
        return False
    return verify_signature(marketplace_key, request_signing_bytes(timestamp, agent_id, signing_key, environment, test, body),
                  signature)
