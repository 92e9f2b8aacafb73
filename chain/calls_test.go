package chain

import (
	"context"
	"crypto/ed25519"
	"net/http"
	"net/http/httptest"
	"sync/atomic"
	"testing"

	"github.com/gagliardetto/solana-go"
)

// Calls to a provider that fails (an HTTP error, no answer) are counted by
// method as failed, beside every call made; an error in a JSON-RPC answer is
// the chain's word on a request, not the provider failing.
func TestRPCErrorsAreCounted(t *testing.T) {
	var status atomic.Int32
	status.Store(http.StatusTooManyRequests)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if s := int(status.Load()); s != http.StatusOK {
			http.Error(w, "slow down", s)
			return
		}
		w.Write([]byte(`{"jsonrpc":"2.0","id":1,"error":{"code":-32602,"message":"could not find account"}}`))
	}))
	_, treasury, _ := ed25519.GenerateKey(nil)
	c, err := New(Config{RPC: srv.URL, Mint: solana.NewWallet().PublicKey().String(), Treasury: treasury})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c.Balance(t.Context()); err == nil {
		t.Fatal("a balance from a provider answering 429")
	}
	status.Store(http.StatusOK)
	c.Balance(t.Context())
	srv.Close()
	c.Balance(t.Context()) // nothing answers
	cancelled, cancel := context.WithCancel(t.Context())
	cancel()
	c.Balance(cancelled) // given up by this process: no failure of the provider's
	calls, failed := c.RPCCalls()
	if calls["getTokenAccountBalance"] != 4 || failed["getTokenAccountBalance"] != 2 {
		t.Errorf("calls %v, failed %v: want 4 calls, of which the 429 and the unanswered failed", calls, failed)
	}
}
