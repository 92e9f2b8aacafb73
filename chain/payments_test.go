package chain

import (
	"encoding/binary"
	"slices"
	"testing"

	"github.com/gagliardetto/solana-go"
	ata "github.com/gagliardetto/solana-go/programs/associated-token-account"

	"github.com/crtx-market/crtx"
	"github.com/crtx-market/crtx/chain/chaintest"
)

// TestPayments follows a deposit's reference through what a stranger can
// do with it once it is public: a 1-unit transfer carrying it is a payment
// of its own and hides nothing, and a transfer of another mint, or to
// another account, carrying it is no payment.
func TestPayments(t *testing.T) {
	k := newCluster(t)
	payer := k.wallet(t, 10*crtx.MicroPerUSDC)
	reference := chaintest.Address(chaintest.NewKey(t))
	req := crtx.TransferRequest{
		Recipient:  k.c.Treasury(),
		Amount:     2_500_000,
		SPLToken:   k.mint,
		References: []string{reference},
		Label:      "crtx",
		Memo:       "crtx deposit",
	}
	paid, err := Pay(t.Context(), k.net.RPC, payer, req)
	if err != nil {
		t.Fatal(err)
	}
	scan, err := k.c.Payments(t.Context(), reference, "", 100)
	if err != nil {
		t.Fatal(err)
	}
	pays := scan.Payments
	if len(pays) != 1 || scan.Until != paid || scan.Fetched != 1 {
		t.Fatalf("Payments = %+v, want the one payment, fetched once, and the scan past it", scan)
	}
	if p := pays[0]; p.Signature != paid || p.Amount != 2_500_000 || p.From != chaintest.Address(payer) || !p.Finalized || p.Slot == 0 || !slices.Contains(p.References, reference) {
		t.Fatalf("payment = %+v, want %s of 2.5 from %s, finalized", p, paid, chaintest.Address(payer))
	}

	// The stranger's 1 unit, newer, is listed first; with pages of one
	// signature the real payment is still read.
	stranger := k.wallet(t, crtx.MicroPerUSDC)
	grief, err := Pay(t.Context(), k.net.RPC, stranger, crtx.TransferRequest{Recipient: k.c.Treasury(), Amount: 1, SPLToken: k.mint, References: []string{reference}})
	if err != nil {
		t.Fatal(err)
	}
	// Another mint into the treasury's account of that mint, and the
	// right mint to someone else, both naming the reference.
	otherMint, otherAuthority := k.net.NewMint(t)
	k.net.MintTo(t, otherMint, otherAuthority, k.c.Treasury(), 0)
	k.net.MintTo(t, otherMint, otherAuthority, chaintest.Address(stranger), 5*crtx.MicroPerUSDC)
	if _, err := Pay(t.Context(), k.net.RPC, stranger, crtx.TransferRequest{Recipient: k.c.Treasury(), Amount: 5 * crtx.MicroPerUSDC, SPLToken: otherMint, References: []string{reference}}); err != nil {
		t.Fatal(err)
	}
	elsewhere := chaintest.Address(chaintest.NewKey(t))
	k.net.MintTo(t, k.mint, k.mintAuthority, elsewhere, 0)
	if _, err := Pay(t.Context(), k.net.RPC, payer, crtx.TransferRequest{Recipient: elsewhere, Amount: crtx.MicroPerUSDC, SPLToken: k.mint, References: []string{reference}}); err != nil {
		t.Fatal(err)
	}
	for _, pageSize := range []int{1000, 1} {
		k.c.pageSize = pageSize
		k.c.seen = newSeen(seenSize)
		scan, err := k.c.Payments(t.Context(), reference, "", 100)
		if err != nil {
			t.Fatal(err)
		}
		pays := scan.Payments
		got := make([]string, len(pays))
		for i, p := range pays {
			got[i] = p.Signature
		}
		if !slices.Equal(got, []string{paid, grief}) {
			t.Fatalf("pages of %d: Payments = %v, want the payment then the 1-unit transfer %v", pageSize, got, []string{paid, grief})
		}
		if pays[1].Amount != 1 || pays[0].Amount != 2_500_000 || pays[1].From != chaintest.Address(stranger) || !pays[1].Finalized {
			t.Fatalf("pages of %d: Payments = %+v", pageSize, pays)
		}
		// Four transactions name the reference: each fetched once, and the
		// next scan starts past them all.
		if scan.Fetched != 4 {
			t.Errorf("pages of %d: fetched %d transactions, want 4", pageSize, scan.Fetched)
		}
		again, err := k.c.Payments(t.Context(), reference, scan.Until, 100)
		if err != nil || len(again.Payments) != 0 || again.Fetched != 0 || again.Until != scan.Until {
			t.Errorf("pages of %d: the next scan = %+v, %v; want nothing new", pageSize, again, err)
		}
	}
	// Read again from the first, nothing is fetched again; within a budget
	// of one, a scan fetches one and stops before the rest.
	calls, _ := k.c.RPCCalls()
	gets := calls["getTransaction"]
	if again, err := k.c.Payments(t.Context(), reference, "", 100); err != nil || len(again.Payments) != 2 || again.Fetched != 0 {
		t.Errorf("a scan of what was read = %+v, %v", again, err)
	}
	if calls, _ := k.c.RPCCalls(); calls["getTransaction"] != gets {
		n := calls["getTransaction"]
		t.Errorf("%d getTransaction calls for what was read", n-gets)
	}
	k.c.seen = newSeen(seenSize)
	first, err := k.c.Payments(t.Context(), reference, "", 1)
	if err != nil || first.Fetched != 1 || first.Until != paid || len(first.Payments) != 1 {
		t.Errorf("a scan of budget 1 = %+v, %v; want the payment alone, and the scan past it", first, err)
	}
	if b := k.net.TokenBalance(t, k.c.TokenAccount()); b != 2_500_001 {
		t.Fatalf("the treasury holds %s, want 2.500001", b)
	}
}

