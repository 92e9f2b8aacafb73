package storetest

import (
	"context"
	"database/sql"
	"errors"
	"io/fs"
	"strconv"
	"strings"
	"testing"
	"testing/fstest"
	"time"

	"github.com/crtx-market/crtx"
	"github.com/crtx-market/crtx/merkle"
)

// Before returns the migrations of files (in dir) numbered below version,
// to bring a database to the schema an older crtxd left.
func Before(t testing.TB, files fs.FS, dir string, version int) fs.FS {
	t.Helper()
	names, err := fs.Glob(files, dir+"/*.sql")
	if err != nil {
		t.Fatal(err)
	}
	out := fstest.MapFS{}
	for _, name := range names {
		num, _, _ := strings.Cut(strings.TrimPrefix(name, dir+"/"), "_")
		if v, _ := strconv.Atoi(num); v < version {
			b, _ := fs.ReadFile(files, name)
			out[name] = &fstest.MapFile{Data: b}
		}
	}
	return out
}

// LedgerRowsMigration checks the migration that moved postings and
// references into their transactions' rows: old is a database with the
// schema before it, and open opens it with every migration applied.
func LedgerRowsMigration(t *testing.T, old *sql.DB, open func() crtx.Store) {
	t.Helper()
	for _, q := range []string{
		`INSERT INTO accounts (environment, address, kind, ref, owner, balance, may_go_negative, created_at) VALUES
			('devnet', 'ISS', 'issuance', 'usdc', '', -10, TRUE, 0), ('devnet', 'ALICE', 'wallet', 'alice', 'alice', 7, FALSE, 0),
			('devnet', 'BOB', 'wallet', 'bob', 'bob', 3, FALSE, 0), ('devnet', 'LIST', 'listing', 'a1', 'alice', 0, FALSE, 0)`,
		`INSERT INTO ledger_txs (id, environment, kind, data, created_at) VALUES
			('t1', 'devnet', 'Deposit', '{"wallet":"alice"}', 1), ('t2', 'devnet', 'Withdrawal', '{}', 2), ('t3', 'devnet', 'AgentListed', '{}', 3)`,
		`INSERT INTO postings (tx_seq, idx, environment, from_address, to_address, amount) VALUES
			((SELECT seq FROM ledger_txs WHERE id = 't1'), 0, 'devnet', 'ISS', 'ALICE', 10),
			((SELECT seq FROM ledger_txs WHERE id = 't2'), 0, 'devnet', 'ALICE', 'BOB', 2),
			((SELECT seq FROM ledger_txs WHERE id = 't2'), 1, 'devnet', 'ALICE', 'BOB', 1)`,
		`INSERT INTO ledger_refs (environment, address, tx_seq, idx) VALUES
			('devnet', 'LIST', (SELECT seq FROM ledger_txs WHERE id = 't3'), 0),
			('devnet', 'ALICE', (SELECT seq FROM ledger_txs WHERE id = 't3'), 1)`,
	} {
		if _, err := old.Exec(q); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}
	s := open()
	view(t, s, func(ctx context.Context, tx crtx.Tx) error {
		t2, err := tx.Ledger.Transaction(ctx, crtx.Devnet, "t2")
		if err != nil || len(t2.Postings) != 2 || t2.Postings[0] != (crtx.Posting{From: "ALICE", To: "BOB", Amount: 2}) ||
			t2.Postings[1].Amount != 1 || len(t2.Accounts) != 0 {
			t.Errorf("t2 after the migration = %+v, %v", t2, err)
		}
		t3, _ := tx.Ledger.Transaction(ctx, crtx.Devnet, "t3")
		if len(t3.Postings) != 0 || len(t3.Accounts) != 2 || t3.Accounts[0] != "LIST" || t3.Accounts[1] != "ALICE" {
			t.Errorf("t3 after the migration = %+v", t3)
		}
		for addr, want := range map[string]string{"ALICE": "t3 t2 t1", "BOB": "t2", "ISS": "t1", "LIST": "t3"} {
			txs, err := tx.Ledger.AccountTransactions(ctx, crtx.Devnet, addr, 10)
			var ids []string
			for _, lt := range txs {
				ids = append(ids, lt.ID)
			}
			if got := strings.Join(ids, " "); err != nil || got != want {
				t.Errorf("transactions of %s = %q, %v; want %q", addr, got, err, want)
			}
		}
		return nil
	})
	// New transactions land beside the migrated ones.
	issuance := crtx.Account{Environment: crtx.Devnet, Address: "ISS", Kind: crtx.AccountIssuance, Ref: "usdc"}
	bob := crtx.Account{Environment: crtx.Devnet, Address: "BOB", Kind: crtx.AccountWallet, Ref: "bob", Owner: "bob"}
	update(t, s, func(ctx context.Context, tx crtx.Tx) error {
		_, err := insert(ctx, tx, crtx.Devnet, "t4", crtx.TxDeposit, t0, nil, []crtx.Account{issuance, bob},
			crtx.Posting{From: "ISS", To: "BOB", Amount: 5})
		return err
	})
	if got := balances(t, s, crtx.Devnet, issuance, bob); !equal(got, []crtx.USDC{-15, 8}) {
		t.Errorf("balances after a new transaction = %v", got)
	}
}

