package e2e_test

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/crtx-market/crtx"
	"github.com/crtx-market/crtx/api"
	"github.com/crtx-market/crtx/creator"
	"github.com/crtx-market/crtx/daemon"
	"github.com/crtx-market/crtx/market"
)

// The marketplace key rotates as docs/deploy.md says: the next key is made
// and published beside the current one, the creator's SDK reads both, the
// replicas switch to it, and every call before, across and after the
// switch completes. A replica left with the old key is then refused.
func TestRotatingTheMarketplaceKey(t *testing.T) {
	m := newMarket(t, "10")
	// Restarts keep the address: the creator reads the keys from it, and
	// the caller's clients call it.
	m.cfg.Addr = strings.TrimPrefix(m.d.URL, "http://")
	wellKnown := func() api.WellKnown {
		resp, err := m.http.Get(m.d.URL + "/.well-known/crtx.json") // checked against openapi.json
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		var wk api.WellKnown
		json.NewDecoder(resp.Body).Decode(&wk)
		return wk
	}
	old := wellKnown().SigningPublicKey

	// 1. Make the next key, and publish it. The creator's SDK reads both
	// (one that read the keys before reads them again within the hour:
	// creator's TestMarketplaceKeyRotation).
	next, err := daemon.InitNextKey(m.cfg.Data)
	if err != nil {
		t.Fatal(err)
	}
	m.restart()
	if wk := wellKnown(); wk.SigningPublicKey != old || wk.NextSigningPublicKey != crtx.Address(next) {
		t.Fatalf("published %+v, want the old key and the next", wk)
	}
	// Agent cards' key set names both too.
	resp, err := http.Get(m.d.URL + "/.well-known/jwks.json")
	if err != nil {
		t.Fatal(err)
	}
	var set struct {
		Keys []map[string]string `json:"keys"`
	}
	json.NewDecoder(resp.Body).Decode(&set)
	resp.Body.Close()
	if len(set.Keys) != 2 || set.Keys[0]["kid"] == set.Keys[1]["kid"] {
		t.Errorf("jwks.json during the rotation = %+v, want the current key and the next", set.Keys)
	}
	key := agentKey()
	agent := m.list(serveAgent(t, key, creator.NewHandler(key, func(context.Context, creator.Request) (string, int, error) {
		return "ok", 0, nil
	}, creator.Options{Marketplace: m.d.URL})), "0.01")
	m.ran(t, m.liveKey, agent)

	// 2. Switch: the next key becomes the marketplace's, the old one is
	// published as the previous, which replicas not switched yet sign with.
	dir := m.cfg.Data
	if err := os.Rename(filepath.Join(dir, "marketplace.json"), filepath.Join(dir, "marketplace.previous.json")); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(filepath.Join(dir, "marketplace.next.json"), filepath.Join(dir, "marketplace.json")); err != nil {
		t.Fatal(err)
	}
	m.restart()
	if wk := wellKnown(); wk.SigningPublicKey != crtx.Address(next) || wk.NextSigningPublicKey != "" || wk.PreviousSigningPublicKey != old {
		t.Fatalf("published %+v after the switch, want the next key, and the old one as the previous", wk)
	}
	m.ran(t, m.liveKey, agent)

	// 3. An hour on, the previous key is removed from every replica.
	if err := os.Rename(filepath.Join(dir, "marketplace.previous.json"), filepath.Join(dir, "marketplace.old.json")); err != nil {
		t.Fatal(err)
	}
	m.restart()
	if wk := wellKnown(); wk.SigningPublicKey != crtx.Address(next) || wk.PreviousSigningPublicKey != "" {
		t.Fatalf("published %+v once the previous key is gone", wk)
	}
	m.ran(t, m.liveKey, agent)

	// 4. The old key is no longer the marketplace's: a replica holding it
	// is refused, even alone.
	if err := m.d.Close(); err != nil {
		t.Fatal(err)
	}
	os.Rename(filepath.Join(dir, "marketplace.json"), filepath.Join(dir, "marketplace.next.json"))
	os.Rename(filepath.Join(dir, "marketplace.old.json"), filepath.Join(dir, "marketplace.json"))
	if d, err := daemon.Start(ctx, m.cfg); err == nil {
		d.Close()
		t.Error("a replica with the rotated-out key started")
	} else if !errors.Is(err, market.ErrSettingsDiffer) {
		t.Errorf("a replica with the rotated-out key: %v", err)
	}
	os.Rename(filepath.Join(dir, "marketplace.json"), filepath.Join(dir, "marketplace.old.json"))
	os.Rename(filepath.Join(dir, "marketplace.next.json"), filepath.Join(dir, "marketplace.json"))
	m.restart()
}
