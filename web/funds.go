package web

import (
	"bytes"
	"context"
	"errors"
	"html/template"
	"net/http"
	"strings"

	"github.com/crtx-market/crtx"
	"github.com/crtx-market/crtx/api"
	"github.com/crtx-market/crtx/market"
)

// funds is an environment with a chain on the dashboard: its forms to add
// funds and to withdraw, its newest deposit requests and its withdrawals.
type funds struct {
	Env crtx.Environment
	// TokenAccount is the wallet's own USDC token account on the chain,
	// where every withdrawal goes, and TokenAccountURL its explorer page.
	TokenAccount, TokenAccountURL string
	Deposits                      []api.Deposit
	Withdrawals                   withdrawals
	MinWithdrawal                 crtx.USDC
	// Available is what the wallet can withdraw now.
	Available crtx.USDC
}

// withdrawals are the newest withdrawals of a wallet in one environment,
// as the dashboard lists them and its script reads them again while one
// is on its way.
type withdrawals struct {
	List []api.Withdrawal
	// State changes whenever a status or a signature does: the script
	// replaces the list only then, so a screen reader hears only changes.
	State string
	// Final says no withdrawal listed can change any more.
	Final bool
}

// funds reads what the dashboard shows of each environment with a chain.
func (h *Handler) funds(ctx context.Context, wallet string) ([]funds, error) {
	var out []funds
	for _, env := range crtx.Environments {
		c := h.market.Chain(env)
		if c == nil {
			continue
		}
		b, err := h.market.Funds.Balances(ctx, wallet, env)
		if err != nil {
			return nil, err
		}
		f := funds{Env: env, MinWithdrawal: market.MinWithdrawal, Available: b[env].Available}
		if ata, err := c.TokenAccountOf(wallet); err == nil {
			f.TokenAccount, f.TokenAccountURL = ata, crtx.SolanaExplorerURL(c, "address", ata)
		}
		ds, _, err := h.market.Funds.Deposits(ctx, wallet, env, 5, 0)
		if err != nil {
			return nil, err
		}
		for _, d := range ds {
			f.Deposits = append(f.Deposits, api.NewDeposit(d, nil, h.market.Links()))
		}
		if f.Withdrawals, err = h.withdrawals(ctx, wallet, env); err != nil {
			return nil, err
		}
		out = append(out, f)
	}
	return out, nil
}

func (h *Handler) withdrawals(ctx context.Context, wallet string, env crtx.Environment) (withdrawals, error) {
	ws, _, err := h.market.Funds.Withdrawals(ctx, wallet, env, 10, 0)
	if err != nil {
		return withdrawals{}, err
	}
	out := withdrawals{Final: true}
	var state []string
	for _, w := range ws {
		v := api.NewWithdrawal(w, h.market.Links())
		out.List = append(out.List, v)
		out.Final = out.Final && w.Status.Final()
		state = append(state, w.ID+":"+string(w.Status)+":"+w.Signature)
	}
	out.State = strings.Join(state, " ")
	return out, nil
}

// amountForm reads a money form's environment and amount (value is the
// form's values); a field at fault is said as the form names it.
func amountForm(value func(string) string) (crtx.Environment, crtx.USDC, string) {
	env, err := crtx.ParseEnvironment("environment", value("environment"))
	if err != nil {
		return "", 0, sentence(message(err))
	}
	amount, err := crtx.ParseUSDC(strings.TrimSpace(value("amount")))
	if err != nil {
		return "", 0, "Amount: " + err.Error()
	}
	return env, amount, ""
}

// amountProblem says a refusal of the marketplace in the form's words: the
// API names the amount field amount_usdc, the form calls it Amount.
func amountProblem(err error) string {
	var e *crtx.Error
	if errors.As(err, &e) && e.Field == "amount_usdc" {
		return "Amount: " + sentence(strings.TrimPrefix(e.Message, "amount_usdc: ")) + " (USDC)"
	}
	return sentence(message(err))
}

// createDeposit opens a Solana Pay request and goes to its page, which
// shows the QR code to pay it with.
func (h *Handler) createDeposit(w http.ResponseWriter, r *http.Request, v visit) (outcome, error) {
	env, amount, problem := amountForm(r.PostFormValue)
	if problem != "" {
		return outcome{Error: problem}, nil
	}
	d, err := h.market.Funds.CreateDeposit(r.Context(), v.Wallet, env, amount)
	if isUserError(err) {
		return outcome{Error: amountProblem(err)}, nil
	}
	if err != nil {
		return outcome{}, err
	}
	return outcome{Landing: "/dashboard/deposits/" + d.ID}, nil
}

type depositData struct {
	Deposit api.Deposit
	// PayURL is the request's solana: address, safe as a link because the
	// marketplace wrote it.
	PayURL template.URL
	QR     template.HTML
	// Link is the request's Solana Pay transaction request, which "Pay
	// with <wallet>" asks for the transaction, and Chain the Wallet
	// Standard's id of the cluster the wallet sends it on.
	Link, Chain string
}

// deposit shows a deposit request to pay: its QR code, its solana: link and
// its status, which funds.js reads again until it is final.
func (h *Handler) deposit(w http.ResponseWriter, r *http.Request, v visit) error {
	d, ps, err := h.market.Funds.Deposit(r.Context(), v.Wallet, r.PathValue("id"))
	if err != nil {
		return err
	}
	view := api.NewDeposit(d, ps, h.market.Links())
	qr, err := qrSVG(view.SolanaPayURL, "QR code of the Solana Pay request for "+view.Amount.String()+" USDC")
	if err != nil {
		return err
	}
	data := depositData{Deposit: view, PayURL: template.URL(view.SolanaPayURL), QR: qr,
		Link: "/v1/solana-pay/deposits/" + d.ID, Chain: crtx.WalletChain(h.market.Chain(d.Environment))}
	p := v.page("Add "+view.Amount.String()+" USDC — crtx", data)
	return h.render(w, "deposit", p.with(h.outcome(r, v)))
}