// TestIncoming lists the transfers into the treasury, newest first, with
// their keys, and not the treasury's own withdrawals.
func TestIncoming(t *testing.T) {
	k := newCluster(t)
	payer := k.wallet(t, 10*crtx.MicroPerUSDC)
	ref1, ref2 := chaintest.Address(chaintest.NewKey(t)), chaintest.Address(chaintest.NewKey(t))
	first, err := Pay(t.Context(), k.net.RPC, payer, crtx.TransferRequest{Recipient: k.c.Treasury(), Amount: 3 * crtx.MicroPerUSDC, SPLToken: k.mint, References: []string{ref1}})
	if err != nil {
		t.Fatal(err)
	}
	// No reference: USDC nobody can attribute.
	second, err := Pay(t.Context(), k.net.RPC, payer, crtx.TransferRequest{Recipient: k.c.Treasury(), Amount: 1_000_000, SPLToken: k.mint})
	if err != nil {
		t.Fatal(err)
	}
	third, err := Pay(t.Context(), k.net.RPC, payer, crtx.TransferRequest{Recipient: k.c.Treasury(), Amount: 500_000, SPLToken: k.mint, References: []string{ref2}})
	if err != nil {
		t.Fatal(err)
	}
	out := chaintest.Address(chaintest.NewKey(t))
	k.net.MintTo(t, k.mint, k.mintAuthority, out, 0)
	w := k.sign(t, out, 400_000, "w-1", 0)
	if err := k.c.Send(t.Context(), w.Raw); err != nil {
		t.Fatal(err)
	}
	awaitFinalized(t, k.c, w.Signature)

	k.c.pageSize = 2
	all, err := k.c.Incoming(t.Context(), 10)
	if err != nil {
		t.Fatal(err)
	}
	var sigs []string
	for _, p := range all {
		sigs = append(sigs, p.Signature)
	}
	if !slices.Equal(sigs, []string{third, second, first}) {
		t.Fatalf("Incoming = %v, want %v", sigs, []string{third, second, first})
	}
	if all[0].Amount != 500_000 || !slices.Contains(all[0].References, ref2) || slices.Contains(all[1].References, ref1) || !slices.Contains(all[2].References, ref1) {
		t.Fatalf("Incoming = %+v", all)
	}
	newest, err := k.c.Incoming(t.Context(), 1)
	if err != nil {
		t.Fatal(err)
	}
	if len(newest) != 1 || newest[0].Signature != third || !newest[0].Finalized {
		t.Fatalf("Incoming(1) = %+v, want only %s", newest, third)
	}
}

