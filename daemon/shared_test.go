package daemon

import (
	"bytes"
	"context"
	"crypto/ed25519"
	"errors"
	"io"
	"io/fs"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/crtx-market/crtx"
	"github.com/crtx-market/crtx/keyfile"
	"github.com/crtx-market/crtx/market"
	"github.com/crtx-market/crtx/store/storetest"
)

// Replicas on one database hold the marketplace's settings alike: one
// whose marketplace key was not copied never starts, one with another fee
// is refused while another replica serves, and a replica started alone,
// after every other stopped, records the new fee.
func TestReplicasShareSettings(t *testing.T) {
	ctx := context.Background()
	db := storetest.SchemaDSN(t)
	data := t.TempDir()
	// A log is read once its daemon has stopped writing it (Close).
	replica := func(data string, fee int) (*Daemon, *bytes.Buffer, error) {
		cfg := Defaults()
		log := &bytes.Buffer{}
		cfg.Addr, cfg.Data, cfg.DB, cfg.LogOutput, cfg.PlatformFeeBps = "127.0.0.1:0", data, db, log, fee
		d, err := Start(ctx, cfg)
		return d, log, err
	}
	a, _, err := replica(data, 500)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { a.Close() }()

	// A replica given no keys is told to copy them: a marketplace's keys
	// are made once.
	if _, _, err := replica(t.TempDir(), 500); !errors.Is(err, fs.ErrNotExist) || !strings.Contains(err.Error(), "copy authority.json and marketplace.json") {
		t.Fatalf("a replica without keys: %v", err)
	}
	// One given the authority key and a marketplace key of its own:
	// refused, by name, alive replica or not.
	other := t.TempDir()
	key, err := os.ReadFile(filepath.Join(data, "authority.json"))
	if err != nil {
		t.Fatal(err)
	}
	os.WriteFile(filepath.Join(other, "authority.json"), key, 0o600)
	_, mine, _ := ed25519.GenerateKey(nil)
	if err := keyfile.Write(filepath.Join(other, "marketplace.json"), mine); err != nil {
		t.Fatal(err)
	}
	if _, _, err := replica(other, 500); !errors.Is(err, market.ErrSettingsDiffer) || !strings.Contains(err.Error(), "marketplace.json") {
		t.Fatalf("a replica with another marketplace key: %v", err)
	}
	if _, _, err := replica(data, 300); !errors.Is(err, market.ErrSettingsDiffer) || !strings.Contains(err.Error(), `--platform-fee-bps is "300" here, "500" in the marketplace`) {
		t.Fatalf("a replica with another fee beside a live one: %v", err)
	}
	b, _, err := replica(data, 500)
	if err != nil {
		t.Fatalf("a replica with the same settings: %v", err)
	}
	b.Close()

	// Every replica stopped: a new fee is taken, and said.
	if err := a.Close(); err != nil {
		t.Fatal(err)
	}
	a, log, err := replica(data, 300)
	if err != nil {
		t.Fatalf("the fee changed with every replica stopped: %v", err)
	}
	if _, _, err := replica(data, 500); !errors.Is(err, market.ErrSettingsDiffer) {
		t.Errorf("the old fee beside the new: %v", err)
	}
	a.Close()
	if !strings.Contains(log.String(), "a shared setting changed") || !strings.Contains(log.String(), "--platform-fee-bps") {
		t.Errorf("the change was not logged:\n%s", log)
	}
	// The key is never changed by a restart, even alone.
	if _, _, err := replica(other, 300); !errors.Is(err, market.ErrSettingsDiffer) || !strings.Contains(err.Error(), "no restart changes marketplace.json") {
		t.Errorf("another marketplace key, alone: %v", err)
	}
}

