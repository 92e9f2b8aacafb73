"""Errors the marketplace answers."""


class APIError(Exception):
    """An error answer: {"error": {"code", "message", "execution_id"}} with its
    HTTP status. A synchronous execution that failed is one of these, with
    execution_id set."""

    def __init__(self, status: int, code: str, message: str, execution_id: str | None = None,
                 request_id: str = "", retry_after: str = ""):
        super().__init__(f"crtx: {status} {code}: {message}" + (f" (request {request_id})" if request_id else ""))
        self.status = status
        self.code = code
        self.message = message
        self.execution_id = execution_id
        self.request_id = request_id
        self.retry_after = retry_after
