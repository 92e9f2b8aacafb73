package gate_test

import (
	"context"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/crtx-market/crtx/gate"
)

// The goroutine that adds pieces never waits on the one that writes them,
// which gets every piece in order before finish returns.
func TestRelayNeverWaitsOnItsWriter(t *testing.T) {
	r := gate.NewRelay()
	held := make(chan struct{})
	var got []string
	finish := r.Start(context.Background(), func(p gate.Piece) {
		<-held // a caller that does not read
		got = append(got, p.Text)
	})
	added := make(chan struct{})
	go func() {
		for _, s := range []string{"Bon", "jour", ", ", "monde"} {
			r.Add("exe_1", s)
		}
		close(added)
	}()
	select {
	case <-added:
	case <-time.After(10 * time.Second):
		t.Fatal("adding waited on the writer")
	}
	close(held)
	finish()
	if strings.Join(got, "|") != "Bon|jour|, |monde" {
		t.Fatalf("written %q", got)
	}
}

// A writer whose caller has gone stops at once; finish does not wait for
// it to write the rest.
func TestRelayStopsWithItsCaller(t *testing.T) {
	r := gate.NewRelay()
	ctx, cancel := context.WithCancel(context.Background())
	finish := r.Start(ctx, func(gate.Piece) {})
	cancel()
	r.Add("exe_1", "late")
	finish()
}

// Between pieces a started relay holds no goroutine: thousands of streams
// held open cost none each. A piece added once it is finished is not
// written (its caller's answer has ended).
func TestRelayHoldsNoGoroutineBetweenPieces(t *testing.T) {
	// writers counts the goroutines running a relay's code; a test
	// before this one may leave one that is still returning.
	writers := func() (n int) {
		buf := make([]byte, 1<<20)
		for _, g := range strings.Split(string(buf[:runtime.Stack(buf, true)]), "\n\n") {
			if strings.Contains(g, "gate.(*Relay)") {
				n++
			}
		}
		return n
	}
	none := func(when string) {
		t.Helper()
		for deadline := time.Now().Add(10 * time.Second); writers() != 0; time.Sleep(time.Millisecond) {
			if time.Now().After(deadline) {
				t.Fatalf("%s, %d relay writers run", when, writers())
			}
		}
	}
	none("before the test")
	r := gate.NewRelay()
	written := make(chan string, 4)
	finish := r.Start(context.Background(), func(p gate.Piece) { written <- p.Text })
	if n := writers(); n != 0 {
		t.Fatalf("a relay with nothing to write runs %d writers", n)
	}
	r.Add("exe_1", "Bon")
	if got := <-written; got != "Bon" {
		t.Fatalf("written %q", got)
	}
	none("after its piece")
	r.Add("exe_1", "jour")
	finish()
	if got := <-written; got != "jour" {
		t.Fatalf("written %q", got)
	}
	r.Add("exe_1", "late")
	time.Sleep(10 * time.Millisecond)
	select {
	case got := <-written:
		t.Fatalf("written after finish: %q", got)
	default:
	}
}