// HashVersionMigration checks that a block sealed before transactions and
// blocks named their hash encoding keeps verifying under version 1 after
// the migration, and that a block sealed after it, over the old
// transactions and new ones, verifies under the current version: old is a
// database with the schema before the migration, open opens it with every
// migration applied.
func HashVersionMigration(t *testing.T, old *sql.DB, open func() crtx.Store) {
	t.Helper()
	v1 := crtx.LedgerTx{ID: "v1", Environment: crtx.Devnet, Kind: crtx.TxDeposit, Version: 1, CreatedAt: t0,
		Data: map[string]string{"wallet": "alice"}, Postings: []crtx.Posting{{From: "ISS", To: "ALICE", Amount: 50000}}}
	b1 := crtx.Block{Environment: crtx.Devnet, Height: 1, PrevHash: crtx.GenesisPrevHash, TxCount: 1, SealedAt: t0, Version: 1,
		MerkleRoot: merkle.Root(crtx.TxLeaves([]crtx.LedgerTx{v1})).String()}
	b1.Hash = b1.ComputeHash().String()
	for _, q := range []string{
		`INSERT INTO ledger_txs (id, environment, kind, data, postings, refs, created_at)
			VALUES ('v1', 'devnet', 'Deposit', '{"wallet":"alice"}', '[{"from":"ISS","to":"ALICE","amount":50000}]', '[]', ` +
			strconv.FormatInt(t0.UnixMicro(), 10) + `)`,
		`INSERT INTO ledger_txs (id, environment, kind, data, postings, refs, created_at)
			VALUES ('unsealed', 'devnet', 'Deposit', '{}', '[]', '[]', ` + strconv.FormatInt(t0.UnixMicro(), 10) + `)`,
		`INSERT INTO blocks (environment, height, prev_hash, merkle_root, tx_count, sealed_at, hash, signature)
			VALUES ('devnet', 1, '` + b1.PrevHash + `', '` + b1.MerkleRoot + `', 1, ` + strconv.FormatInt(t0.UnixMicro(), 10) +
			`, '` + b1.Hash + `', 'sig')`,
		`UPDATE ledger_txs SET block_height = 1 WHERE id = 'v1'`,
	} {
		if _, err := old.Exec(q); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}
	s := open()
	view(t, s, func(ctx context.Context, tx crtx.Tx) error {
		b, err := tx.Ledger.Block(ctx, crtx.Devnet, 1)
		if err != nil || b.Version != 1 || b.ComputeHash().String() != b1.Hash {
			t.Errorf("block 1 after the migration = %+v, %v; its hash no longer verifies", b, err)
		}
		sealed, err := tx.Ledger.BlockTransactions(ctx, crtx.Devnet, 1)
		if err != nil || len(sealed) != 1 || sealed[0].Version != 1 || merkle.Root(crtx.TxLeaves(sealed)).String() != b1.MerkleRoot {
			t.Errorf("block 1's transactions after the migration = %+v, %v; their root no longer verifies", sealed, err)
		}
		return nil
	})
	// A new transaction is written under the current version and sealed
	// beside one left unsealed by the old schema, which keeps version 1.
	update(t, s, func(ctx context.Context, tx crtx.Tx) error {
		_, err := insert(ctx, tx, crtx.Devnet, "v2", crtx.TxDeposit, t0.Add(time.Second), nil, nil)
		return err
	})
	var b2 crtx.Block
	update(t, s, func(ctx context.Context, tx crtx.Tx) error {
		txs, err := tx.Ledger.UnsealedTransactions(ctx, crtx.Devnet, 10)
		if err != nil || len(txs) != 2 || txs[0].Version != 1 || txs[1].Version != crtx.HashVersion {
			t.Fatalf("unsealed after the migration = %+v, %v; want the old one at version 1, the new at %d", txs, err, crtx.HashVersion)
		}
		b2 = crtx.Block{Environment: crtx.Devnet, Height: 2, PrevHash: b1.Hash, TxCount: 2, SealedAt: t0.Add(time.Minute),
			Version: crtx.HashVersion, MerkleRoot: merkle.Root(crtx.TxLeaves(txs)).String()}
		b2.Hash = b2.ComputeHash().String()
		return tx.Ledger.InsertBlock(ctx, b2, []int64{txs[0].Seq, txs[1].Seq})
	})
	view(t, s, func(ctx context.Context, tx crtx.Tx) error {
		b, err := tx.Ledger.Block(ctx, crtx.Devnet, 2)
		txs, terr := tx.Ledger.BlockTransactions(ctx, crtx.Devnet, 2)
		if err != nil || terr != nil || b.Version != crtx.HashVersion || b.ComputeHash().String() != b2.Hash ||
			merkle.Root(crtx.TxLeaves(txs)).String() != b.MerkleRoot {
			t.Errorf("block 2 read back = %+v (%v), transactions %+v (%v): it does not verify", b, err, txs, terr)
		}
		return nil
	})
}