// A rotation of the marketplace key rolls out replica by replica: one not
// given the next key yet keeps the rotation recorded, one with another next
// key is refused beside a live replica, the switch to the recorded next key
// is taken beside replicas still on the old one, and a replica restarted on
// the old key after the switch is refused.
func TestRotationRollsOut(t *testing.T) {
	ctx := context.Background()
	db := storetest.SchemaDSN(t)
	folder := func(files map[string][]byte) string {
		dir := t.TempDir()
		for name, b := range files {
			if err := os.WriteFile(filepath.Join(dir, name), b, 0o600); err != nil {
				t.Fatal(err)
			}
		}
		return dir
	}
	var lastLog *bytes.Buffer // read once its daemon has stopped
	start := func(data string) (*Daemon, error) {
		cfg := Defaults()
		lastLog = &bytes.Buffer{}
		cfg.Addr, cfg.Data, cfg.DB, cfg.LogOutput = "127.0.0.1:0", data, db, lastLog
		return Start(ctx, cfg)
	}
	first := t.TempDir()
	a, err := start(first)
	if err != nil {
		t.Fatal(err)
	}
	a.Close()
	read := func(name string) []byte {
		b, err := os.ReadFile(filepath.Join(first, name))
		if err != nil {
			t.Fatal(err)
		}
		return b
	}
	if _, err := InitNextKey(first); err != nil {
		t.Fatal(err)
	}
	authority, old, next := read(authorityFile), read(marketplaceFile), read(nextFile)
	if a, err = start(first); err != nil { // publishes the next key, alone
		t.Fatal(err)
	}
	defer func() { a.Close() }()

	b, err := start(folder(map[string][]byte{authorityFile: authority, marketplaceFile: old}))
	if err != nil {
		t.Fatalf("a replica not given the next key yet: %v", err)
	}
	defer b.Close()
	bLog := lastLog
	_, other, _ := ed25519.GenerateKey(nil)
	otherDir := folder(map[string][]byte{authorityFile: authority, marketplaceFile: old})
	keyfile.Write(filepath.Join(otherDir, nextFile), other)
	if _, err := start(otherDir); !errors.Is(err, market.ErrSettingsDiffer) || !strings.Contains(err.Error(), nextFile) {
		t.Errorf("another next key beside a live replica: %v", err)
	}
	switched, err := start(folder(map[string][]byte{authorityFile: authority, marketplaceFile: next}))
	if err != nil {
		t.Fatalf("the switch, beside replicas on the old key: %v", err)
	}
	defer switched.Close()
	b.Close()
	if !strings.Contains(bLog.String(), "does not publish the next key") {
		t.Errorf("the replica without the next key did not say so:\n%s", bLog)
	}
	if _, err := start(folder(map[string][]byte{authorityFile: authority, marketplaceFile: old})); !errors.Is(err, market.ErrSettingsDiffer) || !strings.Contains(err.Error(), "but a rotation") {
		t.Errorf("the old key after the switch: %v", err)
	}

	// A rotation abandoned: every replica stopped, one started without the
	// next key clears it, and a switch to it is refused from then on.
	switched.Close()
	a.Close()
	rotating := folder(map[string][]byte{authorityFile: authority, marketplaceFile: next})
	if _, err := InitNextKey(rotating); err != nil {
		t.Fatal(err)
	}
	abandoned, _ := os.ReadFile(filepath.Join(rotating, nextFile))
	d, err := start(rotating)
	if err != nil {
		t.Fatal(err)
	}
	d.Close()
	if d, err = start(folder(map[string][]byte{authorityFile: authority, marketplaceFile: next})); err != nil {
		t.Fatalf("a replica alone without the next key: %v", err)
	}
	d.Close()
	if _, err := start(folder(map[string][]byte{authorityFile: authority, marketplaceFile: abandoned})); !errors.Is(err, market.ErrSettingsDiffer) {
		t.Errorf("a switch to the abandoned next key: %v", err)
	}
}

// A replica refused for its settings leaves the chain and the store as
// they were: beside one without a chain, a replica given devnet's chain
// sends no request to it and binds devnet to no mint (which would refuse
// money by hand to the replica serving without one, once restarted). Nor
// does one that fails later and never serves.
func TestARefusedReplicaBindsNoChain(t *testing.T) {
	ctx := context.Background()
	db := storetest.SchemaDSN(t)
	data := t.TempDir()
	cfg := Defaults()
	cfg.Addr, cfg.Data, cfg.DB, cfg.LogOutput = "127.0.0.1:0", data, db, io.Discard
	a, err := Start(ctx, cfg)
	if err != nil {
		t.Fatal(err)
	}
	defer a.Close()

	var asked atomic.Int64
	rpc := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		asked.Add(1)
		http.Error(w, "no chain here", http.StatusServiceUnavailable)
	}))
	defer rpc.Close()
	_, treasury, _ := ed25519.GenerateKey(nil)
	chained := cfg
	chained.SolanaRPCDevnet, chained.TreasuryKeypair = rpc.URL, filepath.Join(t.TempDir(), "treasury.json")
	if err := keyfile.Write(chained.TreasuryKeypair, treasury); err != nil {
		t.Fatal(err)
	}
	if b, err := Start(ctx, chained); !errors.Is(err, market.ErrSettingsDiffer) || !strings.Contains(err.Error(), "the devnet chain") {
		if b != nil {
			b.Close()
		}
		t.Fatalf("a replica with a chain beside one without: %v", err)
	}
	if n := asked.Load(); n != 0 {
		t.Errorf("the refused replica sent %d requests to its chain", n)
	}
	unbound := func(who string) {
		t.Helper()
		store, err := OpenStore(ctx, cfg)
		if err != nil {
			t.Fatal(err)
		}
		defer store.Close()
		err = store.View(ctx, func(tx crtx.Tx) error {
			_, err := tx.System.Meta(ctx, chainMeta(crtx.Devnet))
			return err
		})
		if !errors.Is(err, crtx.ErrNotFound) {
			t.Errorf("devnet's mint recorded by %s: %v", who, err)
		}
	}
	unbound("the refused replica")
	// Alone, its settings are taken; but its chain does not answer, so
	// it never serves, and binds nothing either.
	if err := a.Close(); err != nil {
		t.Fatal(err)
	}
	if b, err := Start(ctx, chained); err == nil || !strings.Contains(err.Error(), "the devnet treasury's token account") {
		if b != nil {
			b.Close()
		}
		t.Fatalf("a replica whose chain does not answer: %v", err)
	}
	unbound("a replica that never served")
}
