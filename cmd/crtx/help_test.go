package main

import (
	"encoding/json"
	"fmt"
	"html"
	"os"
	"regexp"
	"strings"
	"testing"

	"github.com/spf13/cobra"
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
		"verify --help":           "$CRTX_SOLANA_RPC",
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
		"agents":          "missing command: crtx agents takes one of list, show",
		"":                "missing command: crtx takes one of",
	} {
		code, out, errOut := bin(t, env, strings.Fields(args)...)
		if code != 2 || out != "" || !strings.Contains(errOut, want) {
			t.Errorf("crtx %s: exit %d, stdout %q, stderr %q; want exit 2 and %q", args, code, out, errOut, want)
		}
	}
}

// /docs shows, beside an operation's curl line, the crtx command lines its
// x-crtx-cli names: each must be a command of this tree, with its arguments.
func TestOpenAPICommandLines(t *testing.T) {
	b, err := os.ReadFile("../../http/openapi.json")
	if err != nil {
		t.Fatal(err)
	}
	var doc struct {
		Paths map[string]map[string]json.RawMessage `json:"paths"`
	}
	if err := json.Unmarshal(b, &doc); err != nil {
		t.Fatal(err)
	}
	root := (&cli{}).root()
	n := 0
	for path, ops := range doc.Paths {
		for method, raw := range ops {
			var op struct {
				CLI []string `json:"x-crtx-cli"`
			}
			json.Unmarshal(raw, &op)
			for _, line := range op.CLI {
				n++
				if err := commandLine(root, line); err != nil {
					t.Errorf("%s %s: %v", method, path, err)
				}
			}
		}
	}
	if n < 10 {
		t.Errorf("only %d operations name a crtx command line", n)
	}
}

// The getting-started steps of /docs name crtx commands too.
func TestDocsCommandLines(t *testing.T) {
	b, err := os.ReadFile("../../web/templates/docs.html")
	if err != nil {
		t.Fatal(err)
	}
	lines := regexp.MustCompile(`<code>(crtx [^<]*)</code>`).FindAllStringSubmatch(string(b), -1)
	if len(lines) < 5 {
		t.Fatalf("found %d crtx command lines in docs.html", len(lines))
	}
	root := (&cli{}).root()
	for _, l := range lines {
		if err := commandLine(root, html.UnescapeString(l[1])); err != nil {
			t.Error(err)
		}
	}
}

// commandLine checks that line runs a command of root with the arguments
// it takes.
func commandLine(root *cobra.Command, line string) error {
	words := shellWords(line)
	if len(words) < 2 || words[0] != "crtx" {
		return fmt.Errorf("%q is not a crtx command line", line)
	}
	cmd, rest, err := root.Find(words[1:])
	if err != nil || cmd == root || cmd.HasSubCommands() {
		return fmt.Errorf("%q names no crtx command", line)
	}
	var positional []string
	for _, w := range rest {
		if strings.HasPrefix(w, "-") {
			break
		}
		positional = append(positional, w)
	}
	if err := cmd.ValidateArgs(positional); err != nil {
		return fmt.Errorf("%q: %w", line, err)
	}
	return nil
}

// shellWords splits a command line as a shell would, quotes and all.
func shellWords(line string) []string {
	var words []string
	var w strings.Builder
	quote, in := rune(0), false
	for _, r := range line {
		switch {
		case quote != 0 && r == quote:
			quote = 0
		case quote != 0:
			w.WriteRune(r)
		case r == '\'' || r == '"':
			quote, in = r, true
		case r == ' ':
			if in {
				words = append(words, w.String())
				w.Reset()
			}
			in = false
		default:
			w.WriteRune(r)
			in = true
		}
	}
	if in {
		words = append(words, w.String())
	}
	return words
}
