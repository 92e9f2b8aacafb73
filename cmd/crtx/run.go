package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/crtx-market/crtx"
	"github.com/crtx-market/crtx/api"
	"github.com/crtx-market/crtx/client"
	"github.com/crtx-market/crtx/cmd/internal/cmdline"
)

// maxStdinTask bounds a task read from standard input: the marketplace
// refuses larger bodies anyway, and a mistaken pipe should not fill memory.
const maxStdinTask = 1 << 20

// setParam adds a --param key=value; values that parse as JSON are taken
// as JSON (numbers, booleans, objects), the rest as strings.
func setParam(ps map[string]any, kv string) error {
	k, v, ok := strings.Cut(kv, "=")
	if !ok || k == "" {
		return errors.New("use --param key=value")
	}
	var j any
	if err := json.Unmarshal([]byte(v), &j); err == nil {
		ps[k] = j
	} else {
		ps[k] = v
	}
	return nil
}

// executeParams builds the body of an execution from the command line.
func executeParams(task string, ps map[string]any, file, maxCost, maxPrice string, timeout int, async bool) (crtx.ExecuteParams, error) {
	p := crtx.ExecuteParams{Task: task, Async: async}
	if file != "" {
		b, err := os.ReadFile(file)
		if err != nil {
			return p, err
		}
		var fromFile map[string]any
		if err := json.Unmarshal(b, &fromFile); err != nil {
			return p, fmt.Errorf("--params-file: %w", err)
		}
		for k, v := range fromFile {
			if _, set := ps[k]; !set {
				ps[k] = v
			}
		}
	}
	if len(ps) > 0 {
		p.Parameters, _ = json.Marshal(ps)
	}
	if timeout > 0 {
		p.TimeoutSeconds = &timeout
	}
	for _, m := range []struct {
		flag, v string
		to      **crtx.USDC
	}{{"--max-cost", maxCost, &p.MaxCost}, {"--max-price", maxPrice, &p.MaxPrice}} {
		if m.v == "" {
			continue
		}
		v, err := crtx.ParseUSDC(m.v)
		if err != nil {
			return p, fmt.Errorf("%s: %w", m.flag, err)
		}
		*m.to = &v
	}
	return p, nil
}

