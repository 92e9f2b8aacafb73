package creator

import (
	"context"
	"crypto/ed25519"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"slices"
	"sync"
	"time"

	"github.com/crtx-market/crtx"
	"github.com/crtx-market/crtx/api"
)

// The marketplace's keys are read again after keysTTL, so that the next
// key it publishes before a rotation is known by the switch; and, at most
// once per refreshAfter, when a signature verifies against none of them: a
// flood of forged requests makes one read a minute, not one each.
const (
	keysTTL      = time.Hour
	refreshAfter = time.Minute
)

// marketKeys are the keys a marketplace signs requests with: given, or
// read from its URL and read again when they are old or a signature
// verifies against none.
type marketKeys struct {
	url string
	now func() time.Time

	mu      sync.Mutex
	keys    []ed25519.PublicKey
	fetched time.Time // when keys were read
	wait    time.Time // no read before it: the last was less than refreshAfter ago
	err     error     // why the last read failed
}

// verify reports whether ok accepts one of the marketplace's keys. Reads
// hold the lock: the requests that arrive meanwhile wait for them rather
// than read too.
func (m *marketKeys) verify(ctx context.Context, ok func(ed25519.PublicKey) bool) (bool, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.url == "" {
		return slices.ContainsFunc(m.keys, ok), nil
	}
	if m.keys == nil || m.now().Sub(m.fetched) >= keysTTL {
		m.read(ctx)
	}
	if m.keys == nil {
		return false, m.err
	}
	if slices.ContainsFunc(m.keys, ok) {
		return true, nil
	}
	m.read(ctx)
	return slices.ContainsFunc(m.keys, ok), nil
}

// read reads the keys, unless the last read was less than refreshAfter
// ago; one that fails keeps those read before.
func (m *marketKeys) read(ctx context.Context) {
	if m.now().Before(m.wait) {
		return
	}
	m.wait = m.now().Add(refreshAfter)
	keys, err := FetchMarketplaceKeys(ctx, m.url)
	if m.err = err; err == nil {
		m.keys, m.fetched = keys, m.now()
	}
}

// FetchMarketplaceKey reads the marketplace's request-signing key from its
// /.well-known/crtx.json.
func FetchMarketplaceKey(ctx context.Context, marketplaceURL string) (ed25519.PublicKey, error) {
	keys, err := FetchMarketplaceKeys(ctx, marketplaceURL)
	if err != nil {
		return nil, err
	}
	return keys[0], nil
}

// FetchMarketplaceKeys reads the keys the marketplace signs requests with
// from its /.well-known/crtx.json: its key, and during a rotation the next
// one after it.
func FetchMarketplaceKeys(ctx context.Context, marketplaceURL string) ([]ed25519.PublicKey, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, marketplaceURL+"/.well-known/crtx.json", nil)
	if err != nil {
		return nil, err
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("creator: %s/.well-known/crtx.json: HTTP %d", marketplaceURL, resp.StatusCode)
	}
	var wk api.WellKnown
	if err := json.NewDecoder(io.LimitReader(resp.Body, 1<<20)).Decode(&wk); err != nil {
		return nil, fmt.Errorf("creator: %s/.well-known/crtx.json: %w", marketplaceURL, err)
	}
	key, err := crtx.ParseAddress("signing_public_key", wk.SigningPublicKey)
	if err != nil {
		return nil, err
	}
	keys := []ed25519.PublicKey{key}
	if wk.NextSigningPublicKey != "" {
		next, err := crtx.ParseAddress("next_signing_public_key", wk.NextSigningPublicKey)
		if err != nil {
			return nil, err
		}
		keys = append(keys, next)
	}
	return keys, nil
}
