package sdk_test

import (
	"context"
	"encoding/hex"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/crtx-market/crtx"
	"github.com/crtx-market/crtx/client"
)

// python is Debian's interpreter (the pyenv shims on PATH may lack the
// cryptography package) or, without it, python3 from PATH, when it has
// cryptography's Ed25519; "" otherwise.
func python() string {
	for _, p := range []string{"/usr/bin/python3", "python3"} {
		path, err := exec.LookPath(p)
		if err != nil {
			continue
		}
		if exec.Command(path, "-c", "import cryptography.hazmat.primitives.asymmetric.ed25519").Run() == nil {
			return path
		}
	}
	return ""
}

// The Python SDK's tests (sdk/python/tests) against crtxd on 127.0.0.1: an
// agent served with the SDK is listed with a creator wallet holding the
// collateral, executed, paid and verified by the SDK's caller side with a
// funded devnet key.
func TestPythonSDK(t *testing.T) {
	py := python()
	if py == "" {
		if os.Getenv("CI") != "" {
			t.Fatal("python3 with the cryptography package is required in CI (apt-get install python3-cryptography)")
		}
		t.Skip("no python3 with the cryptography package (Debian: python3-cryptography)")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	// The creator's wallet holds exactly the collateral of one listing at
	// 0.01 USDC.
	m := startMarketplace(t, 10*crtx.MicroPerUSDC, 5*crtx.MicroPerUSDC)
	d, logs, key := m.d, m.logs, m.key
	creator := m.creator

	cmd := exec.CommandContext(ctx, py, "-m", "unittest", "discover", "-v", "-s", "tests", "-t", ".")
	cmd.Dir = "python"
	cmd.Env = append(os.Environ(), "CRTX_TEST_URL="+d.URL, "CRTX_TEST_API_KEY="+key,
		"CRTX_TEST_CREATOR_SEED="+hex.EncodeToString(creator.Seed()), "PYTHONDONTWRITEBYTECODE=1", "PYTHONUNBUFFERED=1")
	out, err := cmd.CombinedOutput()
	if err != nil {
		l := logs.String()
		t.Fatalf("python3 -m unittest: %v\n%s\nthe marketplace's log, its end:\n%s", err, out, l[max(0, len(l)-8000):])
	}
	// Every test ran: none skipped for want of the marketplace.
	if !strings.Contains(string(out), "\nOK\n") || strings.Contains(string(out), "skipped") {
		t.Fatalf("python3 -m unittest did not run every test:\n%s", out)
	}
	t.Logf("%s", out)

	// What the Python side did is on the ledger: the caller paid for its
	// executions (startMarketplace checks the ledgers at the end).
	w, err := client.New(d.URL, key).Wallet(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if got := w.Balances[crtx.Devnet].Available; got >= 5*crtx.MicroPerUSDC || got <= 0 {
		t.Errorf("the caller's devnet balance is %s USDC after the Python tests' executions", got)
	}
}

// The SDK installs with pip from the folder, with and without build
// isolation, offline, on every Python 3.11 here with pip (pyenv's stock
// 3.11 has setuptools 65 and no wheel, on which a setuptools build failed
// with "invalid command 'bdist_wheel'"), and imports from where it went.
func TestPythonSDKInstalls(t *testing.T) {
	var pythons []string
	for _, p := range []string{"/usr/bin/python3", "python3"} {
		path, err := exec.LookPath(p)
		if err == nil && exec.Command(path, "-m", "pip", "--version").Run() == nil && !slices.Contains(pythons, path) {
			pythons = append(pythons, path)
		}
	}
	if len(pythons) == 0 {
		if os.Getenv("CI") != "" {
			t.Fatal("python3 with pip is required in CI")
		}
		t.Skip("no python3 with pip")
	}
	src, err := filepath.Abs("python")
	if err != nil {
		t.Fatal(err)
	}
	for _, py := range pythons {
		for _, isolation := range [][]string{{"--no-build-isolation"}, nil} {
			target := t.TempDir()
			// No index: the install must need nothing from the network.
			args := append([]string{"-m", "pip", "install", "--no-index", "--no-deps", "--target", target}, isolation...)
			cmd := exec.Command(py, append(args, src)...)
			cmd.Env = append(os.Environ(), "PIP_DISABLE_PIP_VERSION_CHECK=1", "PIP_BREAK_SYSTEM_PACKAGES=1")
			if out, err := cmd.CombinedOutput(); err != nil {
				t.Fatalf("%s %s: %v\n%s", py, strings.Join(args, " "), err, out)
			}
			imp := exec.Command(py, "-c", "import crtx, crtx.creator, crtx.client; print(crtx.__file__)")
			imp.Dir, imp.Env = t.TempDir(), append(os.Environ(), "PYTHONPATH="+target, "PYTHONDONTWRITEBYTECODE=1")
			out, err := imp.CombinedOutput()
			if err != nil || !strings.HasPrefix(strings.TrimSpace(string(out)), target) {
				t.Errorf("%s, installed %v: import: %v %s", py, isolation, err, out)
			}
		}
	}
	// Editable (pip install -e), in a virtual environment: crtx comes from
	// the checkout, and the SDK's tests and examples folders are no
	// importable packages.
	venv := filepath.Join(t.TempDir(), "venv")
	if out, err := exec.Command(pythons[0], "-m", "venv", "--system-site-packages", venv).CombinedOutput(); err != nil {
		t.Fatalf("venv: %v\n%s", err, out)
	}
	vpy := filepath.Join(venv, "bin", "python")
	pip := exec.Command(vpy, "-m", "pip", "install", "--no-index", "--no-deps", "-e", src)
	pip.Env = append(os.Environ(), "PIP_DISABLE_PIP_VERSION_CHECK=1")
	if out, err := pip.CombinedOutput(); err != nil {
		t.Fatalf("pip install -e: %v\n%s", err, out)
	}
	imp := exec.Command(vpy, "-c", "import crtx, importlib.util as u; print(crtx.__file__, u.find_spec('tests') is None, u.find_spec('examples') is None)")
	imp.Dir, imp.Env = t.TempDir(), append(os.Environ(), "PYTHONDONTWRITEBYTECODE=1")
	out, err := imp.CombinedOutput()
	if err != nil || !strings.HasSuffix(strings.TrimSpace(string(out)), "crtx/__init__.py True True") {
		t.Errorf("editable install: %v %s", err, out)
	}
}
