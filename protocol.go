package crtx

import (
	"context"
	"crypto/ed25519"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"strings"
)

// CreatorRequest is the body the marketplace POSTs to a creator's /execute
// (seed "Creator execution service request").
type CreatorRequest struct {
	ExecutionID    string          `json:"execution_id"`
	Task           string          `json:"task"`
	Parameters     json.RawMessage `json:"parameters"`
	UserPubkey     string          `json:"user_pubkey"`
	TimeoutSeconds int             `json:"timeout_seconds"`
	// MaxTokens is, for a metered listing's call, the most tokens its
	// hold pays for: usage above it is not charged (docs/creators.md,
	// "Metered listings"). Absent for a price per call.
	MaxTokens *int64 `json:"max_tokens,omitempty"`
}

// CreatorReply is what a creator's /execute answers (seed "Creator
// execution service response").
type CreatorReply struct {
	ExecutionID string  `json:"execution_id"`
	Status      string  `json:"status"`
	Result      *string `json:"result"`
	ResultHash  *string `json:"result_hash"`
	Signature   *string `json:"signature"`
	TokensUsed  *int64  `json:"tokens_used,omitempty"`
	// UsageSignature signs TokensUsed (UsageStatement): a metered
	// listing's reply must carry it.
	UsageSignature *string         `json:"usage_signature,omitempty"`
	Steps          json.RawMessage `json:"steps,omitempty"`
	Error          *string         `json:"error,omitempty"`
	// ErrorCode, on a failed reply, says why in a word the marketplace
	// acts on: "invalid_input" (the caller's input, not the agent, is at
	// fault) is the one there is.
	ErrorCode *string `json:"error_code,omitempty"`
}

// Headers of requests to creators (docs/creators.md, "Requests from the
// marketplace").
const (
	HeaderEnvironment = "X-Crtx-Environment"
	HeaderTimestamp   = "X-Crtx-Timestamp"
	HeaderSignature   = "X-Crtx-Signature"
	HeaderTest        = "X-Crtx-Test"
	HeaderAgentID     = "X-Crtx-Agent-Id"
	HeaderSigningKey  = "X-Crtx-Signing-Key"
)

// A creator's /execute may answer as a stream (text/event-stream): delta
// events as it writes, each's data a Delta, then one result event whose
// data is its CreatorReply, whose result must be the deltas joined
// (docs/creators.md, "Streaming").
const (
	EventDelta  = "delta"
	EventResult = "result"
)

// Delta is a piece of a streamed result.
type Delta struct {
	Text string `json:"text"`
}

// MaxResultBytes is the largest result a creator may return (CONTRACT §8).
const MaxResultBytes = 4 << 20

// ResultHash is "sha256:" and the hex SHA-256 of the result's UTF-8 bytes.
func ResultHash(result string) string {
	sum := sha256.Sum256([]byte(result))
	return "sha256:" + hex.EncodeToString(sum[:])
}

// SignResult returns the "ed25519:"-prefixed base58 signature over the UTF-8
// bytes of the result hash string, as creators sign results.
func SignResult(key ed25519.PrivateKey, resultHash string) string {
	return "ed25519:" + SignBase58(key, []byte(resultHash))
}

// RequestScope is whom a request to a creator is for and how it counts:
// the listing it is sent for (AgentID, "" for the reachability test of a
// listing not yet written and for the Test Execution tool), the key that
// listing registered, the environment and whether it is a test. All of it
// is signed with the request, so that a request captured at one agent's
// endpoint proves nothing at another's, and its environment or test flag
// cannot be changed on the way.
type RequestScope struct {
	AgentID     string
	SigningKey  string
	Environment Environment
	Test        bool
}

// requestPreamble starts the bytes a request signature covers; it is
// versioned so that a later scheme cannot be read as this one, and it is
// never the start of "<timestamp>.<body>", which webhooks sign.
const requestPreamble = "crtx-request-v2\n"

