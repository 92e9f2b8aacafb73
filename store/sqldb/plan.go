package sqldb

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"

	"github.com/crtx-market/crtx"
)

// Plan is how a ledger transaction is written, worked out once for every
// engine: its row, and what it does to each account it concerns.
type Plan struct {
	Tx                   *crtx.LedgerTx
	Data, Postings, Refs string // the row's JSON columns
	// Create are accounts to create if new, their balances untouched.
	Create []crtx.Account
	// Receive are accounts credited (or, for those that may go negative,
	// moved) by their Balance, created if new; Pay are accounts debited by
	// their (negative) Balance, which must exist. Each in address order;
	// on PostgreSQL, every existing one is locked first, wallets and then
	// the others, each in address order, so that concurrent transactions
	// never wait in a cycle.
	Receive, Pay []crtx.Account
	// Index are the addresses whose transaction lists name the transaction
	// (AccountTransactions).
	Index []string
	// Unposted: the roll-up visits the transaction (LedgerTx.RolledUp).
	Unposted bool
}

// PlanTransaction checks lt and the accounts it concerns (every account its
// postings name, and lt.Accounts) and plans how to write it. Each account
// the postings name moves by its net amount, now, or, for the credits the
// transaction defers, when the roll-up posts them (PostCredits).
func PlanTransaction(lt *crtx.LedgerTx, accounts ...crtx.Account) (Plan, error) {
	p := Plan{Tx: lt, Unposted: lt.RolledUp()}
	if lt.Version == 0 {
		lt.Version = crtx.HashVersion
	}
	data, err := json.Marshal(lt.Data)
	if err != nil {
		return p, err
	}
	stored := make([]storedPosting, len(lt.Postings))
	for i, ps := range lt.Postings {
		if ps.Amount <= 0 || ps.From == ps.To {
			return p, fmt.Errorf("transaction %s: posting %d moves %d from %s to %s", lt.ID, i, ps.Amount, ps.From, ps.To)
		}
		stored[i] = storedPosting{ps.From, ps.To, int64(ps.Amount)}
	}
	delta := lt.NetAmounts()
	deferred := 0
	if lt.DefersCredits() {
		for addr, amount := range delta {
			if amount > 0 && lt.Defers(addr) {
				delete(delta, addr)
				deferred++
			}
		}
	}
	moved := 0
	escrows := map[string]bool{}
	for _, a := range accounts {
		if a.Kind == crtx.AccountEscrow {
			// Found by its execution's id (AccountTransactions).
			if lt.Data["execution_id"] != a.Ref {
				return p, fmt.Errorf("transaction %s touches the escrow of execution %s but names execution %q", lt.ID, a.Ref, lt.Data["execution_id"])
			}
			escrows[a.Address] = true
		}
		amount, ok := delta[a.Address]
		switch {
		case !ok:
			p.Create = append(p.Create, a)
			continue
		case amount < 0 && !a.MayGoNegative():
			a.Balance = amount
			p.Pay = append(p.Pay, a)
		default:
			a.Balance = amount
			p.Receive = append(p.Receive, a)
		}
		moved++
		if !escrows[a.Address] {
			p.Index = append(p.Index, a.Address)
		}
	}
	if moved != len(delta) || len(p.Create) < deferred {
		return p, fmt.Errorf("transaction %s: its postings name %d accounts, %d given", lt.ID, len(delta)+deferred, len(accounts))
	}
	byAddress := func(a, b crtx.Account) int { return strings.Compare(a.Address, b.Address) }
	slices.SortFunc(p.Receive, byAddress)
	slices.SortFunc(p.Pay, byAddress)
	refs := lt.Accounts
	if refs == nil {
		refs = []string{}
	}
	for _, addr := range refs {
		if _, ok := delta[addr]; !ok && !escrows[addr] && !slices.Contains(p.Index, addr) {
			p.Index = append(p.Index, addr)
		}
	}
	postings, _ := json.Marshal(stored)
	refsJSON, _ := json.Marshal(refs)
	p.Data, p.Postings, p.Refs = string(data), string(postings), string(refsJSON)
	return p, nil
}

// MarshalJSON encodes the plan for an engine that writes it in the
// database (store/postgres's crtx_post): the row's columns, and the
// accounts as rows of the accounts table.
func (p Plan) MarshalJSON() ([]byte, error) {
	rows := func(accounts []crtx.Account) []map[string]any {
		out := make([]map[string]any, len(accounts))
		for i, a := range accounts {
			out[i] = map[string]any{"environment": a.Environment, "address": a.Address, "kind": a.Kind, "ref": a.Ref,
				"owner": a.Owner, "may_go_negative": a.MayGoNegative(), "created_at": us(a.CreatedAt), "balance": int64(a.Balance)}
		}
		return out
	}
	index := p.Index
	if index == nil {
		index = []string{}
	}
	return json.Marshal(map[string]any{"id": p.Tx.ID, "environment": p.Tx.Environment, "kind": p.Tx.Kind,
		"data": p.Data, "postings": p.Postings, "refs": p.Refs, "created_at": us(p.Tx.CreatedAt), "version": p.Tx.Version,
		"create": rows(p.Create), "receive": rows(p.Receive), "pay": rows(p.Pay), "index": index, "unposted": p.Unposted})
}
