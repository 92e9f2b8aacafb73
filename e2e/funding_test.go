package e2e_test

import (
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/crtx-market/crtx"
	"github.com/crtx-market/crtx/daemon"
)

func TestAirdrop(t *testing.T) {
	e := start(t)
	w := newWallet(t)

	// 0.1 + 0.2 is exactly 0.3: amounts are integers of micro-USDC inside.
	for _, a := range []string{"0.1", "0.2"} {
		if _, err := e.anon.Airdrop(ctx, w.address, usdc(a)); err != nil {
			t.Fatal(err)
		}
	}
	got, err := e.signIn(w).Wallet(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if b := got.Balances[crtx.Devnet]; b.Available != 300_000 || b.Escrowed != 0 {
		t.Errorf("devnet balance = %+v, want exactly 0.3", b)
	}
	if b := got.Balances[crtx.Mainnet]; b.Available != 0 {
		t.Errorf("an airdrop reached mainnet: %+v", b)
	}
	// The JSON edge writes the amount as the decimal it is.
	var raw struct {
		Balances map[string]map[string]any `json:"balances"`
	}
	if err := e.signIn(w).Do(ctx, "GET", "/v1/wallet", "", nil, &raw); err != nil {
		t.Fatal(err)
	}
	if v := raw.Balances["devnet"]["available_usdc"]; v != 0.3 {
		t.Errorf("available_usdc in JSON = %v", v)
	}

	bad := map[string]string{
		"over-precise": `{"wallet":"` + w.address + `","amount_usdc":0.0000001}`,
		"negative":     `{"wallet":"` + w.address + `","amount_usdc":-1}`,
		"zero":         `{"wallet":"` + w.address + `","amount_usdc":0}`,
		"above 1000":   `{"wallet":"` + w.address + `","amount_usdc":1000.000001}`,
		"string":       `{"wallet":"` + w.address + `","amount_usdc":"5"}`,
		"NaN":          `{"wallet":"` + w.address + `","amount_usdc":NaN}`,
		"huge":         `{"wallet":"` + w.address + `","amount_usdc":1e400}`,
		"missing":      `{"wallet":"` + w.address + `"}`,
		"bad wallet":   `{"wallet":"nope","amount_usdc":1}`,
		"environment":  `{"wallet":"` + w.address + `","amount_usdc":1,"environment":"mainnet"}`,
	}
	for name, body := range bad {
		t.Run(name, func(t *testing.T) {
			err := e.anon.Do(ctx, "POST", "/v1/devnet/airdrop", "application/json", []byte(body), nil)
			wantCode(t, err, 400, "invalid_request")
		})
	}
	got, _ = e.signIn(w).Wallet(ctx)
	if b := got.Balances[crtx.Devnet]; b.Available != 300_000 {
		t.Errorf("refused airdrops moved money: %+v", b)
	}
}

func TestAirdropRateLimit(t *testing.T) {
	e := start(t, func(c *daemon.Config) { c.AirdropsPerHour = 3 })
	w, other := newWallet(t), newWallet(t)
	for range 3 {
		if _, err := e.anon.Airdrop(ctx, w.address, usdc("1000")); err != nil {
			t.Fatal(err)
		}
		e.clock.Advance(10 * time.Minute)
	}
	_, err := e.anon.Airdrop(ctx, w.address, usdc("1"))
	ce := wantCode(t, err, 429, "rate_limited")
	retry, perr := strconv.Atoi(ce.RetryAfter)
	// The first airdrop leaves the hour 30 minutes from now.
	if perr != nil || retry < 29*60 || retry > 30*60+1 {
		t.Errorf("Retry-After = %q, want about 1800 seconds", ce.RetryAfter)
	}
	// The limit is per wallet.
	if _, err := e.anon.Airdrop(ctx, other.address, usdc("1")); err != nil {
		t.Errorf("another wallet was limited: %v", err)
	}
	e.clock.Advance(30*time.Minute + time.Second)
	if _, err := e.anon.Airdrop(ctx, w.address, usdc("1")); err != nil {
		t.Errorf("still limited after the hour: %v", err)
	}
	got, _ := e.signIn(w).Wallet(ctx)
	if b := got.Balances[crtx.Devnet]; b.Available != 3001*crtx.MicroPerUSDC {
		t.Errorf("balance = %s, want 3001", b.Available)
	}
}

func TestAdminFunding(t *testing.T) {
	e := start(t)
	w := newWallet(t)

	dep, err := e.admin.Deposit(ctx, crtx.Mainnet, w.address, usdc("125.000001"))
	if err != nil {
		t.Fatal(err)
	}
	if dep.Kind != crtx.TxDeposit || dep.Balance.Available != 125_000_001 || dep.TransactionID == "" {
		t.Errorf("deposit = %+v", dep)
	}
	wd, err := e.admin.Withdraw(ctx, crtx.Mainnet, w.address, usdc("25.000001"))
	if err != nil {
		t.Fatal(err)
	}
	if wd.Kind != crtx.TxWithdrawal || wd.Balance.Available != 100_000_000 {
		t.Errorf("withdrawal = %+v", wd)
	}

	t.Run("withdrawal beyond the balance", func(t *testing.T) {
		_, err := e.admin.Withdraw(ctx, crtx.Mainnet, w.address, usdc("100.000001"))
		ce := wantCode(t, err, 402, "insufficient_balance")
		if want := "100 USDC available"; !contains(ce.Message, want) || !contains(ce.Message, "100.000001") {
			t.Errorf("message %q does not name the balance and the amount", ce.Message)
		}
		// Devnet is another ledger: nothing there to withdraw.
		_, err = e.admin.Withdraw(ctx, crtx.Devnet, w.address, usdc("1"))
		wantCode(t, err, 402, "insufficient_balance")
	})
	t.Run("bad input", func(t *testing.T) {
		for _, body := range []string{
			`{"environment":"mainnet","wallet":"` + w.address + `","amount_usdc":-5}`,
			`{"environment":"mainnet","wallet":"` + w.address + `","amount_usdc":1.1234567}`,
			`{"environment":"testnet","wallet":"` + w.address + `","amount_usdc":1}`,
			`{"wallet":"` + w.address + `","amount_usdc":1}`,
			`{"environment":"mainnet","wallet":"` + w.address + `","amount_usdc":1,"memo":"x"}`,
		} {
			err := e.admin.Do(ctx, "POST", "/v1/admin/deposits", "application/json", []byte(body), nil)
			wantCode(t, err, 400, "invalid_request")
		}
	})
	t.Run("admin token checked", func(t *testing.T) {
		_, err := e.anon.Deposit(ctx, crtx.Mainnet, w.address, usdc("1"))
		wantCode(t, err, 401, "authentication_required")
		_, err = e.anon.WithToken("admin-token-for-tests-012345678X").Deposit(ctx, crtx.Mainnet, w.address, usdc("1"))
		wantCode(t, err, 401, "invalid_api_key")
		_, err = e.signIn(w).Withdraw(ctx, crtx.Mainnet, w.address, usdc("1"))
		wantCode(t, err, 401, "invalid_api_key")
	})

	got, _ := e.signIn(w).Wallet(ctx)
	if b := got.Balances[crtx.Mainnet]; b.Available != 100_000_000 {
		t.Errorf("mainnet balance = %s, want exactly 100", b.Available)
	}
}

func TestAdminAPIOff(t *testing.T) {
	e := start(t, func(c *daemon.Config) { c.AdminTokenFile = "" })
	_, err := e.admin.Deposit(ctx, crtx.Mainnet, newWallet(t).address, usdc("1"))
	wantCode(t, err, 404, "not_found")
}

func contains(s, sub string) bool { return strings.Contains(s, sub) }
