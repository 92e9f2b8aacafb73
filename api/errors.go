package api

import (
	"net/http"
	"slices"

	"github.com/crtx-market/crtx"
)

// Wire shapes of REST responses that are not domain types themselves. The
// http package writes them and the client package reads them.

// ErrorBody is the seed's error body.
type ErrorBody struct {
	Error ErrorDetail `json:"error"`
	// Message repeats Error.Message at the top, where the Solana Pay
	// specification has wallets read an error: only on its routes.
	Message string `json:"message,omitempty"`
}

// ErrorDetail is the object inside ErrorBody.
type ErrorDetail struct {
	Code        string  `json:"code"`
	Message     string  `json:"message"`
	ExecutionID *string `json:"execution_id"`
	// Fields lists every request field at fault, when there are several
	// (a listing missing two fields names both): message joins them.
	Fields []FieldError `json:"fields,omitempty"`
}

// FieldError is one request field at fault.
type FieldError struct {
	Field   string `json:"field"`
	Message string `json:"message"`
}

// statuses maps each error code to its HTTP status (CONTRACT §8, §13).
var statuses = map[string]int{
	crtx.CodeInvalidRequest:         http.StatusBadRequest,
	crtx.CodeAuthenticationRequired: http.StatusUnauthorized,
	crtx.CodeInvalidAPIKey:          http.StatusUnauthorized,
	crtx.CodeInvalidSession:         http.StatusUnauthorized,
	crtx.CodeInvalidSignature:       http.StatusUnauthorized,
	crtx.CodeInsufficientBalance:    http.StatusPaymentRequired,
	crtx.CodeSpendLimitExceeded:     http.StatusPaymentRequired,
	crtx.CodePaymentRequired:        http.StatusPaymentRequired,
	crtx.CodePaymentInvalid:         http.StatusPaymentRequired,
	crtx.CodeNotFound:               http.StatusNotFound,
	crtx.CodeKeyNotFound:            http.StatusNotFound,
	crtx.CodeAccountNotFound:        http.StatusNotFound,
	crtx.CodeTransactionNotFound:    http.StatusNotFound,
	crtx.CodeBlockNotFound:          http.StatusNotFound,
	crtx.CodeAgentNotFound:          http.StatusNotFound,
	crtx.CodeExecutionNotFound:      http.StatusNotFound,
	crtx.CodeMethodNotAllowed:       http.StatusMethodNotAllowed,
	crtx.CodeExecutionTimeout:       http.StatusRequestTimeout,
	crtx.CodeIdempotencyKeyReused:   http.StatusConflict,
	crtx.CodeIdempotencyInProgress:  http.StatusConflict,
	crtx.CodePriceChanged:           http.StatusConflict,
	crtx.CodeNotCancellable:         http.StatusConflict,
	crtx.CodeDisputeWindowClosed:    http.StatusConflict,
	crtx.CodeNotSealed:              http.StatusConflict,
	crtx.CodeNotFinal:               http.StatusConflict,
	crtx.CodeDisputeExists:          http.StatusConflict,
	crtx.CodeNotDisputable:          http.StatusConflict,
	crtx.CodeDisputeClosed:          http.StatusConflict,
	crtx.CodeChainNotConfigured:     http.StatusConflict,
	crtx.CodeChainConfigured:        http.StatusConflict,
	crtx.CodeDepositNotFound:        http.StatusNotFound,
	crtx.CodeWithdrawalNotFound:     http.StatusNotFound,
	crtx.CodeDepositClosed:          http.StatusConflict,
	crtx.CodeDisputeNotFound:        http.StatusNotFound,
	crtx.CodeRequestTooLarge:        http.StatusRequestEntityTooLarge,
	crtx.CodeUnsupportedMediaType:   http.StatusUnsupportedMediaType,
	crtx.CodeForbiddenOrigin:        http.StatusForbidden,
	crtx.CodeAgentPaused:            http.StatusUnprocessableEntity,
	crtx.CodeEndpointUnreachable:    http.StatusUnprocessableEntity,
	crtx.CodeRateLimited:            http.StatusTooManyRequests,
	crtx.CodeInternal:               http.StatusInternalServerError,
	crtx.CodeExecutionFailed:        http.StatusInternalServerError,
	crtx.CodeInvalidInput:           http.StatusBadRequest,
	crtx.CodeInvalidAgentResponse:   http.StatusBadGateway,
	crtx.CodeAgentUnreachable:       http.StatusBadGateway,
	crtx.CodeUnavailable:            http.StatusServiceUnavailable,
}

// Status is the HTTP status of an error. A creator's bad signature on an
// execution is the creator's fault (502); a caller's bad sign-in signature is 401.
func Status(e *crtx.Error) int {
	if e.Code == crtx.CodeInvalidSignature && e.ExecutionID != "" {
		return http.StatusBadGateway
	}
	if s, ok := statuses[e.Code]; ok {
		return s
	}
	return http.StatusInternalServerError
}

// CodesOf lists the error codes answered with status, sorted.
func CodesOf(status int) []string {
	var out []string
	for code, s := range statuses {
		if s == status {
			out = append(out, code)
		}
	}
	if status == http.StatusBadGateway {
		out = append(out, crtx.CodeInvalidSignature) // a creator's, on an execution
	}
	slices.Sort(out)
	return out
}
