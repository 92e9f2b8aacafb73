// Package surfnet runs a real local Solana network: Surfnet, from the npm
// package @solana/surfpool-<platform>, started through node as a child
// process that stops with this one. crtxd dev --local-chain, crtxd bench's
// x402 scenario and the chain tests run on it. Its helpers fund wallets and
// create and mint tokens with real transactions built with solana-go, never
// with the network's cheat codes, so what is read back is what the programs
// on the chain did.
package surfnet

import (
	"bufio"
	"context"
	_ "embed"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"sync"
	"time"

	"github.com/gagliardetto/solana-go/rpc"
)

// Env names a node_modules folder that holds the Surfnet package, as
// .ci/run installs it; without it, Package installs the package into the
// user's cache.
const Env = "CRTX_SURFPOOL"

// Version is the Surfnet package's version Package installs.
const Version = "1.5.0"

//go:embed surfnet.js
var script string

// ErrUnavailable is returned when Surfnet cannot run here: no node, no npm
// to install it, or a platform without the package.
var ErrUnavailable = errors.New("surfnet: cannot run a local Solana network here")

// PackageName is the npm package of Surfnet for this platform.
func PackageName() (string, error) {
	platform := map[string]string{"linux/amd64": "linux-x64-gnu", "darwin/arm64": "darwin-arm64", "darwin/amd64": "darwin-x64"}[runtime.GOOS+"/"+runtime.GOARCH]
	if platform == "" {
		return "", fmt.Errorf("%w: Surfnet is published for Linux x64, macOS arm64 and macOS x64, not %s/%s", ErrUnavailable, runtime.GOOS, runtime.GOARCH)
	}
	return "@solana/surfpool-" + platform, nil
}

// Package returns the node_modules folder that holds Surfnet's package:
// $CRTX_SURFPOOL when set, else a folder of the user's cache, where npm
// installs it the first time (progress to log).
func Package(ctx context.Context, log io.Writer) (string, error) {
	name, err := PackageName()
	if err != nil {
		return "", err
	}
	if _, err := exec.LookPath("node"); err != nil {
		return "", fmt.Errorf("%w: Surfnet runs on Node.js 18 or later, and node is not on the PATH: install Node.js (https://nodejs.org), then run this again", ErrUnavailable)
	}
	if dir := os.Getenv(Env); dir != "" {
		if _, err := os.Stat(filepath.Join(dir, name)); err != nil {
			return "", fmt.Errorf("%w: %s=%s holds no %s (npm install --prefix DIR %s@%s makes DIR/node_modules one)", ErrUnavailable, Env, dir, name, name, Version)
		}
		return dir, nil
	}
	cache, err := os.UserCacheDir()
	if err != nil {
		return "", fmt.Errorf("%w: no cache folder to install Surfnet into (%w): set %s to a node_modules folder holding %s", ErrUnavailable, err, Env, name)
	}
	prefix := filepath.Join(cache, "crtx", "surfpool-"+Version)
	modules := filepath.Join(prefix, "node_modules")
	if _, err := os.Stat(filepath.Join(modules, name, "package.json")); err == nil {
		return modules, nil
	}
	if _, err := exec.LookPath("npm"); err != nil {
		return "", fmt.Errorf("%w: installing Surfnet needs npm, which is not on the PATH: install Node.js with npm (https://nodejs.org), or set %s to a node_modules folder holding %s", ErrUnavailable, Env, name)
	}
	fmt.Fprintf(log, "installing %s %s (a local Solana network, about 45 MB) into %s…\n", name, Version, prefix)
	// Installed beside its place and renamed into it: an install cut
	// short, or two at once, never leaves a half package where the next
	// run would take it for whole.
	if err := os.MkdirAll(filepath.Dir(prefix), 0o755); err != nil {
		return "", err
	}
	tmp, err := os.MkdirTemp(filepath.Dir(prefix), ".installing-")
	if err != nil {
		return "", err
	}
	defer os.RemoveAll(tmp)
	npm := exec.CommandContext(ctx, "npm", "install", "--prefix", tmp, "--no-audit", "--no-fund", "--silent", name+"@"+Version)
	npm.Stdout, npm.Stderr = log, log
	if err := npm.Run(); err != nil {
		if ctx.Err() != nil {
			return "", ctx.Err()
		}
		return "", fmt.Errorf("%w: npm install %s@%s: %w", ErrUnavailable, name, Version, err)
	}
	if err := os.Rename(tmp, prefix); err != nil {
		// Another run installed it first.
		if _, statErr := os.Stat(filepath.Join(modules, name, "package.json")); statErr == nil {
			return modules, nil
		}
		return "", err
	}
	return modules, nil
}

