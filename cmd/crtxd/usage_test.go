package main

import (
	"bytes"
	"debug/buildinfo"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/crtx-market/crtx"
	"github.com/crtx-market/crtx/daemon"
	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
)

// The built binary answers help, --version and completion on stdout with
// exit 0, and usage errors on stderr with exit 2 and a hint.
func TestUsageOfTheBinary(t *testing.T) {
	nowhere := filepath.Join(t.TempDir(), "forgot")
	cases := []struct {
		args         []string
		code         int
		stdout       []string // each must appear on stdout
		stderr       []string // each must appear on stderr
		stdoutIsVoid bool
	}{
		{args: []string{"--help"}, stdout: []string{"Usage:", "crtxd [command]", "serve", "ledger", "CRTX_<FLAG>"}},
		{args: []string{"help"}, stdout: []string{"Usage:", "Available Commands:"}},
		{args: []string{"-h"}, stdout: []string{"Usage:"}},
		{args: []string{"help", "ledger", "deposit"}, stdout: []string{"crtxd ledger deposit", "--amount", "--environment string   mainnet or devnet", "Examples:"}},
		{args: []string{"ledger", "--help"}, stdout: []string{"verify", "deposit", "withdraw"}},
		{args: []string{"admin", "disputes", "--help"}, stdout: []string{"list", "resolve"}},
		{args: []string{"serve", "-h"}, stdout: []string{"--log-format string", "text or json", "--rate-limit-ip"}},
		// The version the binary's build information names: a fresh
		// clone's build is stamped from its commit, -buildvcs=false's is not.
		{args: []string{"--version"}, stdout: []string{"crtxd " + builtVersion(t) + "\n"}},
		{args: []string{"completion", "bash"}, stdout: []string{"bash completion", "__start_crtxd"}},
		{args: []string{"completion", "zsh"}, stdout: []string{"#compdef crtxd"}},
		{args: []string{"serv"}, code: 2, stdoutIsVoid: true, stderr: []string{`crtxd: unknown command "serv"`, "Did you mean this?", "\tserve\n", "Run 'crtxd --help' for usage."}},
		{args: []string{"ledger", "depost"}, code: 2, stdoutIsVoid: true, stderr: []string{"Did you mean this?\n\tdeposit", "Run 'crtxd ledger --help' for usage."}},
		{args: []string{"ledger", "deposit", "--frob", "1"}, code: 2, stdoutIsVoid: true, stderr: []string{"crtxd: unknown flag: --frob\nRun 'crtxd ledger deposit --help' for usage.\n"}},
		{args: []string{"ledger", "deposit", "--wallet", "W"}, code: 2, stdoutIsVoid: true, stderr: []string{`required flag(s) "amount", "environment" not set`, "Run 'crtxd ledger deposit --help'"}},
		{args: []string{"admin", "disputes", "resolve", "--outcome", "upheld"}, code: 2, stdoutIsVoid: true, stderr: []string{"takes DISPUTE_ID", "Run 'crtxd admin disputes resolve --help'"}},
		{args: []string{"serve", "extra"}, code: 2, stdoutIsVoid: true, stderr: []string{"takes no arguments"}},
		{args: []string{"ledger"}, code: 2, stdoutIsVoid: true, stderr: []string{"missing command", "verify"}},
		{args: []string{}, code: 2, stdoutIsVoid: true, stderr: []string{"missing command", "serve"}},
		// Runtime errors: exit 1, one line, no usage hint. Flags go before
		// or after the positional arguments alike.
		{args: []string{"admin", "agents", "suspend", "--data", nowhere, "agt_x"}, code: 1, stdoutIsVoid: true, stderr: []string{"crtxd: --data " + nowhere + " holds no marketplace"}},
		{args: []string{"admin", "agents", "suspend", "agt_x", "--data", nowhere}, code: 1, stdoutIsVoid: true, stderr: []string{"holds no marketplace"}},
	}
	bin := crtxdBinary(t)
	for _, tc := range cases {
		t.Run(strings.Join(tc.args, " "), func(t *testing.T) {
			var stdout, stderr bytes.Buffer
			cmd := exec.Command(bin, tc.args...)
			cmd.Stdout, cmd.Stderr = &stdout, &stderr
			err := cmd.Run()
			code := 0
			var exit *exec.ExitError
			if errors.As(err, &exit) {
				code = exit.ExitCode()
			} else if err != nil {
				t.Fatal(err)
			}
			if code != tc.code {
				t.Errorf("exit %d, want %d\nstdout:\n%s\nstderr:\n%s", code, tc.code, &stdout, &stderr)
			}
			for _, w := range tc.stdout {
				if !strings.Contains(stdout.String(), w) {
					t.Errorf("stdout lacks %q:\n%s", w, &stdout)
				}
			}
			for _, w := range tc.stderr {
				if !strings.Contains(stderr.String(), w) {
					t.Errorf("stderr lacks %q:\n%s", w, &stderr)
				}
			}
			if tc.code == 0 && stderr.Len() > 0 {
				t.Errorf("stderr on success:\n%s", &stderr)
			}
			if tc.stdoutIsVoid && stdout.Len() > 0 {
				t.Errorf("stdout on an error:\n%s", &stdout)
			}
			if tc.code == 1 && (strings.Count(stderr.String(), "\n") != 1 || strings.Contains(stderr.String(), "--help")) {
				t.Errorf("a runtime error is one line without a usage hint:\n%s", &stderr)
			}
		})
	}
}

