package main

import (
	"context"
	"crypto/ed25519"
	"fmt"
	"io"

	"github.com/crtx-market/crtx"
	"github.com/crtx-market/crtx/daemon"
	"github.com/crtx-market/crtx/market"
)

// ledger runs crtxd ledger verify|deposit|withdraw and returns the exit code.
func ledger(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	if len(args) == 0 {
		fmt.Fprint(stderr, "usage: crtxd ledger verify|deposit|withdraw [flags]\n")
		return 2
	}
	var err error
	switch args[0] {
	case "verify":
		var ok bool
		ok, err = verify(ctx, args[1:], stdout, stderr)
		if err == nil && !ok {
			return 1
		}
	case "deposit", "withdraw":
		err = funding(ctx, args[0], args[1:], stdout, stderr)
	default:
		fmt.Fprintf(stderr, "crtxd ledger: unknown command %q\n", args[0])
		return 2
	}
	if err != nil {
		fmt.Fprintf(stderr, "crtxd ledger %s: %v\n", args[0], err)
		return 1
	}
	return 0
}

// verify checks one or both environments and prints each problem it finds.
func verify(ctx context.Context, args []string, stdout, stderr io.Writer) (bool, error) {
	cfg := daemon.Defaults()
	fs := newFlags("ledger verify", &cfg, stderr)
	envFlag := fs.String("environment", "", "mainnet or devnet; both when empty")
	if err := parse(fs, args); err != nil {
		return false, flagErr(err)
	}
	envs := crtx.Environments
	if *envFlag != "" {
		env, err := crtx.ParseEnvironment("--environment", *envFlag)
		if err != nil {
			return false, err
		}
		envs = []crtx.Environment{env}
	}
	if err := cfg.Validate(); err != nil {
		return false, err
	}
	if err := daemon.CheckExisting(ctx, cfg); err != nil {
		return false, err
	}
	keys, err := daemon.LoadKeys(cfg.Data)
	if err != nil {
		return false, err
	}
	store, err := daemon.OpenStore(ctx, cfg)
	if err != nil {
		return false, err
	}
	defer store.Close()
	ok := true
	for _, env := range envs {
		r, err := market.VerifyLedger(ctx, store, env, keys.Authority.Public().(ed25519.PublicKey))
		if err != nil {
			return false, err
		}
		status := "ok"
		if !r.OK() {
			status, ok = "FAILED", false
		}
		fmt.Fprintf(stdout, "%s: %s — %d blocks, %d transactions, %d accounts summing to %s\n",
			env, status, r.Blocks, r.Transactions, r.Accounts, r.Sum)
		if r.Unposted > 0 {
			fmt.Fprintf(stdout, "  %s: %d transactions wait for the roll-up to post %s USDC of credits (counted in the sum)\n",
				env, r.Unposted, r.Pending)
		}
		for _, p := range r.Problems {
			fmt.Fprintf(stdout, "  %s: %s\n", env, p)
		}
	}
	return ok, nil
}

func funding(ctx context.Context, cmd string, args []string, stdout, stderr io.Writer) error {
	cfg := daemon.Defaults()
	fs := newFlags("ledger "+cmd, &cfg, stderr)
	envFlag := fs.String("environment", "", "mainnet or devnet (required)")
	wallet := fs.String("wallet", "", "wallet address (required)")
	amountFlag := fs.String("amount", "", "amount in USDC, e.g. 25.5 (required)")
	if err := parse(fs, args); err != nil {
		return flagErr(err)
	}
	env, err := crtx.ParseEnvironment("--environment", *envFlag)
	if err != nil {
		return err
	}
	amount, err := crtx.ParseUSDC(*amountFlag)
	if err != nil {
		return fmt.Errorf("--amount: %w", err)
	}
	m, store, err := daemon.OpenExisting(ctx, cfg)
	if err != nil {
		return err
	}
	defer store.Close()
	move := m.Deposit
	if cmd == "withdraw" {
		move = m.Withdraw
	}
	f, err := move(ctx, env, *wallet, amount)
	if err != nil {
		return err
	}
	fmt.Fprintf(stdout, "%s %s: %s USDC for %s; available %s USDC\n",
		env, f.Transaction.Kind, amount, *wallet, f.Balance.Available)
	return nil
}