// Net is a running Surfnet.
type Net struct {
	// RPC is its JSON-RPC URL.
	RPC string
	// Await is the status the helpers wait for a transaction to reach:
	// finalized unless set (confirmed comes about one slot after sending,
	// finalized some 32 slots later).
	Await  rpc.ConfirmationStatusType
	slot   time.Duration
	client *rpc.Client
	stop   func()
}

// Start runs a Surfnet of slots of slot from the package in modules (see
// Package) until Stop, or until this process ends, however it ends. The
// network's own messages go to log.
func Start(ctx context.Context, modules string, slot time.Duration, log io.Writer) (*Net, error) {
	name, err := PackageName()
	if err != nil {
		return nil, err
	}
	cmd := exec.Command("node", "-e", script)
	cmd.Env = append(os.Environ(), Env+"="+modules, "CRTX_SURFPOOL_PACKAGE="+name,
		"CRTX_SURFNET_SLOT_MS="+strconv.FormatInt(max(slot.Milliseconds(), 1), 10))
	cmd.Stderr = log
	detach(cmd)
	// The script stops the network when its input closes: when this
	// process closes it, or dies.
	stdin, err := cmd.StdinPipe()
	if err != nil {
		return nil, err
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		return nil, err
	}
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("%w: starting node: %w", ErrUnavailable, err)
	}
	exited := make(chan struct{})
	go func() {
		_ = cmd.Wait()
		close(exited)
	}()
	stop := sync.OnceFunc(func() {
		_ = stdin.Close()
		select {
		case <-exited:
		case <-time.After(10 * time.Second):
			_ = cmd.Process.Kill()
			<-exited
		}
	})
	line := make(chan string, 1)
	go func() {
		s := bufio.NewScanner(stdout)
		if s.Scan() {
			line <- s.Text()
		}
		close(line)
		_, _ = io.Copy(io.Discard, stdout)
	}()
	var started struct {
		RPCURL string `json:"rpcUrl"`
	}
	select {
	case l, ok := <-line:
		if !ok {
			stop()
			return nil, fmt.Errorf("%w: Surfnet exited before printing its RPC URL", ErrUnavailable)
		}
		if err := json.Unmarshal([]byte(l), &started); err != nil || started.RPCURL == "" {
			stop()
			return nil, fmt.Errorf("%w: Surfnet printed %q, not its RPC URL", ErrUnavailable, l)
		}
	case <-time.After(time.Minute):
		stop()
		return nil, fmt.Errorf("%w: Surfnet did not start within a minute", ErrUnavailable)
	case <-ctx.Done():
		stop()
		return nil, ctx.Err()
	}
	n := &Net{RPC: started.RPCURL, Await: rpc.ConfirmationStatusFinalized, slot: slot, client: rpc.New(started.RPCURL), stop: stop}
	// A network whose first block is not yet produced has no blockhash to
	// sign with. (Its first finalized block comes some 32 slots later.)
	if err := n.waitFor(ctx, "the first block", func(ctx context.Context) (bool, error) {
		h, err := n.client.GetBlockHeight(ctx, rpc.CommitmentConfirmed)
		return h > 0, err
	}); err != nil {
		stop()
		return nil, err
	}
	return n, nil
}

// Stop stops the network and waits until it has; its state is gone.
func (n *Net) Stop() { n.stop() }

// waitFor polls done until it reports true, for at most 30 s, or for
// finality's 32 slots twice over on slower slots.
func (n *Net) waitFor(ctx context.Context, what string, done func(context.Context) (bool, error)) error {
	ctx, cancel := context.WithTimeout(ctx, max(30*time.Second, 64*n.slot))
	defer cancel()
	var last error
	for {
		ok, err := done(ctx)
		if ok {
			return nil
		}
		if err != nil {
			last = err
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("waiting for %s: %w (last error: %v)", what, ctx.Err(), last)
		case <-time.After(50 * time.Millisecond):
		}
	}
}