// RequestSigningBytes are the bytes the marketplace signs for a request to
// a creator (docs/creators.md): the preamble, then the timestamp, the agent
// id, the signing key, the environment and "true" or "false" for the test
// flag, each followed by a newline, then the body as sent.
func RequestSigningBytes(s RequestScope, timestamp string, body []byte) []byte {
	test := "false"
	if s.Test {
		test = "true"
	}
	head := requestPreamble + timestamp + "\n" + s.AgentID + "\n" + s.SigningKey + "\n" + string(s.Environment) + "\n" + test + "\n"
	return append([]byte(head), body...)
}

// RequestSignature signs a request to a creator: Ed25519 over
// RequestSigningBytes, base58 with the "ed25519:" prefix.
func RequestSignature(key ed25519.PrivateKey, s RequestScope, timestamp string, body []byte) string {
	return "ed25519:" + SignBase58(key, RequestSigningBytes(s, timestamp, body))
}

// VerifyRequestSignature checks a request signature made by RequestSignature.
// A value of s that holds a newline is refused: it would move the fields.
func VerifyRequestSignature(pub ed25519.PublicKey, s RequestScope, timestamp string, body []byte, sig string) bool {
	if !strings.HasPrefix(sig, "ed25519:") || strings.ContainsAny(timestamp+s.AgentID+s.SigningKey+string(s.Environment), "\n") {
		return false
	}
	return VerifyBase58(pub, RequestSigningBytes(s, timestamp, body), sig)
}

// TimestampSignature signs the bytes "<timestamp>.<body>": the
// X-Crtx-Signature of webhook deliveries. Creator requests no longer use
// it (RequestSignature), and no request signature can pass for one.
func TimestampSignature(key ed25519.PrivateKey, timestamp string, body []byte) string {
	return "ed25519:" + SignBase58(key, append([]byte(timestamp+"."), body...))
}

// VerifyTimestampSignature checks a signature made by TimestampSignature.
func VerifyTimestampSignature(pub ed25519.PublicKey, timestamp string, body []byte, sig string) bool {
	if !strings.HasPrefix(sig, "ed25519:") {
		return false
	}
	return VerifyBase58(pub, append([]byte(timestamp+"."), body...), sig)
}

// ReplyProblem says what is wrong with a creator's reply. Kind is the error
// code an execution fails with: invalid_agent_response for a malformed reply,
// invalid_signature for a hash or signature that does not hold.
type ReplyProblem struct {
	Kind    string
	Message string
}

func (p *ReplyProblem) Error() string { return p.Message }

// CheckReply checks a reply against the request it answers and the
// listing's signing key: the shape of the seed, the execution id, and for a
// completed reply the result's size, its hash and the Ed25519 signature.
func CheckReply(req CreatorRequest, r CreatorReply, key ed25519.PublicKey) error {
	malformed := func(format string, args ...any) error {
		return &ReplyProblem{Kind: CodeInvalidAgentResponse, Message: fmt.Sprintf(format, args...)}
	}
	if r.ExecutionID != req.ExecutionID {
		return malformed("the reply's execution_id %q is not the request's %q", r.ExecutionID, req.ExecutionID)
	}
	switch r.Status {
	case "failed":
		if r.Error == nil || *r.Error == "" {
			return malformed("a failed reply must carry an error description")
		}
		if r.Result != nil || r.ResultHash != nil || r.Signature != nil {
			return malformed("a failed reply must have null result, result_hash and signature")
		}
		if !IsText(*r.Error) {
			return malformed("the error description holds a NUL character (U+0000) or bytes that are not UTF-8; it must be text")
		}
		if r.ErrorCode != nil && *r.ErrorCode != CodeInvalidInput {
			return malformed("error_code %.40q is not one the marketplace knows (%q)", *r.ErrorCode, CodeInvalidInput)
		}
		return nil
	case "completed":
	default:
		return malformed("status %q is neither \"completed\" nor \"failed\"", r.Status)
	}
	if r.Result == nil || r.ResultHash == nil || r.Signature == nil {
		return malformed("a completed reply needs result, result_hash and signature")
	}
	if r.ErrorCode != nil {
		return malformed("a completed reply has no error_code")
	}
	if len(*r.Result) > MaxResultBytes {
		return malformed("the result is %d bytes, over the limit of %d", len(*r.Result), MaxResultBytes)
	}
	// The result is stored and published: it is text, or it is refused
	// here and the execution refunded, on either engine alike.
	if !IsText(*r.Result) {
		return malformed("the result holds a NUL character (U+0000) or bytes that are not UTF-8; it must be text")
	}
	if r.TokensUsed != nil && *r.TokensUsed < 0 {
		return malformed("tokens_used is negative")
	}
	bad := func(format string, args ...any) error {
		return &ReplyProblem{Kind: CodeInvalidSignature, Message: fmt.Sprintf(format, args...)}
	}
	if want := ResultHash(*r.Result); *r.ResultHash != want {
		return bad("result_hash %.80q is not the SHA-256 of the result (%s)", *r.ResultHash, want)
	}
	if !strings.HasPrefix(*r.Signature, "ed25519:") || !VerifyBase58(key, []byte(*r.ResultHash), *r.Signature) {
		return bad("the signature does not verify against the listing's signing key")
	}
	return nil
}

