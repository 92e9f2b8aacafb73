package http

import (
	"strings"
	"testing"
)

func TestAcceptsGzip(t *testing.T) {
	for h, want := range map[string]bool{
		"":                      false,
		"gzip":                  true,
		"GZIP":                  true,
		"x-gzip":                true,
		"gzip, deflate, br":     true,
		"br;q=1.0, gzip;q=0.8":  true,
		"gzip; q=0.001":         true,
		"gzip;q=0":              false,
		"gzip;q=0.000":          false,
		"gzip;q=2":              false,
		"gzip;q=x":              false,
		"*":                     true,
		"*;q=0":                 false,
		"gzip;q=0, *":           false,
		"*, gzip;q=0":           false,
		"identity":              false,
		"br, deflate":           false,
		"gzipped":               false,
		" gzip ; level=1 ":      true,
		"deflate;q=0.5, *;q=.1": true,
	} {
		if got := acceptsGzip(h); got != want {
			t.Errorf("acceptsGzip(%q) = %t, want %t", h, got, want)
		}
	}
}

// An Accept-Encoding header of any bytes is read without a panic, and
// admits gzip only when it names gzip or *.
func FuzzAcceptsGzip(f *testing.F) {
	for _, s := range []string{"gzip", "br;q=1.0, gzip;q=0.8", "*;q=0", "gzip;q=0, *", ";;,=q"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, h string) {
		if acceptsGzip(h) && !strings.Contains(strings.ToLower(h), "gzip") && !strings.Contains(h, "*") {
			t.Fatalf("acceptsGzip(%q) = true", h)
		}
	})
}