// depositStatus is the part of a deposit's page that changes: its status
// and the transfers credited to it.
func (h *Handler) depositStatus(w http.ResponseWriter, r *http.Request, v visit) error {
	d, ps, err := h.market.Funds.Deposit(r.Context(), v.Wallet, r.PathValue("id"))
	if err != nil {
		return err
	}
	return h.fragment(w, "deposit", "deposit-status", api.NewDeposit(d, ps, h.market.Links()))
}

// withdrawData is a withdrawal to confirm: what leaves the balance, where
// it goes, the fee and what is left; or, with the page's error, the form
// to mend.
type withdrawData struct {
	Env                    crtx.Environment
	Amount, Available      crtx.USDC
	TokenAccount, Explorer string
	Left                   crtx.USDC
	Ok                     bool
	MinWithdrawal          crtx.USDC
}

// confirmWithdrawal shows a withdrawal before it is made: nothing moves
// until its form is sent. "all" asks for the whole available balance.
func (h *Handler) confirmWithdrawal(w http.ResponseWriter, r *http.Request, v visit) error {
	q := r.URL.Query()
	d := withdrawData{MinWithdrawal: market.MinWithdrawal}
	var problem string
	d.Env, d.Amount, problem = amountForm(q.Get)
	if q.Get("all") != "" {
		d.Env, problem = crtx.Environment(q.Get("environment")), ""
	}
	c := h.market.Chain(d.Env)
	if c == nil {
		return crtx.Errorf(crtx.CodeInvalidRequest, "withdrawals go to a chain, and %q has none here", q.Get("environment"))
	}
	b, err := h.market.Funds.Balances(r.Context(), v.Wallet, d.Env)
	if err != nil {
		return err
	}
	d.Available = b[d.Env].Available
	if q.Get("all") != "" {
		d.Amount = d.Available
	}
	if d.TokenAccount, err = c.TokenAccountOf(v.Wallet); err != nil {
		return err
	}
	d.Explorer = crtx.SolanaExplorerURL(c, "address", d.TokenAccount)
	// Said here, before a confirmation the marketplace would refuse.
	exists, chainErr := c.HasTokenAccount(r.Context(), v.Wallet)
	switch {
	case problem != "":
	case chainErr != nil:
		problem = "The " + string(d.Env) + " chain did not answer whether your USDC token account exists; try again in a moment."
	case !exists:
		problem = "Your wallet has no USDC token account on Solana " + string(d.Env) + " yet (" + d.TokenAccount +
			"): create it first, as any Solana wallet does when it receives USDC, then withdraw."
	case d.Amount < market.MinWithdrawal:
		problem = "A withdrawal is at least " + market.MinWithdrawal.String() + " USDC: the marketplace pays each one's network fee."
	case d.Amount > d.Available:
		problem = "Your " + string(d.Env) + " balance has " + d.Available.String() + " USDC available; the withdrawal needs " + d.Amount.String() + " USDC."
	default:
		d.Ok, d.Left = true, d.Available-d.Amount
	}
	p := v.page("Withdraw "+d.Amount.String()+" USDC — crtx", d)
	p.Error = problem
	return h.render(w, "withdraw", p)
}

// withdraw queues a confirmed withdrawal to the wallet's own token account.
func (h *Handler) withdraw(w http.ResponseWriter, r *http.Request, v visit) (outcome, error) {
	env, amount, problem := amountForm(r.PostFormValue)
	if problem != "" {
		return outcome{Error: problem}, nil
	}
	// Said before the marketplace's own refusal, with why.
	if amount < market.MinWithdrawal {
		return outcome{Error: "A withdrawal is at least " + market.MinWithdrawal.String() + " USDC: the marketplace pays each one's network fee."}, nil
	}
	wd, err := h.market.Funds.Withdraw(r.Context(), v.Wallet, env, amount)
	if isUserError(err) {
		return outcome{Error: amountProblem(err)}, nil
	}
	if err != nil {
		return outcome{}, err
	}
	return outcome{Notice: wd.Amount.String() + " USDC is on its way to your token account " + wd.Destination + " on " + string(env) +
		"'s chain: its status below changes to confirmed once the transfer is final.", Withdrawal: wd.ID}, nil
}

// withdrawalList is the dashboard's list of an environment's withdrawals.
func (h *Handler) withdrawalList(w http.ResponseWriter, r *http.Request, v visit) error {
	env, err := crtx.ParseEnvironment("environment", r.PathValue("env"))
	if err != nil {
		return err
	}
	ws, err := h.withdrawals(r.Context(), v.Wallet, env)
	if err != nil {
		return err
	}
	return h.fragment(w, "dashboard", "withdrawals", ws)
}

// fragment writes one named part of a page, for its script to put in place.
func (h *Handler) fragment(w http.ResponseWriter, page, name string, data any) error {
	var b bytes.Buffer
	if err := h.pages[page].ExecuteTemplate(&b, name, data); err != nil {
		return err
	}
	writePage(w, http.StatusOK, b.Bytes())
	return nil
}
