package ledger_test

import (
	"context"
	"testing"

	"github.com/crtx-market/crtx"
	"github.com/crtx-market/crtx/payment"
	"github.com/crtx-market/crtx/payment/ledger"
)

// store closes executions by recording them; the rest is nil.
type store struct {
	crtx.Store
	closed []string
}

func (s *store) CloseExecution(_ context.Context, c *crtx.Closing) (bool, error) {
	s.closed = append(s.closed, c.Execution.ID)
	return true, nil
}

type host struct {
	payment.Host
	s *store
}

func (h host) Store() crtx.Store { return h.s }

// A call paid from a wallet is dispatched at once, may be cancelled while
// pending, and closes in the store's one closing transaction.
func TestLedgerClosesInTheStore(t *testing.T) {
	st := &store{}
	s := ledger.New(host{s: st})
	if s.Name() != ledger.Name {
		t.Fatalf("name %q", s.Name())
	}
	e := crtx.Execution{ID: "exe_1", Status: crtx.ExecPending}
	if got, ok := s.Ready(context.Background(), e, false); !ok || got.ID != e.ID {
		t.Fatalf("ready: %v %+v", ok, got)
	}
	if err := s.Cancellable(e); err != nil {
		t.Fatalf("a pending call is not cancellable: %v", err)
	}
	ok, err := s.Close(context.Background(), &crtx.Closing{Execution: e}, payment.Outcome{})
	if err != nil || !ok || len(st.closed) != 1 || st.closed[0] != "exe_1" {
		t.Fatalf("close: %v %v, closed %v", ok, err, st.closed)
	}
}
