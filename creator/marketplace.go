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
	fetchTimeout = 10 * time.Second
	firstRetry   = 5 * time.Second
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

// verify reports whether ok accepts one of the marketplace's keys, read
// first when there are none yet or they are old, and again when none is
// accepted; reads are throttled (read), and the check runs outside the
// lock.
func (m *marketKeys) verify(ctx context.Context, ok func(ed25519.PublicKey) bool) (bool, error) {
	if m.url == "" {
		return slices.ContainsFunc(m.keys, ok), nil
	}
	keys, err := m.read(ctx, false)
	if keys == nil {
		return false, err
	}
	if slices.ContainsFunc(keys, ok) {
		return true, nil
	}
	keys, _ = m.read(ctx, true)
	return slices.ContainsFunc(keys, ok), nil
}

// read answers the keys, reading them first when there are none, they are
// older than keysTTL, or force is set; but never twice within
// refreshAfter (firstRetry while none were read), and never with the request's own context, which a caller
// that hangs up would cancel. A read that fails keeps the keys read
// before. Requests that arrive during a read wait for it.
func (m *marketKeys) read(ctx context.Context, force bool) ([]ed25519.PublicKey, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	due := force || m.keys == nil || m.now().Sub(m.fetched) >= keysTTL
	if due && !m.now().Before(m.wait) {
		m.wait = m.now().Add(refreshAfter)
		if m.keys == nil {
			// Until keys are first read, sooner: a marketplace briefly
			// down while the service starts.
			m.wait = m.now().Add(firstRetry)
		}
		rctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), fetchTimeout)
		keys, err := FetchMarketplaceKeys(rctx, m.url)
		cancel()
		if m.err = err; err == nil {
			m.keys, m.fetched = keys, m.now()
		}
	}
	return m.keys, m.err
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
// from its /.well-known/crtx.json: its key, then during a rotation the next
// one, and for a while after it the previous one, which replicas not
// switched yet still sign with.
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
	for field, v := range map[string]string{"next_signing_public_key": wk.NextSigningPublicKey, "previous_signing_public_key": wk.PreviousSigningPublicKey} {
		if v == "" {
			continue
		}
		k, err := crtx.ParseAddress(field, v)
		if err != nil {
			return nil, err
		}
		keys = append(keys, k)
	}
	return keys, nil
}
