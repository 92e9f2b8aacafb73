package main

import (
	"context"
	"crypto/ed25519"
	"fmt"

	"github.com/crtx-market/crtx"
	"github.com/crtx-market/crtx/api"
	"github.com/crtx-market/crtx/client"
	"github.com/crtx-market/crtx/keyfile"
)

func (c *cli) walletNew(ctx context.Context, args []string) error {
	if _, err := c.positional(c.flags("wallet new"), args, 0); err != nil {
		return err
	}
	_, key, err := ed25519.GenerateKey(nil)
	if err != nil {
		return err
	}
	if err := keyfile.Write(c.keypair, key); err != nil {
		return err
	}
	addr := crtx.Address(key.Public().(ed25519.PublicKey))
	return c.print(map[string]string{"wallet": addr, "keypair": c.keypair}, "wallet %s written to %s\n", addr, c.keypair)
}

func (c *cli) walletImport(ctx context.Context, args []string) error {
	pos, err := c.positional(c.flags("wallet import"), args, 1)
	if err != nil {
		return err
	}
	key, err := keyfile.Load(pos[0])
	if err != nil {
		return err
	}
	if err := keyfile.Write(c.keypair, key); err != nil {
		return err
	}
	addr := crtx.Address(key.Public().(ed25519.PublicKey))
	return c.print(map[string]string{"wallet": addr, "keypair": c.keypair}, "wallet %s imported to %s\n", addr, c.keypair)
}

func (c *cli) walletShow(ctx context.Context, args []string) error {
	if _, err := c.positional(c.flags("wallet show"), args, 0); err != nil {
		return err
	}
	_, addr, err := c.wallet()
	if err != nil {
		return err
	}
	return c.print(map[string]string{"wallet": addr, "keypair": c.keypair}, "%s\n", addr)
}

func (c *cli) login(ctx context.Context, args []string) error {
	key, _, err := c.wallet()
	if err != nil {
		return err
	}
	_, s, err := c.api("").SignIn(ctx, key)
	if err != nil {
		return err
	}
	return c.print(s, "%s\n(expires %s)\n", s.SessionToken, s.ExpiresAt.Format("2006-01-02 15:04 MST"))
}

func (c *cli) balance(ctx context.Context, args []string) error {
	var cl *client.Client
	var err error
	if c.apiKey != "" {
		cl, _ = c.key()
	} else if cl, err = c.session(ctx); err != nil {
		return err
	}
	w, err := cl.Wallet(ctx)
	if err != nil {
		return err
	}
	text := ""
	for _, env := range crtx.Environments {
		if b, ok := w.Balances[env]; ok {
			text += fmt.Sprintf("%-8s %s USDC available, %s USDC in escrow\n", env, b.Available, b.Escrowed)
		}
	}
	return c.print(w, "%s", text)
}

func (c *cli) airdrop(ctx context.Context, args []string) error {
	pos, err := c.positional(c.flags("airdrop"), args, 1)
	if err != nil {
		return err
	}
	amount, err := crtx.ParseUSDC(pos[0])
	if err != nil {
		return err
	}
	_, addr, err := c.wallet()
	if err != nil {
		return err
	}
	f, err := c.api("").Airdrop(ctx, addr, amount)
	if err != nil {
		return err
	}
	return c.print(f, "airdropped %s USDC on devnet; available %s USDC\n", f.Amount, f.Balance.Available)
}

func (c *cli) keysCreate(ctx context.Context, args []string) error {
	fs := c.flags("keys create")
	limit := fs.String("spend-limit", "", "most the key may spend, in USDC")
	pos, err := c.positional(fs, args, 2)
	if err != nil {
		return err
	}
	p := client.KeyParams{Name: pos[0], Environment: crtx.Environment(pos[1])}
	if *limit != "" {
		l, err := crtx.ParseUSDC(*limit)
		if err != nil {
			return err
		}
		p.SpendLimit = &l
	}
	cl, err := c.session(ctx)
	if err != nil {
		return err
	}
	k, err := cl.CreateKey(ctx, p)
	if err != nil {
		return err
	}
	return c.print(k, "%s\n(shown only now; keep it in a secrets store)\n", k.Key)
}

func (c *cli) keysList(ctx context.Context, args []string) error {
	cl, err := c.session(ctx)
	if err != nil {
		return err
	}
	keys, err := cl.Keys(ctx)
	if err != nil {
		return err
	}
	text := ""
	for _, k := range keys {
		state := "active"
		if k.RevokedAt != nil {
			state = "revoked"
		}
		text += fmt.Sprintf("%s  %-8s %s…  %-7s %4d calls %10s USDC  %s\n", k.ID, k.Environment, k.Prefix, state,
			k.ExecutionCount, k.TotalSpent, k.Name)
	}
	return c.print(api.KeyList{Keys: keys}, "%s", text)
}

func (c *cli) keysRevoke(ctx context.Context, args []string) error {
	pos, err := c.positional(c.flags("keys revoke"), args, 1)
	if err != nil {
		return err
	}
	cl, err := c.session(ctx)
	if err != nil {
		return err
	}
	k, err := cl.RevokeKey(ctx, pos[0])
	if err != nil {
		return err
	}
	return c.print(k, "revoked %s\n", k.ID)
}
