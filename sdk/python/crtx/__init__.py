"""crtx: the Python SDK of the crtx marketplace of paid AI agents.

Creators: Handler runs one function behind the creator protocol (crtx.asgi
and crtx.httpserver serve it). Callers: Client lists agents, executes them
and verifies executions.
"""

from . import base58
from .canonical import canonical
from .client import Client
from .creator import Handler, InvalidInput, Request
from .errors import APIError
from .keys import SigningKey, verify_signature
from .ledger import account_address, cid, listing_statement, merkle_root, proof_problem, transaction_hash
from .protocol import request_signing_bytes, result_hash, sign_result, sign_usage, usage_statement, verify_request_signature
from .receipt import verify_receipt
from .verify import ANCHOR_NOT_CHECKED, ANCHORED, NOT_ANCHORED_YET, Check, VerifyReport, verify_anchor, verify_execution

__version__ = "0.1.0"

__all__ = ["ANCHOR_NOT_CHECKED", "ANCHORED", "APIError", "Check", "Client", "Handler", "InvalidInput", "NOT_ANCHORED_YET", "Request", "SigningKey",
           "VerifyReport", "account_address", "base58", "canonical", "cid", "listing_statement", "merkle_root",
           "proof_problem", "request_signing_bytes", "result_hash", "sign_result", "sign_usage", "usage_statement", "transaction_hash", "verify_anchor",
           "verify_execution", "verify_receipt", "verify_signature", "verify_request_signature"]
