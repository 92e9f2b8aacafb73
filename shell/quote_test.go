package shell_test

import (
	"os/exec"
	"testing"

	"github.com/crtx-market/crtx/shell"
)

// Each word, quoted, reaches a real shell's command as itself.
func TestQuote(t *testing.T) {
	sh, err := exec.LookPath("sh")
	if err != nil {
		t.Fatal(err)
	}
	for in, want := range map[string]string{
		"crtx-dev/demo-wallet.json": "crtx-dev/demo-wallet.json",
		"":                          "''",
		"my data/id.json":           "'my data/id.json'",
		"lang=fr":                   "'lang=fr'",
		`it's $(x) "y"`:             `'it'\''s $(x) "y"'`,
	} {
		got := shell.Quote(in)
		if got != want {
			t.Errorf("Quote(%q) = %s, want %s", in, got, want)
		}
		out, err := exec.Command(sh, "-c", "printf %s "+got).Output()
		if err != nil || string(out) != in {
			t.Errorf("sh read %s as %q (%v), want %q", got, out, err, in)
		}
	}
}
