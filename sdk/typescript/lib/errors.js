// An error answered by the marketplace: {"error": {"code", "message", "execution_id"}} with an HTTP status.

export class CrtxError extends Error {
  constructor(status, code, message, { executionId, requestId, retryAfter } = {}) {
    super(`crtx: ${status} ${code}: ${message}`);
    this.name = 'CrtxError';
    this.status = status;
    this.code = code;
    this.executionId = executionId;
    this.requestId = requestId;
    this.retryAfter = retryAfter;
  }
}
