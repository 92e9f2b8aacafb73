package main

import (
	"context"
	"crypto/ed25519"
	"database/sql"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/crtx-market/crtx"
	"github.com/crtx-market/crtx/daemon"
)

// benchStore makes a store of its own on the engine of db, and the
// operator's token file; cleanup removes both.
func benchStore(ctx context.Context, db string) (cfg daemon.Config, token string, cleanup func(), err error) {
	data, err := os.MkdirTemp("", "crtx-bench")
	if err != nil {
		return cfg, "", nil, err
	}
	cleanup = func() { os.RemoveAll(data) }
	cfg = daemon.Defaults()
	cfg.Data = data
	token = filepath.Join(data, "admin-token")
	if err := os.WriteFile(token, []byte(benchAdminToken), 0o600); err != nil {
		cleanup()
		return cfg, "", nil, err
	}
	if db != "sqlite" {
		// A schema of its own, dropped afterwards: runs never see each
		// other's rows.
		schema, drop, err := benchSchema(ctx, db)
		if err != nil {
			cleanup()
			return cfg, "", nil, err
		}
		cleanup = func() { drop(); os.RemoveAll(data) }
		sep := "?"
		if strings.Contains(db, "?") {
			sep = "&"
		}
		cfg.DB = db + sep + "search_path=" + schema
	}
	return cfg, token, cleanup, nil
}

// benchAdminToken is the operator's token of the marketplaces bench starts.
const benchAdminToken = "bench-admin-token-0123456789abcdef"

// benchSchema creates an empty schema on the PostgreSQL server at dsn.
func benchSchema(ctx context.Context, dsn string) (string, func(), error) {
	db, err := sql.Open("pgx", dsn)
	if err != nil {
		return "", nil, err
	}
	name := "crtx_bench_" + strings.ToLower(crtx.RandomBase62(10))
	if _, err := db.ExecContext(ctx, `CREATE SCHEMA `+name); err != nil {
		db.Close()
		return "", nil, err
	}
	return name, func() {
		db.Exec(`DROP SCHEMA ` + name + ` CASCADE`)
		db.Close()
	}, nil
}

// seed fills the store before the marketplace starts: n agents in the
// catalog, and m past executions of one wallet, whose devnet API key it
// returns.
func seed(ctx context.Context, cfg daemon.Config, n, m int) (string, error) {
	mk, store, err := daemon.OpenMarket(ctx, cfg, nil)
	if err != nil {
		return "", err
	}
	defer store.Close()
	now := time.Now().UTC().Truncate(time.Microsecond)
	tagSets := [][]string{{"data"}, {"sql", "data"}, {"writing"}, {"code", "sql"}, {"research", "legal"}, {"finance"}}
	const batch = 5000
	for start := 0; start < max(n, 1); start += batch {
		err := store.Update(ctx, func(tx crtx.Tx) error {
			if err := tx.Catalog.EnsureCreator(ctx, "bench-creator", now); err != nil {
				return err
			}
			for i := start; i < min(start+batch, max(n, 1)); i++ {
				a := crtx.Agent{ID: fmt.Sprintf("agt_bench%07d", i), Creator: "bench-creator", Name: fmt.Sprintf("Agent %d", i),
					Tagline: "A seeded agent.", Description: "Seeded for the benchmark.", Tags: tagSets[i%len(tagSets)],
					InputSchema: json.RawMessage(`{"type":"object"}`), OutputSchema: json.RawMessage(`{"type":"string"}`),
					PricingModel: "pay_per_use", Price: crtx.USDC(1000 + i%5000), EndpointURL: "https://seeded.invalid/execute",
					SigningPublicKey: "seeded", TimeoutSeconds: 60, Status: crtx.AgentActive,
					CreatedAt: now.Add(-time.Duration(i) * time.Second), UpdatedAt: now}
				if err := tx.Catalog.InsertAgent(ctx, a); err != nil {
					return err
				}
			}
			return nil
		})
		if err != nil {
			return "", err
		}
	}
	_, wk, _ := ed25519.GenerateKey(nil)
	wallet := crtx.Address(wk.Public().(ed25519.PublicKey))
	key, secret, err := mk.Accounts.CreateKey(ctx, wallet, "bench history", crtx.Devnet, nil)
	if err != nil {
		return "", err
	}
	for start := 0; start < m; start += batch {
		err := store.Update(ctx, func(tx crtx.Tx) error {
			for i := start; i < min(start+batch, m); i++ {
				at := now.Add(-time.Duration(i) * time.Second)
				e := crtx.Execution{ID: crtx.NewUUID(), Environment: crtx.Devnet, Wallet: wallet, KeyID: key.ID, AgentID: "agt_bench0000000",
					AgentName: "Agent 0", Creator: "bench-creator", EndpointURL: "https://seeded.invalid/execute", SigningPublicKey: "seeded",
					Task: "seeded", Parameters: json.RawMessage(`{}`), TimeoutSeconds: 60, Cost: 1000, Held: 1000, Base: 1000, CreatorAmount: 990, PlatformAmount: 10,
					Status: crtx.ExecCompleted, InitiatedAt: at, CompletedAt: &at, Deadline: at, LeaseUntil: at}
				if err := tx.Executions.InsertExecution(ctx, e); err != nil {
					return err
				}
				// Counted against the key, as a charge counts it.
				if err := tx.Access.AddKeyUsage(ctx, key.ID, e.Cost); err != nil {
					return err
				}
			}
			return nil
		})
		if err != nil {
			return "", err
		}
	}
	return secret, nil
}
