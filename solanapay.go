package crtx

import (
	"errors"
	"fmt"
	"net/url"
	"regexp"
	"strings"
	"unicode/utf8"

	"github.com/mr-tron/base58"
)

// TransferRequest is a Solana Pay transfer request: the URL a wallet reads
// to compose a transfer on its own (github.com/solana-labs/solana-pay,
// SPEC.md, "Specification: Transfer Request"). Amounts are USDC's, with at
// most 6 decimals; Amount zero, and an empty Label, Message or Memo, are
// absent from the URL.
type TransferRequest struct {
	// Recipient is the wallet paid; an SPL transfer goes to its associated
	// token account of SPLToken.
	Recipient string
	Amount    USDC
	// SPLToken is the mint; empty, the request is for SOL.
	SPLToken string
	// References are keys the wallet adds to the transfer instruction, in
	// order, read-only and not signing, to find the payment by.
	References []string
	Label      string
	Message    string
	// Memo goes on chain in an SPL Memo instruction just before the
	// transfer.
	Memo string
}

// URL encodes the request as the spec writes it: solana:<recipient>, then
// amount, spl-token, each reference, label, message and memo, each value
// encoded as encodeURIComponent does.
func (r TransferRequest) URL() string {
	var b strings.Builder
	b.WriteString("solana:")
	b.WriteString(r.Recipient)
	sep := byte('?')
	param := func(name, value string) {
		b.WriteByte(sep)
		sep = '&'
		b.WriteString(name)
		b.WriteByte('=')
		b.WriteString(encodeURIComponent(value))
	}
	if r.Amount != 0 {
		// USDC.String writes a leading 0 and no exponent, as the spec asks.
		param("amount", r.Amount.String())
	}
	if r.SPLToken != "" {
		param("spl-token", r.SPLToken)
	}
	for _, ref := range r.References {
		param("reference", ref)
	}
	if r.Label != "" {
		param("label", r.Label)
	}
	if r.Message != "" {
		param("message", r.Message)
	}
	if r.Memo != "" {
		param("memo", r.Memo)
	}
	return b.String()
}

// encodeURIComponent escapes every byte but the letters, digits and
// -_.!~*'(), as JavaScript's function of that name, which the spec names.
func encodeURIComponent(s string) string {
	const hex = "0123456789ABCDEF"
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		c := s[i]
		if 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' || strings.IndexByte("-_.!~*'()", c) >= 0 {
			b.WriteByte(c)
			continue
		}
		b.WriteByte('%')
		b.WriteByte(hex[c>>4])
		b.WriteByte(hex[c&15])
	}
	return b.String()
}

// amountPattern is the spec's amount: a non-negative integer or decimal,
// with a digit before the point, never in scientific notation.
var amountPattern = regexp.MustCompile(`^[0-9]+(\.[0-9]+)?$`)

// ParseTransferRequest reads a transfer request URL as a wallet does. A
// field the spec allows once and given twice, an address that is not a
// public key, an amount with more decimals than USDC's, and a value that is
// not UTF-8 make it malformed; a transaction request (a link) is not a
// transfer request; unknown parameters are ignored. A '+' in a value is a
// space, as wallets read query strings.
func ParseTransferRequest(s string) (TransferRequest, error) {
	bad := func(format string, args ...any) (TransferRequest, error) {
		return TransferRequest{}, fmt.Errorf("%w: "+format, append([]any{ErrTransferRequest}, args...)...)
	}
	const scheme = "solana:"
	if len(s) < len(scheme) || !strings.EqualFold(s[:len(scheme)], scheme) {
		return bad("not a solana: URL")
	}
	if strings.Contains(s, "#") {
		return bad("a fragment")
	}
	path, query, _ := strings.Cut(s[len(scheme):], "?")
	if strings.ContainsAny(path, ":%/") {
		return bad("a transaction request, not a transfer request")
	}
	var r TransferRequest
	var err error
	if r.Recipient, err = address(path); err != nil {
		return bad("recipient: %w", err)
	}
	values, err := url.ParseQuery(query)
	if err != nil {
		return bad("query: %w", err)
	}
	for name, vs := range values {
		switch name {
		case "amount", "spl-token", "label", "message", "memo":
			if len(vs) > 1 {
				return bad("%s given %d times", name, len(vs))
			}
		}
		for _, v := range vs {
			if !utf8.ValidString(v) {
				return bad("%s is not UTF-8", name)
			}
		}
	}
	if vs, ok := values["amount"]; ok {
		if r.Amount, err = parseAmount(vs[0]); err != nil {
			return bad("amount %q: %w", vs[0], err)
		}
	}
	if vs, ok := values["spl-token"]; ok {
		if r.SPLToken, err = address(vs[0]); err != nil {
			return bad("spl-token: %w", err)
		}
	}
	for _, v := range values["reference"] {
		ref, err := address(v)
		if err != nil {
			return bad("reference: %w", err)
		}
		r.References = append(r.References, ref)
	}
	r.Label = values.Get("label")
	r.Message = values.Get("message")
	r.Memo = values.Get("memo")
	return r, nil
}

// parseAmount reads the spec's amount in USDC.
func parseAmount(s string) (USDC, error) {
	if !amountPattern.MatchString(s) {
		return 0, fmt.Errorf("%w: not a plain decimal", errAmount)
	}
	whole, frac, _ := strings.Cut(s, ".")
	if len(frac) > usdcDecimals {
		return 0, fmt.Errorf("%w: more than %d decimals", errAmount, usdcDecimals)
	}
	// The spec's grammar allows leading zeros; JSON's, which ParseUSDC
	// reads, does not.
	whole = strings.TrimLeft(whole, "0")
	if whole == "" {
		whole = "0"
	}
	if frac != "" {
		whole += "." + frac
	}
	return ParseUSDC(whole)
}

// address checks a base58 public key of 32 bytes and writes it canonically.
func address(s string) (string, error) {
	b, err := base58.Decode(s)
	if err != nil || len(b) != 32 {
		return "", fmt.Errorf("%w: %q", errAddress, s)
	}
	return base58.Encode(b), nil
}

// ErrTransferRequest is wrapped by a malformed Solana Pay transfer request
// URL; errAmount and errAddress say what in it.
var (
	ErrTransferRequest = errors.New("malformed Solana Pay transfer request")
	errAmount          = errors.New("invalid transfer amount")
	errAddress         = errors.New("invalid Solana address")
)

// usdcDecimals is the decimals of USDC's mint: a micro-USDC is one base unit.
const usdcDecimals = 6