// A transfer a program makes (an inner instruction: here the Associated
// Token Account program's RecoverNested, which has the token program move
// USDC from a nested account into the treasury's) is seen by what it added
// to the treasury's account. The transaction names a reference outside the
// transfer, so it is one payment of the whole (part 0).
func TestInnerTransferPayment(t *testing.T) {
	k := newCluster(t)
	treasury := k.c.treasury.PublicKey()
	ownerMint, ownerAuthority := k.net.NewMint(t)
	k.net.MintTo(t, ownerMint, ownerAuthority, k.c.Treasury(), 0)
	ownerAccount, _, err := solana.FindAssociatedTokenAddress(treasury, solana.MustPublicKeyFromBase58(ownerMint))
	if err != nil {
		t.Fatal(err)
	}
	// The USDC account of the treasury's account of the other mint.
	k.net.MintTo(t, k.mint, k.mintAuthority, ownerAccount.String(), 1_500_000)
	ref := chaintest.Address(chaintest.NewKey(t))
	naming := solana.NewInstruction(solana.SystemProgramID,
		solana.AccountMetaSlice{solana.Meta(treasury).WRITE().SIGNER(), solana.Meta(treasury).WRITE(), solana.Meta(solana.MustPublicKeyFromBase58(ref))},
		binary.LittleEndian.AppendUint64(binary.LittleEndian.AppendUint32(nil, 2), 0))
	recover := ata.NewRecoverNestedInstruction(treasury, k.c.mint, solana.MustPublicKeyFromBase58(ownerMint)).Build()
	sig := k.net.Send(t, []solana.Instruction{naming, recover}, k.treasury)
	scan, err := k.c.Payments(t.Context(), ref, "", 10)
	if err != nil {
		t.Fatal(err)
	}
	if len(scan.Payments) != 1 {
		t.Fatalf("Payments = %+v, want the inner transfer", scan)
	}
	if p := scan.Payments[0]; p.Signature != sig || p.Part != 0 || p.Amount != 1_500_000 || !p.Finalized {
		t.Fatalf("payment = %+v, want %s whole, of 1.5, finalized", p, sig)
	}
}

// FuzzInflow reads any instruction as a transfer into the treasury's token
// account: never a panic, and only a transfer of more than nothing into
// that account, whose own accounts past the transfer's sign nothing.
func FuzzInflow(f *testing.F) {
	keys := make([]solana.PublicKey, 6)
	for i := range keys {
		keys[i] = solana.PublicKey{byte(i + 1)}
	}
	keys[0] = solana.TokenProgramID
	c := &Client{mint: keys[2], tokenAccount: keys[3]}
	f.Add(uint16(0), []byte{1, 2, 3, 4, 5}, append([]byte{transferChecked}, 1, 0, 0, 0, 0, 0, 0, 0, 6), 2)
	f.Add(uint16(0), []byte{1, 3, 4, 5}, append([]byte{transfer}, 9, 0, 0, 0, 0, 0, 0, 0), 1)
	f.Add(uint16(9), []byte{}, []byte{}, 0)
	f.Fuzz(func(t *testing.T, program uint16, accounts, data []byte, signers int) {
		idx := make([]uint16, len(accounts))
		for i, a := range accounts {
			idx[i] = uint16(a)
		}
		got, ok := c.inflow(keys, signers, program, idx, data)
		if !ok {
			return
		}
		if got.amount == 0 || program != 0 || len(idx) < 3 {
			t.Fatalf("inflow %+v from program %d, accounts %v, data %x", got, program, idx, data)
		}
		dest := idx[1]
		if data[0] == transferChecked {
			dest = idx[2]
		}
		if keys[dest] != c.tokenAccount {
			t.Fatalf("an inflow into %s", keys[dest])
		}
		for _, r := range got.refs {
			if slices.Index(keys, solana.MustPublicKeyFromBase58(r)) < signers {
				t.Fatalf("a signer %s among the references", r)
			}
		}
	})
}
