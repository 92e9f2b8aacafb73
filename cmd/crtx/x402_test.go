package main

import (
	"bytes"
	"context"
	"crypto/ed25519"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"testing"

	crtxpkg "github.com/crtx-market/crtx"
	"github.com/crtx-market/crtx/creator"
	"github.com/crtx-market/crtx/keyfile"
)

// crtx run --x402 pays a call from a Solana key file with no account and
// no API key, synchronous, --async (followed by signing in with the same
// wallet) or --stream, and the chain moved the price for each.
func TestRunPaysWithX402(t *testing.T) {
	ctx := context.Background()
	d, net, mint, mintAuth := startChainMarket(t)
	_, ak, _ := ed25519.GenerateKey(nil)
	srv := httptest.NewServer(creator.NewHandler(ak, func(_ context.Context, r creator.Request) (string, int, error) { return "paid: " + r.Task, 0, nil }, creator.Options{}))
	defer srv.Close()
	agent := listAgent(t, d, srv.URL, ak)

	pub, key, _ := ed25519.GenerateKey(nil)
	payer := crtxpkg.Address(pub)
	kp := filepath.Join(t.TempDir(), "payer.json")
	if err := keyfile.Write(kp, key); err != nil {
		t.Fatal(err)
	}
	net.MintTo(t, mint, mintAuth, payer, crtxpkg.MicroPerUSDC) // no SOL: the marketplace pays the fees
	crtx := func(args ...string) (int, string, string) {
		var out, errOut bytes.Buffer
		code := run(ctx, append([]string{"--url", d.URL, "--api-key", "", "--keypair", kp}, args...), strings.NewReader(""), &out, &errOut)
		return code, out.String(), errOut.String()
	}
	if code, out, errOut := crtx("run", agent, "hello", "--x402", "--rpc", net.RPC); code != 0 || out != "paid: hello\n" ||
		!strings.Contains(errOut, "paid by transaction ") {
		t.Fatalf("run --x402: %d\n%s\n%s", code, out, errOut)
	}
	if code, out, errOut := crtx("run", agent, "later", "--x402", "--async", "--rpc", net.RPC); code != 0 || out != "paid: later\n" {
		t.Fatalf("run --x402 --async: %d\n%s\n%s", code, out, errOut)
	}
	// --stream prints the pieces as they come; the call is paid before
	// the first.
	_, sk, _ := ed25519.GenerateKey(nil)
	ssrv := httptest.NewServer(creator.NewStreamHandler(sk, func(_ context.Context, r creator.Request, yield func(string)) (int, error) {
		yield("streamed: ")
		yield(r.Task)
		return 0, nil
	}, creator.Options{}))
	defer ssrv.Close()
	streaming := listAgent(t, d, ssrv.URL, sk)
	if code, out, errOut := crtx("run", streaming, "words", "--x402", "--stream", "--rpc", net.RPC); code != 0 || out != "streamed: words\n" ||
		!strings.Contains(errOut, "paid by transaction ") {
		t.Fatalf("run --x402 --stream: %d\n%s\n%s", code, out, errOut)
	}
	if held := net.TokenBalance(t, tokenAccount(t, d, payer)); held != crtxpkg.MicroPerUSDC-3*10_000 {
		t.Errorf("the payer holds %s after three calls of 0.01", held)
	}
	if code, _, errOut := crtx("run", agent, "x", "--x402"); code == 0 || !strings.Contains(errOut, "--rpc") {
		t.Errorf("run --x402 without --rpc: %d %s", code, errOut)
	}
}