func (c *cli) runCmd() *cobra.Command {
	ps := map[string]any{}
	var file, maxCost, maxPrice, idem string
	var async, private, x402, stream bool
	var rpc string
	var timeout int
	cmd := &cobra.Command{
		Use:   "run AGENT_ID TASK",
		Short: "Run an agent, paying from your wallet, and print its result",
		Long: `run executes an agent with your API key and prints the result on stdout (the
execution's id, cost and ledger record go to stderr). TASK "-" reads the task from
standard input.

The price is held in escrow while the agent works and paid to its creator only when
the result's hash and signature check out; a failure is refunded. With --async the
call returns at once and crtx follows the execution until it ends; Ctrl-C stops
following, not the execution, and prints how to pick it up again. A result is public by
its content id unless --private: then only you read it, and crtx verify checks the
copy you hold.

With --x402 the call pays for itself from a Solana wallet (--keypair) on the chain
--rpc serves: the marketplace answers what the call costs (x402's PAYMENT-REQUIRED),
crtx signs the USDC transfer, and the marketplace sends it only once the agent's
result checks out (a failed call costs nothing; a long or --async one is paid first
and refunded on the chain if it fails). Nothing else is needed: no account, no key.

With --stream the result is printed as the agent writes it (docs/streaming.md); it is
charged, as any call, only once the whole checks out. With --x402 too, it is paid before
its first words (and refunded on the chain if it fails).`,
		Example: `  crtx run AGENT_ID "The quick brown fox jumps over the lazy dog." --param top=3
  cat report.txt | crtx run AGENT_ID - --max-cost 0.10
  crtx run AGENT_ID "a long job" --async
  crtx run AGENT_ID "Write a haiku about escrow" --stream
  crtx run AGENT_ID "pay per call" --x402 --keypair payer.json --rpc https://api.devnet.solana.com`,
		Args: cmdline.Args("AGENT_ID", "TASK"),
		RunE: func(cmd *cobra.Command, a []string) error {
			ctx := cmd.Context()
			task := a[1]
			if task == "-" {
				b, err := io.ReadAll(io.LimitReader(cmd.InOrStdin(), maxStdinTask+1))
				if err != nil {
					return fmt.Errorf("reading the task from stdin: %w", err)
				}
				if len(b) > maxStdinTask {
					return fmt.Errorf("the task on stdin is over %d bytes", maxStdinTask)
				}
				task = string(b)
			}
			p, err := executeParams(task, ps, file, maxCost, maxPrice, timeout, async)
			if err != nil {
				return err
			}
			p.Private = private
			if stream && async {
				return errors.New("--stream and --async: a streamed call is synchronous")
			}
			if x402 {
				return c.executeX402(ctx, a[0], p, idem, rpc, stream)
			}
			cl, err := c.key()
			if err != nil {
				return err
			}
			if stream {
				return c.printStream(ctx, a[0], func(delta func(string)) (api.ExecutionRecord, error) {
					return cl.ExecuteStream(ctx, a[0], p, client.ExecuteOptions{IdempotencyKey: idem}, delta)
				})
			}
			return c.execute(ctx, cl, a[0], p, idem)
		},
	}
	f := cmd.Flags()
	f.Func("param", "a parameter key=value, repeatable; values that parse as JSON are JSON (n=3, ok=true)", func(kv string) error { return setParam(ps, kv) })
	f.StringVar(&file, "params-file", "", "a JSON object of parameters (--param wins over it)")
	f.BoolVar(&async, "async", false, "return at once and follow the execution until it ends")
	f.BoolVar(&stream, "stream", false, "print the result as the agent writes it")
	f.BoolVar(&private, "private", false, "keep the result to yourself: not published at /ipfs/{cid}, and its CID not on the ledger (its hash is)")
	f.IntVar(&timeout, "timeout", 0, "seconds the agent may take, at most its own timeout (default: the agent's)")
	f.StringVar(&maxCost, "max-cost", "", "refuse to run if the price is above this, in USDC")
	f.StringVar(&maxPrice, "max-price", "", "the most this call may cost, in USDC: an agent priced per token holds and charges at most this")
	f.StringVar(&idem, "idempotency-key", "", "a key of your own: a retry with it answers the first response and never charges twice")
	f.BoolVar(&x402, "x402", false, "pay this call alone with x402 from the wallet key file (--keypair), through --rpc: no account, no API key; a call that fails costs nothing")
	f.StringVar(&rpc, "rpc", os.Getenv("CRTX_SOLANA_RPC"), "Solana JSON-RPC URL of the chain --x402 pays on (CRTX_SOLANA_RPC)")
	return cmd
}

// execute runs an execution, with a live status line on a terminal, and
// prints its result.
func (c *cli) execute(ctx context.Context, cl *client.Client, agent string, p crtx.ExecuteParams, idem string) error {
	label := "running " + agent
	stop := c.status(func() string { return label })
	rec, err := cl.Execute(ctx, agent, p, client.ExecuteOptions{IdempotencyKey: idem, Retries: 3})
	if err == nil && p.Async {
		label = "execution " + rec.ExecutionID + " pending"
		rec, err = c.follow(ctx, cl, rec.ExecutionID, func(s crtx.ExecStatus) { label = "execution " + rec.ExecutionID + " " + string(s) })
	}
	stop()
	if err != nil {
		if ctx.Err() != nil {
			c.interrupted(rec.ExecutionID, agent)
		}
		return err
	}
	return c.printRecord(rec)
}

// printRecord prints an execution's result, or its failure as the
// command's error.
func (c *cli) printRecord(rec api.ExecutionRecord) error {
	if rec.Status == crtx.ExecFailed && rec.Error != nil {
		c.print(rec, "")
		return &client.Error{Code: rec.Error.Code, Message: rec.Error.Message, ExecutionID: &rec.ExecutionID}
	}
	result := ""
	if rec.Result != nil {
		result = *rec.Result
	}
	if err := c.print(rec, "%s\n", result); err != nil {
		return err
	}
	c.trailer(rec)
	return nil
}

