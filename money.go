package crtx

import (
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"strconv"
	"strings"
)

// USDC is an amount in micro-USDC (10^-6 USDC). Every amount inside crtx is
// one of these; decimals exist only at the JSON edge.
type USDC int64

// MicroPerUSDC is the number of micro-USDC in one USDC.
const MicroPerUSDC = 1_000_000

// MaxUSDC is the largest amount crtx accepts as input: one billion USDC.
const MaxUSDC USDC = 1_000_000_000 * MicroPerUSDC

// ErrAmount is wrapped by every amount parsing failure.
var ErrAmount = errors.New("invalid amount")

// ParseUSDC parses a decimal amount written as a JSON number ("0.05", "10",
// "1e-3") exactly, without floating point. Negative amounts, more than six
// significant decimals, and amounts above MaxUSDC are refused. Trailing zeros
// beyond six decimals ("0.1000000") are accepted because the value is exact.
func ParseUSDC(s string) (USDC, error) {
	mant, exp, err := splitNumber(s)
	if err != nil {
		return 0, err
	}
	intPart, frac, _ := strings.Cut(mant, ".")
	digits := intPart + frac
	point := len(intPart) + exp
	if strings.Trim(digits, "0") == "" {
		return 0, nil
	}
	// Bound the shift before padding so "1e999999999" cannot allocate.
	if point > 40 || point < -40 {
		return 0, fmt.Errorf("%w: %s is out of range", ErrAmount, s)
	}
	switch {
	case point <= 0:
		digits = strings.Repeat("0", -point) + digits
		point = 0
	case point > len(digits):
		digits += strings.Repeat("0", point-len(digits))
	}
	whole := strings.TrimLeft(digits[:point], "0")
	fraction := strings.TrimRight(digits[point:], "0")
	if len(fraction) > 6 {
		return 0, fmt.Errorf("%w: %s has more than 6 decimals", ErrAmount, s)
	}
	if len(whole) > 10 {
		return 0, fmt.Errorf("%w: %s is above the maximum of %s", ErrAmount, s, MaxUSDC)
	}
	fraction += strings.Repeat("0", 6-len(fraction))
	n, err := strconv.ParseInt(whole+fraction, 10, 64)
	if err != nil {
		// whole+fraction is at most 16 digits, so this cannot overflow.
		return 0, fmt.Errorf("%w: %s", ErrAmount, s)
	}
	if USDC(n) > MaxUSDC {
		return 0, fmt.Errorf("%w: %s is above the maximum of %s", ErrAmount, s, MaxUSDC)
	}
	return USDC(n), nil
}

// splitNumber checks s against the JSON number grammar, refusing a sign, and
// returns the mantissa and the decimal exponent.
func splitNumber(s string) (mant string, exp int, err error) {
	bad := func(why string) (string, int, error) {
		return "", 0, fmt.Errorf("%w: %q %s", ErrAmount, s, why)
	}
	if s == "" {
		return bad("is empty")
	}
	if s[0] == '-' {
		return bad("is negative")
	}
	i := 0
	digits := func() int {
		start := i
		for i < len(s) && s[i] >= '0' && s[i] <= '9' {
			i++
		}
		return i - start
	}
	n := digits()
	if n == 0 || (n > 1 && s[0] == '0') {
		return bad("is not a number")
	}
	if i < len(s) && s[i] == '.' {
		i++
		if digits() == 0 {
			return bad("is not a number")
		}
	}
	mant = s[:i]
	if i < len(s) && (s[i] == 'e' || s[i] == 'E') {
		i++
		start := i
		if i < len(s) && (s[i] == '+' || s[i] == '-') {
			i++
		}
		if digits() == 0 {
			return bad("is not a number")
		}
		e, perr := strconv.Atoi(s[start:i])
		if perr != nil || e > 1000 || e < -1000 {
			return bad("is out of range")
		}
		exp = e
	}
	if i != len(s) {
		return bad("is not a number")
	}
	return mant, exp, nil
}

// String writes the amount in USDC with at most 6 decimals and no trailing
// zeros: 50000 → "0.05", 10000000 → "10".
func (u USDC) String() string {
	n := int64(u)
	sign := ""
	if n < 0 {
		sign = "-"
		n = -n
	}
	whole, frac := n/MicroPerUSDC, n%MicroPerUSDC
	if frac == 0 {
		return sign + strconv.FormatInt(whole, 10)
	}
	f := strings.TrimRight(fmt.Sprintf("%06d", frac), "0")
	return sign + strconv.FormatInt(whole, 10) + "." + f
}

// MarshalJSON writes the amount as a JSON number in USDC.
func (u USDC) MarshalJSON() ([]byte, error) { return []byte(u.String()), nil }

// UnmarshalJSON reads a JSON number in USDC; strings, booleans and null are refused.
func (u *USDC) UnmarshalJSON(b []byte) error {
	if len(b) > 0 && (b[0] == '"' || b[0] == 't' || b[0] == 'f' || b[0] == '{' || b[0] == '[') {
		return &json.UnmarshalTypeError{Value: jsonKind(b[0]), Type: reflect.TypeFor[USDC]()}
	}
	v, err := ParseUSDC(string(b))
	if err != nil {
		return err
	}
	*u = v
	return nil
}

func jsonKind(c byte) string {
	switch c {
	case '"':
		return "string"
	case '{':
		return "object"
	case '[':
		return "array"
	}
	return "bool"
}
