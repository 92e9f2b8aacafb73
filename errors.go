package crtx

import (
	"errors"
	"fmt"
)

// Error codes of the REST interface (seed "Errors", CONTRACT §13). The http
// package maps each to its HTTP status.
const (
	CodeInvalidRequest         = "invalid_request"
	CodeAuthenticationRequired = "authentication_required"
	CodeInvalidAPIKey          = "invalid_api_key"
	CodeInvalidSession         = "invalid_session"
	CodeInvalidSignature       = "invalid_signature"
	CodeInsufficientBalance    = "insufficient_balance"
	CodeSpendLimitExceeded     = "spend_limit_exceeded"
	CodeNotFound               = "not_found"
	CodeKeyNotFound            = "key_not_found"
	CodeAccountNotFound        = "account_not_found"
	CodeTransactionNotFound    = "transaction_not_found"
	CodeBlockNotFound          = "block_not_found"
	CodeAgentNotFound          = "agent_not_found"
	CodeExecutionNotFound      = "execution_not_found"
	CodeMethodNotAllowed       = "method_not_allowed"
	CodeNotSealed              = "not_sealed"
	CodeNotFinal               = "not_final"
	CodeRequestTooLarge        = "request_too_large"
	CodeUnsupportedMediaType   = "unsupported_media_type"
	CodeForbiddenOrigin        = "forbidden_origin"
	CodeRateLimited            = "rate_limited"
	CodeInternal               = "internal_error"
	CodeUnavailable            = "unavailable"
	CodeIdempotencyKeyReused   = "idempotency_key_reused"
	CodeIdempotencyInProgress  = "idempotency_in_progress"
	CodeAgentPaused            = "agent_paused"
	CodeEndpointUnreachable    = "endpoint_unreachable"
	CodeExecutionTimeout       = "execution_timeout"
	CodeExecutionFailed        = "execution_failed"
	CodeInvalidAgentResponse   = "invalid_agent_response"
	CodeAgentUnreachable       = "agent_unreachable"
	CodePriceChanged           = "price_changed"
	CodeNotCancellable         = "not_cancellable"
	CodeDisputeWindowClosed    = "dispute_window_closed"
	CodeDisputeExists          = "dispute_exists"
	CodeNotDisputable          = "not_disputable"
	CodeDisputeNotFound        = "dispute_not_found"
	CodeDisputeClosed          = "dispute_closed"
	// CodeChainNotConfigured: deposits and withdrawals need a chain the
	// environment lacks; CodeChainConfigured: money enters an environment
	// with a chain only from the chain.
	CodeChainNotConfigured = "chain_not_configured"
	CodeChainConfigured    = "chain_configured"
	CodeDepositNotFound    = "deposit_not_found"
	CodeWithdrawalNotFound = "withdrawal_not_found"
	CodeDepositClosed      = "deposit_closed"
	// CodeInvalidInput: the agent refused the call's input (a failed
	// reply whose error_code says so); refunded like any failure, and
	// counted apart from the agent's failures.
	CodeInvalidInput = "invalid_input"
)

// Error is an error a caller can act on: a code from the list above, a
// message in words, and the execution it concerns, if any. Anything else that
// reaches the edge is an internal error and is never shown raw.
type Error struct {
	Code        string
	Message     string
	ExecutionID string
	// RetryAfter, when positive, is how many seconds a rate-limited caller waits.
	RetryAfter int
	// Field names the request field at fault (InvalidField), for a form
	// to show the error beside it.
	Field string
}

func (e *Error) Error() string { return e.Code + ": " + e.Message }

// Errorf builds an *Error with a formatted message.
func Errorf(code, format string, args ...any) *Error {
	return &Error{Code: code, Message: fmt.Sprintf(format, args...)}
}

// ErrorCode returns the code of the first *Error in err's chain, or
// CodeInternal when there is none.
func ErrorCode(err error) string {
	var e *Error
	if errors.As(err, &e) {
		return e.Code
	}
	return CodeInternal
}

// Sentinels returned by stores; the domain turns them into *Error values.
var (
	// ErrNotFound: no row matched.
	ErrNotFound = errors.New("not found")
	// ErrInsufficientFunds: a posting would take an account below zero, which
	// the database refuses.
	ErrInsufficientFunds = errors.New("insufficient funds")
	// ErrSpendLimit: a key's spending would pass its limit, which the
	// database refuses.
	ErrSpendLimit = errors.New("spend limit exceeded")
	// ErrConflict: a unique constraint refused a row.
	ErrConflict = errors.New("conflict")
	// ErrBusy: the database kept refusing a transaction as conflicting
	// with others (serialization failures, deadlocks) past the store's
	// retry budget; running it again later may succeed.
	ErrBusy = errors.New("database busy")
	// ErrTermsChanged: an execution was to open at terms (price, endpoint,
	// signing key, status) that its agent no longer has.
	ErrTermsChanged = errors.New("the agent's terms changed")
	// ErrKeyInFlight, ErrWalletInFlight: an execution would take its key's,
	// or its wallet's, executions pending or running at once past their
	// limit (Opening).
	ErrKeyInFlight    = errors.New("too many of the key's executions in flight")
	ErrWalletInFlight = errors.New("too many of the wallet's executions in flight")
)

// ErrorMessage is the message of an *Error, or the error's text.
func ErrorMessage(err error) string {
	var e *Error
	if errors.As(err, &e) {
		return e.Message
	}
	return err.Error()
}

// InvalidField is an invalid_request error that names the request field at fault.
func InvalidField(field, format string, args ...any) *Error {
	e := Errorf(CodeInvalidRequest, format, args...)
	e.Message, e.Field = field+": "+e.Message, field
	return e
}

// FieldErrors are the *Errors naming a field in err's tree, in order: the
// faults of a request whose every field was checked (errors.Join).
func FieldErrors(err error) []*Error {
	var out []*Error
	var walk func(error)
	walk = func(err error) {
		switch x := err.(type) {
		case nil:
		case *Error:
			if x.Field != "" {
				out = append(out, x)
			}
		case interface{ Unwrap() []error }:
			for _, err := range x.Unwrap() {
				walk(err)
			}
		case interface{ Unwrap() error }:
			walk(x.Unwrap())
		}
	}
	walk(err)
	return out
}

// CodeCancelled is the error code of an execution its caller cancelled.
const CodeCancelled = "cancelled"
