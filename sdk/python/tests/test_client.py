"""What the client sends again: a retry carries the first attempt's
Idempotency-Key (test_marketplace shows that against crtxd), so it is sent
only when no answer of the marketplace's came."""

import unittest

from crtx import APIError
from crtx.client import _retryable


class Retries(unittest.TestCase):
    def test_what_is_sent_again(self):
        cases = {
            "no answer at all": (ConnectionResetError(), True),
            "a load balancer's 502 (its own page, not an error body)": (APIError(502, "unexpected_response", "not an error body"), True),
            "a load balancer's 504": (APIError(504, "unexpected_response", "not an error body"), True),
            "the marketplace busy": (APIError(503, "unavailable", "busy"), True),
            "the first attempt still running": (APIError(409, "idempotency_in_progress", "running"), True),
            "the marketplace's own 502: the agent's reply was invalid": (APIError(502, "invalid_agent_response", "no result_hash"), False),
            "a refusal": (APIError(402, "insufficient_balance", "no"), False),
        }
        for name, (err, want) in cases.items():
            with self.subTest(name):
                self.assertEqual(_retryable(err), want)
