package chaintest

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"slices"
	"sync"
	"testing"

	"github.com/gagliardetto/solana-go"
	"github.com/mr-tron/base58"
)

// Proxy stands between a client and a JSON-RPC server, as a hosted
// provider's load balancer does, and distorts what it is told to: it hides
// statuses, lags, drops or duplicates sends, and answers errors in each of
// the forms real nodes use. It counts every call by method, and keeps the
// signatures of every transaction sent through it.
type Proxy struct {
	// URL is the proxy's JSON-RPC URL, to give the client.
	URL    string
	target string

	mu    sync.Mutex
	calls map[string]int
	rules map[string]Rule
	sent  []string
}

// Call is one JSON-RPC request.
type Call struct {
	Method string            `json:"method"`
	Params []json.RawMessage `json:"params"`
	ID     json.RawMessage   `json:"id"`
}

// Rule answers a call in place of the server: it returns the body to
// answer with, calling forward (any number of times) to have the server
// answer; status 0 is 200.
type Rule func(c Call, forward func() []byte) (body []byte, status int)

// NewProxy serves a Proxy in front of target until the test ends.
func NewProxy(t testing.TB, target string) *Proxy {
	p := &Proxy{target: target, calls: map[string]int{}, rules: map[string]Rule{}}
	s := httptest.NewServer(p)
	t.Cleanup(s.Close)
	p.URL = s.URL
	return p
}

// Set has rule answer method's calls from now on; nil passes them on again.
func (p *Proxy) Set(method string, rule Rule) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if rule == nil {
		delete(p.rules, method)
		return
	}
	p.rules[method] = rule
}

// Calls is how many calls of method the proxy received.
func (p *Proxy) Calls(method string) int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.calls[method]
}

// Sent lists the fee payer's signature of every transaction sent through
// the proxy, each once, in the order first sent.
func (p *Proxy) Sent() []string {
	p.mu.Lock()
	defer p.mu.Unlock()
	return slices.Clone(p.sent)
}

func (p *Proxy) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	body, err := io.ReadAll(r.Body)
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	var c Call
	// A batch, or what is not JSON-RPC, passes on as it is.
	_ = json.Unmarshal(body, &c)
	p.mu.Lock()
	p.calls[c.Method]++
	rule := p.rules[c.Method]
	if c.Method == "sendTransaction" {
		if sig := Signature(c); sig != "" && !slices.Contains(p.sent, sig) {
			p.sent = append(p.sent, sig)
		}
	}
	p.mu.Unlock()
	status := http.StatusOK
	forward := func() []byte {
		resp, err := http.Post(p.target, "application/json", bytes.NewReader(body))
		if err != nil {
			status = http.StatusBadGateway
			return []byte(`{"jsonrpc":"2.0","error":{"code":-32603,"message":"proxy: ` + err.Error() + `"},"id":null}`)
		}
		defer resp.Body.Close()
		out, _ := io.ReadAll(resp.Body)
		status = resp.StatusCode
		return out
	}
	var out []byte
	if rule != nil {
		var st int
		out, st = rule(c, forward)
		if st != 0 {
			status = st
		}
	} else {
		out = forward()
	}
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_, _ = w.Write(out)
}

// Signature is the fee payer's signature of a sendTransaction call's
// transaction: after the signature count, the first 64 bytes.
func Signature(c Call) string {
	raw := Transaction(c)
	if len(raw) < 65 {
		return ""
	}
	return solana.SignatureFromBytes(raw[1:65]).String()
}

// Transaction is the bytes of a sendTransaction call's transaction, sent
// in base64 or base58.
func Transaction(c Call) []byte {
	var enc string
	if c.Method != "sendTransaction" || len(c.Params) == 0 || json.Unmarshal(c.Params[0], &enc) != nil {
		return nil
	}
	if b, err := base64.StdEncoding.DecodeString(enc); err == nil {
		return b
	}
	b, _ := base58.Decode(enc)
	return b
}

// RPCError is a JSON-RPC error answer to c.
func RPCError(c Call, code int, message string, data any) []byte {
	out, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": c.ID,
		"error": map[string]any{"code": code, "message": message, "data": data}})
	return out
}

// Result is a JSON-RPC answer to c with result.
func Result(c Call, result any) []byte {
	out, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": c.ID, "result": result})
	return out
}

// HideStatuses answers getSignatureStatuses as a node that has not seen,
// or no longer holds, the signatures hide says: null in their place.
func HideStatuses(hide func(signature string) bool) Rule {
	return func(c Call, forward func() []byte) ([]byte, int) {
		out := forward()
		var sigs []string
		if len(c.Params) == 0 || json.Unmarshal(c.Params[0], &sigs) != nil {
			return out, 0
		}
		var resp struct {
			Result struct {
				Context json.RawMessage   `json:"context"`
				Value   []json.RawMessage `json:"value"`
			} `json:"result"`
		}
		if json.Unmarshal(out, &resp) != nil || len(resp.Result.Value) != len(sigs) {
			return out, 0
		}
		for i, s := range sigs {
			if hide(s) {
				resp.Result.Value[i] = json.RawMessage("null")
			}
		}
		return Result(c, resp.Result), 0
	}
}

// Already is how a node says it holds a transaction sent again: each form
// seen from real nodes and providers.
type Already int

const (
	// AlreadyStructured is a preflight failure whose data names the error,
	// as a validator answers with preflight on.
	AlreadyStructured Already = iota
	// AlreadyMessage is the same in the message alone, no data, as
	// Surfnet and some providers answer.
	AlreadyMessage
	// AlreadyAccepted answers the signature, as if the send were new,
	// without passing it on.
	AlreadyAccepted
	// AlreadyUnavailable answers 503, as a provider's balancer does when
	// the node behind it is busy.
	AlreadyUnavailable
)

// SendsAfterFirst passes a transaction's first send on, and answers every
// later send of it in form, without passing it on.
func SendsAfterFirst(form Already) Rule {
	var mu sync.Mutex
	seen := map[string]bool{}
	return func(c Call, forward func() []byte) ([]byte, int) {
		sig := Signature(c)
		mu.Lock()
		again := seen[sig]
		seen[sig] = true
		mu.Unlock()
		if !again {
			return forward(), 0
		}
		switch form {
		case AlreadyStructured:
			return RPCError(c, -32002, "Transaction simulation failed: This transaction has already been processed",
				map[string]any{"err": "AlreadyProcessed", "logs": []string{}, "accounts": nil, "unitsConsumed": 0}), 0
		case AlreadyMessage:
			return RPCError(c, -32002, `Transaction verification failed for transaction Internal error: "Transaction error: This transaction has already been processed"`, nil), 0
		case AlreadyAccepted:
			return Result(c, sig), 0
		default:
			return []byte("upstream unavailable"), http.StatusServiceUnavailable
		}
	}
}
