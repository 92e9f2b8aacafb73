package main

import (
	"strings"
	"testing"
)

// Help is on every level, on stdout with exit 0, and says what each flag
// takes; typos get suggestions, wrong command lines exit 2 with a hint.
func TestHelpVersionCompletion(t *testing.T) {
	env := []string{"CRTX_URL=http://127.0.0.1:1", "CRTX_CONFIG=" + t.TempDir() + "/none.json"}
	helps := map[string][]string{
		"crtx help":                   {"help"},
		"crtx --help":                 {"--help"},
		"crtx help run":               {"help", "run"},
		"crtx run --help":             {"run", "--help"},
		"crtx agents --help":          {"agents", "--help"},
		"crtx agents":                 {"agents"},
		"crtx help agents list":       {"help", "agents", "list"},
		"crtx creator --help":         {"creator", "--help"},
		"crtx creator create -h":      {"creator", "create", "-h"},
		"crtx executions list --help": {"executions", "list", "--help"},
	}
	for name, args := range helps {
		code, out, errOut := bin(t, env, args...)
		if code != 0 || !strings.Contains(out, "Usage:") || errOut != "" {
			t.Errorf("%s: exit %d, stdout %q, stderr %q", name, code, out, errOut)
		}
	}
	// Flag descriptions name the values they take.
	for args, want := range map[string]string{
		"agents list --help":      "price_asc",
		"executions list --help":  "pending, running, completed, failed or disputed",
		"dispute --help":          "hash_mismatch, fraud or other",
		"keys create --help":      "devnet (crtx_test_…) or mainnet (crtx_live_…)",
		"creator earnings --help": "mainnet or devnet",
	} {
		if _, out, _ := bin(t, env, strings.Fields(args)...); !strings.Contains(out, want) {
			t.Errorf("crtx %s does not say %q:\n%s", args, want, out)
		}
	}
	if code, out, _ := bin(t, env, "--version"); code != 0 || !strings.HasPrefix(out, "crtx version ") {
		t.Errorf("--version: %d %q", code, out)
	}
	for _, sh := range []string{"bash", "zsh", "fish", "powershell"} {
		if code, out, _ := bin(t, env, "completion", sh); code != 0 || !strings.Contains(out, "crtx") || len(out) < 1000 {
			t.Errorf("completion %s: exit %d, %d bytes", sh, code, len(out))
		}
	}
	for args, want := range map[string]string{
		"agnets":          "Did you mean this?\n\tagents",
		"agents lst":      "Did you mean this?\n\tlist",
		"executions shwo": "Did you mean this?\n\tshow",
		"run only-one":    "Run 'crtx run --help' for usage.",
		"run a b --bogus": "unknown flag: --bogus",
		"dispute x":       `required flag(s) "description", "reason" not set`,
	} {
		code, out, errOut := bin(t, env, strings.Fields(args)...)
		if code != 2 || out != "" || !strings.Contains(errOut, want) {
			t.Errorf("crtx %s: exit %d, stdout %q, stderr %q; want exit 2 and %q", args, code, out, errOut, want)
		}
	}
}
