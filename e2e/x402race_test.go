package e2e_test

import (
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/crtx-market/crtx/chain/chaintest"
)

// A send that raced another to a payment's claim, and whose simulation the
// chain answers only once the other call has ended and landed the payment
// ("already processed"), was charged: it is answered as the payment sent
// again, never with "nothing was charged", which would have an honest
// client pay a second time.
func TestX402LateSimulationOfALandedPayment(t *testing.T) {
	x := newX402Market(t)
	agent := x.list(newService(t, echo), "0.02")
	pr := x.requirements(agent)
	p := chaintest.NewPayment(t, x.chain.treasury, x.payer.key, x.chain.mint, x.chain.treasury, 20_000)
	header := x.header(pr, p.Encode(t, x.chain.net.Blockhash(t)))
	paid := x.held()

	// Both sends find the payment unclaimed: the first simulation waits
	// for the second to be asked (or 10 s); the second is answered once
	// one of the two calls has ended.
	var n atomic.Int32
	second, ended := make(chan struct{}), make(chan struct{})
	x.chain.proxy.Set("simulateTransaction", func(_ chaintest.Call, forward func() []byte) ([]byte, int) {
		switch n.Add(1) {
		case 1:
			select {
			case <-second:
			case <-time.After(10 * time.Second):
			}
		case 2:
			close(second)
			select {
			case <-ended:
			case <-time.After(60 * time.Second):
			}
		}
		return forward(), 0
	})
	type answer struct {
		status int
		msg    string
		id     *string
		body   string
	}
	answers := make(chan answer, 2)
	for range 2 {
		go func() {
			status, eb, _, _, body := x.post(agent, header, run("late"))
			answers <- answer{status, eb.Error.Message, eb.Error.ExecutionID, string(body)}
		}()
	}
	first := <-answers
	close(ended)
	late := <-answers
	x.chain.proxy.Set("simulateTransaction", nil)
	if n.Load() < 2 {
		t.Fatalf("the second send was not simulated (%d simulations): the race was not run", n.Load())
	}
	if first.status != 200 || !strings.Contains(first.body, "echo: late") {
		t.Fatalf("the send that ran: %d %s", first.status, first.body)
	}
	if strings.Contains(late.msg, "nothing was charged") || late.status != 402 || !strings.Contains(late.msg, "duplicate_settlement") ||
		late.id == nil {
		t.Errorf("the late send: %d %s, want 402 duplicate_settlement naming the execution", late.status, late.body)
	}
	if got := x.held(); got != paid-usdc("0.02") {
		t.Errorf("the payer holds %s, want %s: charged once", got, paid-usdc("0.02"))
	}
}
