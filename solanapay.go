package crtx

import (
	"net/url"
	"strings"
)

// TransferRequest is a Solana Pay transfer request: the URL a wallet opens
// to pay Amount of the SPL token SPLToken to Recipient, naming References
// among the transaction's keys so the payee can find the payment.
type TransferRequest struct {
	Recipient  string
	Amount     USDC
	SPLToken   string
	References []string
	Label      string
	Message    string
	Memo       string
}

// URL is the request as the Solana Pay specification writes it:
// solana:<recipient>?amount=…&spl-token=…&reference=…&label=…&message=…&memo=….
func (r TransferRequest) URL() string {
	var q []string
	add := func(k, v string) {
		if v != "" {
			// %20, not "+", for a space: what encodeURIComponent writes,
			// as the specification's own library does.
			q = append(q, k+"="+strings.ReplaceAll(url.QueryEscape(v), "+", "%20"))
		}
	}
	if r.Amount > 0 {
		add("amount", r.Amount.String())
	}
	add("spl-token", r.SPLToken)
	for _, ref := range r.References {
		add("reference", ref)
	}
	add("label", r.Label)
	add("message", r.Message)
	add("memo", r.Memo)
	u := "solana:" + r.Recipient
	if len(q) > 0 {
		u += "?" + strings.Join(q, "&")
	}
	return u
}
