package crtx

import (
	"errors"
	"testing"
)

func TestParseUSDC(t *testing.T) {
	good := map[string]USDC{
		"0": 0, "0.05": 50_000, "10": 10_000_000, "0.000001": 1, "1e-6": 1,
		"1.5E2": 150_000_000, "0.1000000": 100_000, "1000000000": MaxUSDC,
		"123.456789": 123_456_789, "0e5": 0,
	}
	for in, want := range good {
		got, err := ParseUSDC(in)
		if err != nil || got != want {
			t.Errorf("ParseUSDC(%q) = %d, %v; want %d", in, got, err, want)
		}
	}
	bad := []string{"", "-1", "-0.1", "0.0000001", "1e-7", "1000000000.000001", "1e10",
		"NaN", "Infinity", "01", "1.", ".5", "1e", "0x10", " 1", "1 ", "\"1\"", "1e99999999999", "true"}
	for _, in := range bad {
		if v, err := ParseUSDC(in); !errors.Is(err, ErrAmount) {
			t.Errorf("ParseUSDC(%q) = %d, %v; want ErrAmount", in, v, err)
		}
	}
}

func TestUSDCString(t *testing.T) {
	cases := map[USDC]string{0: "0", 1: "0.000001", 50_000: "0.05", 10_000_000: "10", 1_234_500: "1.2345", -1_500_000: "-1.5"}
	for in, want := range cases {
		if got := in.String(); got != want {
			t.Errorf("%d.String() = %q, want %q", in, got, want)
		}
	}
}

// 0.1 + 0.2 is 0.3 here, unlike in float64.
func TestUSDCExactSum(t *testing.T) {
	a, _ := ParseUSDC("0.1")
	b, _ := ParseUSDC("0.2")
	if got := (a + b).String(); got != "0.3" {
		t.Fatalf("0.1 + 0.2 = %s", got)
	}
}

func FuzzParseUSDC(f *testing.F) {
	for _, s := range []string{"0", "0.05", "1e-6", "1000000000", "-1", "1.0000001", "9e9"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		v, err := ParseUSDC(s)
		if err != nil {
			return
		}
		if v < 0 || v > MaxUSDC {
			t.Fatalf("ParseUSDC(%q) = %d out of range", s, v)
		}
		// What we print must parse back to the same amount.
		back, err := ParseUSDC(v.String())
		if err != nil || back != v {
			t.Fatalf("round trip of %q: %s → %d, %v", s, v, back, err)
		}
	})
}
