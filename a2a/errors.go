package a2a

import (
	"context"
	"errors"

	"github.com/a2aproject/a2a-go/v2/a2a"

	"github.com/crtx-market/crtx"
)

// kindOf is the A2A error closest to a marketplace error code. A2A has no
// word for money, so a wallet that cannot pay is "permission denied" (the
// key may not spend this), and an agent that takes no calls now is an
// unsupported operation; the crtx code in the error's details says which.
func kindOf(code string) error {
	switch code {
	case crtx.CodeExecutionNotFound:
		return a2a.ErrTaskNotFound
	case crtx.CodeNotCancellable:
		return a2a.ErrTaskNotCancelable
	case crtx.CodeAuthenticationRequired, crtx.CodeInvalidAPIKey, crtx.CodeInvalidSession:
		return a2a.ErrUnauthenticated
	case crtx.CodeInsufficientBalance, crtx.CodeSpendLimitExceeded:
		return a2a.ErrUnauthorized
	case crtx.CodeAgentNotFound, crtx.CodeAgentPaused:
		return a2a.ErrUnsupportedOperation
	case crtx.CodeInvalidRequest, crtx.CodeRequestTooLarge, crtx.CodePriceChanged, crtx.CodeIdempotencyKeyReused,
		crtx.CodeNotFound, crtx.CodeEndpointUnreachable: // a push config's id or url
		return a2a.ErrInvalidParams
	case crtx.CodeUnsupportedMediaType:
		return a2a.ErrUnsupportedContentType
	case crtx.CodeRateLimited, crtx.CodeUnavailable, crtx.CodeIdempotencyInProgress:
		// JSON-RPC leaves -32000 to the server's own conditions: these
		// pass, and the details say when to try again.
		return a2a.ErrServerError
	}
	return a2a.ErrInternalError
}

// protocolError is the one place a marketplace error becomes an A2A one:
// the closest A2A error, with the crtx code, message and execution in its
// details (and the code in ErrorInfo's metadata), so that a client can act
// on either. Anything that is not a *crtx.Error is logged and answered as
// an internal error that quotes the request id, never with its text.
func (s *server) protocolError(ctx context.Context, c call, err error) error {
	var ae *a2a.Error
	if errors.As(err, &ae) {
		return err
	}
	var e *crtx.Error
	if !errors.As(err, &e) {
		if ctx.Err() == nil {
			s.log.ErrorContext(ctx, "a2a internal error", "request_id", c.requestID, "err", err)
		}
		return a2a.NewError(a2a.ErrInternalError, "internal error; quote request id "+c.requestID+" when reporting it")
	}
	details := map[string]any{"code": e.Code, "message": e.Message}
	if e.ExecutionID != "" {
		details["execution_id"] = e.ExecutionID
	}
	if e.RetryAfter > 0 {
		details["retry_after_seconds"] = e.RetryAfter
	}
	return a2a.NewError(kindOf(e.Code), e.Message).WithDetails(details).
		WithErrorInfoMeta(map[string]string{"crtx_code": e.Code})
}
