package web

import "testing"

// A name a spreadsheet would take for a formula is quoted as text.
func TestCSVText(t *testing.T) {
	for in, want := range map[string]string{"Greeter": "Greeter", "=HYPERLINK(1)": "'=HYPERLINK(1)", "  +1": "'  +1",
		"\t=1": "'\t=1", "\r=1": "'\r=1", "@SUM": "'@SUM", "-2": "'-2", "a=b": "a=b"} {
		if got := csvText(in); got != want {
			t.Errorf("csvText(%q) = %q, want %q", in, got, want)
		}
	}
}
