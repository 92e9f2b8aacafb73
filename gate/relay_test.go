package gate_test

import (
	"context"
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