// AnchorMigration checks that blocks sealed before blocks had anchors read
// back unanchored after the migration, with the hash they were sealed
// with, and take an anchor once: old is a database with the schema before
// it, and open opens it with every migration applied.
func AnchorMigration(t *testing.T, old *sql.DB, open func() crtx.Store) {
	t.Helper()
	b1 := crtx.Block{Environment: crtx.Devnet, Height: 1, PrevHash: crtx.GenesisPrevHash, MerkleRoot: "root", SealedAt: t0,
		Signature: "sig", Version: crtx.HashVersion}
	b1.Hash = b1.ComputeHash().String()
	if _, err := old.Exec(`INSERT INTO blocks (environment, height, prev_hash, merkle_root, tx_count, sealed_at, hash, signature, version)
		VALUES ('devnet', 1, '` + b1.PrevHash + `', 'root', 0, ` + strconv.FormatInt(t0.UnixMicro(), 10) + `, '` + b1.Hash + `', 'sig', ` +
		strconv.Itoa(b1.Version) + `)`); err != nil {
		t.Fatal(err)
	}
	s := open()
	view(t, s, func(ctx context.Context, tx crtx.Tx) error {
		if b, err := tx.Ledger.Block(ctx, crtx.Devnet, 1); err != nil || b != b1 || b.ComputeHash().String() != b1.Hash {
			t.Errorf("block 1 after the migration = %+v, %v; want %+v", b, err, b1)
		}
		if _, err := tx.Ledger.LastAnchoredBlock(ctx, crtx.Devnet); !errors.Is(err, crtx.ErrNotFound) {
			t.Errorf("LastAnchoredBlock after the migration: %v, want ErrNotFound", err)
		}
		return nil
	})
	a := crtx.Anchor{Signature: "anchor", Slot: 42, Cluster: "devnet"}
	update(t, s, func(ctx context.Context, tx crtx.Tx) error { return tx.Ledger.SetBlockAnchor(ctx, crtx.Devnet, 1, a) })
	view(t, s, func(ctx context.Context, tx crtx.Tx) error {
		b, err := tx.Ledger.LastAnchoredBlock(ctx, crtx.Devnet)
		if err != nil || b.Height != 1 || b.Anchor == nil || *b.Anchor != a || b.ComputeHash().String() != b1.Hash {
			t.Errorf("LastAnchoredBlock = %+v, %v; want block 1 anchored by %+v, its hash unchanged", b, err, a)
		}
		return nil
	})
}

// BlocksAnchorOnce checks, on db with every migration applied, that the
// database itself keeps blocks append-only but for their anchor, which an
// unanchored block takes once: no statement changes what a block's hash
// covers, or replaces or removes an anchor.
func BlocksAnchorOnce(t *testing.T, db *sql.DB) {
	t.Helper()
	if _, err := db.Exec(`INSERT INTO blocks (environment, height, prev_hash, merkle_root, tx_count, sealed_at, hash, signature, version)
		VALUES ('devnet', 1, 'prev', 'root', 0, 1, 'hash', 'sig', 2)`); err != nil {
		t.Fatal(err)
	}
	refused := func(stmts ...string) {
		t.Helper()
		for _, s := range stmts {
			if _, err := db.Exec(s); err == nil {
				t.Errorf("%s was allowed", s)
			}
		}
	}
	refused(`UPDATE blocks SET signature = 'x'`, `UPDATE blocks SET version = 1`, `UPDATE blocks SET anchor_slot = 5`,
		`UPDATE blocks SET anchor_signature = 'a', hash = 'other'`, `UPDATE blocks SET anchor_signature = 'a', merkle_root = 'other'`,
		`DELETE FROM blocks`)
	if _, err := db.Exec(`UPDATE blocks SET anchor_signature = 'a', anchor_slot = 7, anchor_cluster = 'devnet'`); err != nil {
		t.Fatalf("anchoring an unanchored block: %v", err)
	}
	refused(`UPDATE blocks SET anchor_signature = 'b'`, `UPDATE blocks SET anchor_slot = 8`, `UPDATE blocks SET anchor_signature = ''`,
		`UPDATE blocks SET signature = 'x'`, `DELETE FROM blocks`)
	var sig, hash string
	var slot int64
	if err := db.QueryRow(`SELECT anchor_signature, anchor_slot, hash FROM blocks`).Scan(&sig, &slot, &hash); err != nil ||
		sig != "a" || slot != 7 || hash != "hash" {
		t.Errorf("block after the refused statements: anchor %q at %d, hash %q, %v", sig, slot, hash, err)
	}
}