// eachFlag calls fn with every flag of every crtxd command, hidden ones
// included.
func eachFlag(cmd *cobra.Command, fn func(cmd *cobra.Command, f *pflag.Flag)) {
	cmd.Flags().VisitAll(func(f *pflag.Flag) { fn(cmd, f) })
	for _, c := range cmd.Commands() {
		eachFlag(c, fn)
	}
}

// docs/configuration.md lists every flag, and every flag and command says
// what it is for.
func TestEveryFlagIsDocumented(t *testing.T) {
	doc, err := os.ReadFile("../../docs/configuration.md")
	if err != nil {
		t.Fatal(err)
	}
	root := newCrtxd()
	// cobra adds --help and --version as a command runs, so the tree here
	// holds only crtxd's own flags.
	n := 0
	eachFlag(root, func(cmd *cobra.Command, f *pflag.Flag) {
		n++
		if !bytes.Contains(doc, []byte("`--"+f.Name+"`")) {
			t.Errorf("docs/configuration.md does not document --%s (%s)", f.Name, cmd.CommandPath())
		}
		if len(f.Usage) < 10 {
			t.Errorf("%s --%s has no description", cmd.CommandPath(), f.Name)
		}
	})
	if n < 40 {
		t.Errorf("walked %d flags; the command tree is not what this test expects", n)
	}
	var walk func(*cobra.Command)
	walk = func(cmd *cobra.Command) {
		if cmd.Short == "" && !cmd.Hidden {
			t.Errorf("%s has no Short", cmd.CommandPath())
		}
		for _, c := range cmd.Commands() {
			walk(c)
		}
	}
	walk(root)
	if !bytes.Contains(doc, []byte("`--version`")) {
		t.Error("docs/configuration.md does not mention --version")
	}
}

// builtVersion is the version crtxd's binary names itself by.
func builtVersion(t *testing.T) string {
	t.Helper()
	info, err := buildinfo.ReadFile(crtxdBinary(t))
	if err != nil {
		t.Fatal(err)
	}
	return crtx.BuildVersion(info)
}

// The systemd unit in docs/deploy.md stops crtxd as crtxd stops itself:
// TimeoutStopSec is --shutdown-timeout (as the unit sets it, else its
// default) and 10 s more, so that systemd never kills a replica still
// closing its database.
func TestUnitStopsAsCrtxdDoes(t *testing.T) {
	shutdown := daemon.Defaults().ShutdownTimeout
	var stop time.Duration
	var err error
	for _, line := range deployUnit(t) {
		if v, ok := strings.CutPrefix(line, "Environment=CRTX_SHUTDOWN_TIMEOUT="); ok {
			if shutdown, err = time.ParseDuration(v); err != nil {
				t.Fatal(err)
			}
		}
		if v, ok := strings.CutPrefix(line, "TimeoutStopSec="); ok {
			s, err := strconv.Atoi(v)
			if err != nil {
				t.Fatal(err)
			}
			stop = time.Duration(s) * time.Second
		}
	}
	if stop != shutdown+10*time.Second {
		t.Errorf("the unit's TimeoutStopSec is %s, crtxd's --shutdown-timeout %s: want it 10 s longer", stop, shutdown)
	}
}
