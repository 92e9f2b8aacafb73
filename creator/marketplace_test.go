package creator_test

import (
	"context"
	"crypto/ed25519"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/crtx-market/crtx"
	"github.com/crtx-market/crtx/api"
	"github.com/crtx-market/crtx/creator"
)

// A marketplace rotating its key publishes the next one first: a handler
// that read both accepts requests signed with either, across the switch,
// without reading again; the keys are read again after an hour, and when a
// signature verifies against none of them, once a minute at most.
func TestMarketplaceKeyRotation(t *testing.T) {
	oldPub, oldKey, _ := ed25519.GenerateKey(nil)
	nextPub, nextKey, _ := ed25519.GenerateKey(nil)
	var mu sync.Mutex
	published := api.WellKnown{SigningPublicKey: crtx.Address(oldPub), NextSigningPublicKey: crtx.Address(nextPub)}
	publish := func(wk api.WellKnown) { mu.Lock(); published = wk; mu.Unlock() }
	var reads atomic.Int32
	wk := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		reads.Add(1)
		mu.Lock()
		defer mu.Unlock()
		json.NewEncoder(w).Encode(published)
	}))
	defer wk.Close()
	clock := time.Now()
	_, key, _ := ed25519.GenerateKey(nil)
	h := creator.NewHandler(key, func(context.Context, creator.Request) (string, int, error) { return "ok", 0, nil },
		creator.Options{Marketplace: wk.URL, Now: func() time.Time { return clock }})
	url := serve(t, h)
	s := crtx.RequestScope{AgentID: "agt_x", SigningKey: h.PublicKey(), Environment: crtx.Mainnet}
	status := func(by ed25519.PrivateKey) int {
		code, _ := post(t, url, by, s, crtx.CreatorRequest{ExecutionID: crtx.NewUUID(), Task: "t", TimeoutSeconds: 5}, clock)
		return code
	}
	check := func(step string, by ed25519.PrivateKey, want int, read int32) {
		t.Helper()
		if got := status(by); got != want || reads.Load() != read {
			t.Errorf("%s: status %d after %d reads, want %d after %d", step, got, reads.Load(), want, read)
		}
	}
	check("the current key", oldKey, 200, 1)
	check("the next key, a replica switched already", nextKey, 200, 1)
	publish(api.WellKnown{SigningPublicKey: crtx.Address(nextPub)})
	check("the next key once the switch is done", nextKey, 200, 1)

	// Rotated again, to a key this handler never saw: refused until a
	// minute has passed since the last read, then read and accepted.
	newerPub, newerKey, _ := ed25519.GenerateKey(nil)
	publish(api.WellKnown{SigningPublicKey: crtx.Address(newerPub)})
	check("a key read a moment ago", newerKey, 401, 1)
	clock = clock.Add(61 * time.Second)
	check("a new key a minute later", newerKey, 200, 2)
	_, forger, _ := ed25519.GenerateKey(nil)
	check("a forgery", forger, 401, 2)
	check("another forgery, at once", forger, 401, 2)

	// An hour on, the keys are read again before verifying: the old key,
	// no longer published, is refused; the previous one, which replicas
	// not switched yet sign with, is accepted.
	publish(api.WellKnown{SigningPublicKey: crtx.Address(newerPub), PreviousSigningPublicKey: crtx.Address(nextPub)})
	clock = clock.Add(time.Hour)
	check("the old key an hour later", oldKey, 401, 3)
	check("the previous key, from a replica not switched yet", nextKey, 200, 3)

	// The marketplace unreachable an hour on: the keys read before stay.
	wk.Close()
	clock = clock.Add(time.Hour)
	check("the keys kept when a read fails", nextKey, 200, 3)
}