// Caller reaches creators' services; the dispatch package implements it.
type Caller interface {
	// CheckURL checks an endpoint or webhook URL before it is stored; errors
	// are *Error values naming field.
	CheckURL(ctx context.Context, field, rawURL string) error
	// Call sends req to endpoint, signed for scope, and returns the reply,
	// unjudged; a streamed reply's deltas are given to deltas as they come
	// (when it is not nil), and its result checked to be them joined.
	Call(ctx context.Context, endpoint string, scope RequestScope, req CreatorRequest, deltas func(text string)) (CreatorReply, error)
	// Trace is Call that also returns the exchange as sent and received,
	// for a creator testing their endpoint.
	Trace(ctx context.Context, endpoint string, scope RequestScope, req CreatorRequest) (CreatorReply, Exchange, error)
	// Deliver POSTs a webhook body, signed by the marketplace as creator
	// requests are and by the Standard Webhooks scheme (webhook-id id):
	// with its Ed25519 key ("v1a") and with each of secrets ("v1"); headers
	// are added (an A2A push's token and authorization).
	Deliver(ctx context.Context, url, id string, env Environment, body []byte, secrets [][]byte, headers map[string]string) (int, error)
	// Fetch GETs a document of at most max bytes (an OAuth client's
	// metadata document) through the same address checks.
	Fetch(ctx context.Context, url string, max int64) ([]byte, error)
}

// Exchange is one call's HTTP exchange as text: the request as sent
// (request line, headers, body) and the answer as received (status line,
// headers, the body's first bytes), Response empty when nothing answered.
// A creator reads it to see why a test failed.
type Exchange struct {
	Request  string
	Response string
}

// TestReport is what a reachability test of a creator's endpoint found:
// whether something answered, how soon, whether the reply had the
// protocol's shape and a valid signature, and what was wrong.
type TestReport struct {
	Reachable   bool
	LatencyMS   int64
	ShapeOK     bool
	SignatureOK bool
	// Status is the reply's, empty without one.
	Status   string
	Problems []string
	// Exchange is the test request as sent and the answer as received;
	// nil when no request was sent (a URL refused before).
	Exchange *Exchange
	// Example is the listing's example task the test sent; empty when it
	// sent none.
	Example string
}

// Passes is the listing rule: a reply of the right shape, completed with a
// valid signature or failed with an error (CONTRACT §6); a listing's
// example, shown as working, must complete.
func (r TestReport) Passes() bool {
	return r.Reachable && r.ShapeOK && (r.SignatureOK || r.Status == "failed" && r.Example == "")
}

// CallError is a failed call: no reply, a reply that is not an answer, or
// no answer in time.
type CallError struct {
	// Code is the execution error it maps to: execution_timeout when the
	// deadline passed, invalid_agent_response for a reply that is no
	// answer, endpoint_unreachable when nothing answered.
	Code string
	// NoResponse is true when not a byte came back (refused, reset, blocked):
	// the only case a dispatch may be retried.
	NoResponse bool
	// Message says what went wrong in words that name no URL, address or
	// resolver: it reaches callers and the execution record. Err is the
	// detail, for the server's log.
	Message string
	Err     error
}

func (e *CallError) Error() string { return e.Err.Error() }

func (e *CallError) Unwrap() error { return e.Err }