// trailer prints what a call cost and where its record is, on stderr.
func (c *cli) trailer(rec api.ExecutionRecord) {
	if c.json {
		return
	}
	cost := rec.Cost.String() + " USDC"
	if mv := rec.Metered; mv != nil && mv.TokensUsed != nil {
		// What the call charged of what it held, from the tokens signed.
		cost += fmt.Sprintf(" (%d tokens; %s held, %s returned)", *mv.TokensUsed, mv.Held, mv.Returned)
	}
	fmt.Fprintf(c.errOut, "%s %s · %s · %d ms · %s\n", rec.ExecutionID, rec.Status, cost, deref(rec.ExecutionTimeMS), rec.OnChainRecord)
}

// printStream runs a streamed execution with call, printing each piece
// as it comes, then the record's trailer.
func (c *cli) printStream(ctx context.Context, agent string, call func(delta func(string)) (api.ExecutionRecord, error)) error {
	shown := false
	rec, err := call(func(text string) {
		if !c.json {
			fmt.Fprint(c.out, text)
			shown = true
		}
	})
	if shown {
		fmt.Fprintln(c.out)
	}
	if rec.ExecutionID == "" {
		// Refused before it began, or cut short.
		if ctx.Err() != nil {
			c.interrupted("", agent)
		}
		return err
	}
	if shown && rec.Status == crtx.ExecCompleted {
		c.trailer(rec)
		return nil
	}
	return c.printRecord(rec)
}

// interrupted tells, after Ctrl-C, that the execution goes on and how to
// pick it up again.
func (c *cli) interrupted(id, agent string) {
	if id == "" {
		fmt.Fprintf(c.errOut, "stopped waiting; if the marketplace accepted the call it still runs: crtx executions list --agent %s\n", agent)
		return
	}
	fmt.Fprintf(c.errOut, "stopped following %s; it still runs. Pick it up with: crtx executions watch %s\n", id, id)
}

// deref is *p, or the zero value when p is nil.
func deref[T any](p *T) T {
	var v T
	if p != nil {
		v = *p
	}
	return v
}

// follow polls an execution until it is final, telling each status.
func (c *cli) follow(ctx context.Context, cl *client.Client, id string, seen func(crtx.ExecStatus)) (api.ExecutionRecord, error) {
	for {
		rec, err := cl.Execution(ctx, id)
		if err != nil || rec.Status.Final() {
			rec.ExecutionID = id
			return rec, err
		}
		seen(rec.Status)
		select {
		case <-ctx.Done():
			return rec, ctx.Err()
		case <-time.After(200 * time.Millisecond):
		}
	}
}

// terminal reports whether the error stream is a terminal worth a live line.
func (c *cli) terminal() bool {
	f, ok := c.errOut.(*os.File)
	if !ok {
		return false
	}
	st, err := f.Stat()
	return err == nil && st.Mode()&os.ModeCharDevice != 0
}

// status shows a live status line on a terminal until stop is called.
func (c *cli) status(label func() string) (stop func()) {
	if !c.terminal() {
		return func() {}
	}
	done := make(chan struct{})
	finished := make(chan struct{})
	go func() {
		defer close(finished)
		start := time.Now()
		spin := []rune(`⠋⠙⠹⠸⠼⠴⠦⠧⠇⠏`)
		t := time.NewTicker(100 * time.Millisecond)
		defer t.Stop()
		for i := 0; ; i++ {
			fmt.Fprintf(c.errOut, "\r%c %s %.1fs ", spin[i%len(spin)], label(), time.Since(start).Seconds())
			select {
			case <-done:
				fmt.Fprint(c.errOut, "\r\033[K")
				return
			case <-t.C:
			}
		}
	}()
	return func() { close(done); <-finished }
}
