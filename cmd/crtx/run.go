package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/url"
	"os"
	"strings"
	"time"

	"github.com/crtx-market/crtx"
	"github.com/crtx-market/crtx/api"
	"github.com/crtx-market/crtx/client"
)

// params collects --param k=v flags; values that parse as JSON are taken
// as JSON (numbers, booleans, objects), the rest as strings.
type params map[string]any

func (p params) String() string { return "" }

func (p params) Set(kv string) error {
	k, v, ok := strings.Cut(kv, "=")
	if !ok || k == "" {
		return errors.New("use --param key=value")
	}
	var j any
	if err := json.Unmarshal([]byte(v), &j); err == nil {
		p[k] = j
	} else {
		p[k] = v
	}
	return nil
}

func envOf(s string) crtx.Environment { return crtx.Environment(s) }

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
		spin := `⠋⠙⠹⠸⠼⠴⠦⠧⠇⠏`
		t := time.NewTicker(100 * time.Millisecond)
		defer t.Stop()
		for i := 0; ; i++ {
			r := []rune(spin)[i%10]
			fmt.Fprintf(c.errOut, "\r%c %s %.1fs ", r, label(), time.Since(start).Seconds())
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

func (c *cli) run(ctx context.Context, args []string) error {
	fs := c.flags("run")
	ps := params{}
	fs.Var(ps, "param", "a parameter key=value (repeatable)")
	file := fs.String("params-file", "", "a JSON file of parameters")
	async := fs.Bool("async", false, "return at once and follow the execution")
	timeout := fs.Int("timeout", 0, "seconds, at most the agent's")
	maxCost := fs.String("max-cost", "", "refuse if the price is above this, in USDC")
	idem := fs.String("idempotency-key", "", "reuse to make a retry answer the first response")
	pos, err := c.positional(fs, args, 2)
	if err != nil {
		return err
	}
	cl, err := c.key()
	if err != nil {
		return err
	}
	p := crtx.ExecuteParams{Task: pos[1], Async: *async}
	if *file != "" {
		b, err := os.ReadFile(*file)
		if err != nil {
			return err
		}
		var fromFile map[string]any
		if err := json.Unmarshal(b, &fromFile); err != nil {
			return fmt.Errorf("--params-file: %w", err)
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
	if *timeout > 0 {
		p.TimeoutSeconds = timeout
	}
	if *maxCost != "" {
		v, err := crtx.ParseUSDC(*maxCost)
		if err != nil {
			return fmt.Errorf("--max-cost: %w", err)
		}
		p.MaxCost = &v
	}
	label := "running " + pos[0]
	stop := c.status(func() string { return label })
	rec, err := cl.Execute(ctx, pos[0], p, client.ExecuteOptions{IdempotencyKey: *idem, Retries: 3})
	if err == nil && *async {
		label = "execution " + rec.ExecutionID + " pending"
		rec, err = c.follow(ctx, cl, rec.ExecutionID, func(s crtx.ExecStatus) { label = "execution " + rec.ExecutionID + " " + string(s) })
	}
	stop()
	if err != nil {
		return err
	}
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
	if !c.json {
		fmt.Fprintf(c.errOut, "%s %s · %s USDC · %d ms · %s\n", rec.ExecutionID, rec.Status, rec.Cost, deref(rec.ExecutionTimeMS), rec.OnChainRecord)
	}
	return nil
}

func deref(p *int64) int64 {
	if p == nil {
		return 0
	}
	return *p
}

// follow polls an execution until it is final, telling each status.
func (c *cli) follow(ctx context.Context, cl *client.Client, id string, seen func(crtx.ExecStatus)) (api.ExecutionRecord, error) {
	for {
		rec, err := cl.Execution(ctx, id)
		if err != nil || rec.Status.Final() {
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

func (c *cli) executionsList(ctx context.Context, args []string) error {
	fs := c.flags("executions list")
	q := url.Values{}
	for _, f := range []string{"status", "agent", "from", "to", "limit", "offset"} {
		name := f
		if f == "agent" {
			name = "agent_id"
		}
		fs.Func(f, "the "+name+" filter", func(v string) error { q.Set(name, v); return nil })
	}
	if _, err := c.positional(fs, args, 0); err != nil {
		return err
	}
	cl, err := c.key()
	if err != nil {
		return err
	}
	page, err := cl.Executions(ctx, q)
	if err != nil {
		return err
	}
	var b strings.Builder
	for _, e := range page.Executions {
		fmt.Fprintf(&b, "%s  %-9s %10s USDC  %s  %s\n", e.ExecutionID, e.Status, e.Cost, e.InitiatedAt.Format(time.RFC3339), e.AgentName)
	}
	fmt.Fprintf(&b, "%d of %d executions\n", len(page.Executions), page.Total)
	return c.print(page, "%s", b.String())
}

func (c *cli) executionsShow(ctx context.Context, args []string) error {
	pos, err := c.positional(c.flags("executions show"), args, 1)
	if err != nil {
		return err
	}
	cl, err := c.key()
	if err != nil {
		return err
	}
	rec, err := cl.Execution(ctx, pos[0])
	if err != nil {
		return err
	}
	return c.print(rec, "%s", describe(rec))
}

func describe(r api.ExecutionRecord) string {
	var b strings.Builder
	fmt.Fprintf(&b, "execution  %s\nagent      %s (%s)\nstatus     %s\ncost       %s USDC (creator %s, platform %s)\n",
		r.ExecutionID, r.AgentName, r.AgentID, r.Status, r.Cost, r.CreatorAmount, r.PlatformAmount)
	if r.Error != nil {
		fmt.Fprintf(&b, "error      %s: %s\n", r.Error.Code, r.Error.Message)
	}
	if r.ResultHash != nil {
		fmt.Fprintf(&b, "hash       %s\nresult     %s\n", *r.ResultHash, *r.IPFSURL)
	}
	if r.Dispute != nil {
		fmt.Fprintf(&b, "dispute    %s %s\n", r.Dispute.DisputeID, r.Dispute.Status)
	}
	fmt.Fprintf(&b, "ledger     %s\n", r.OnChainRecord)
	if r.Result != nil {
		fmt.Fprintf(&b, "\n%s\n", *r.Result)
	}
	return b.String()
}

func (c *cli) executionsWatch(ctx context.Context, args []string) error {
	pos, err := c.positional(c.flags("executions watch"), args, 1)
	if err != nil {
		return err
	}
	cl, err := c.key()
	if err != nil {
		return err
	}
	last := crtx.ExecStatus("")
	rec, err := c.follow(ctx, cl, pos[0], func(s crtx.ExecStatus) {
		if s != last && !c.json {
			fmt.Fprintf(c.out, "%s %s\n", time.Now().Format("15:04:05"), s)
			last = s
		}
	})
	if err != nil {
		return err
	}
	if !c.json {
		fmt.Fprintf(c.out, "%s %s\n", time.Now().Format("15:04:05"), rec.Status)
	}
	return c.print(rec, "")
}

func (c *cli) verify(ctx context.Context, args []string) error {
	pos, err := c.positional(c.flags("verify"), args, 1)
	if err != nil {
		return err
	}
	cl, err := c.key()
	if err != nil {
		return err
	}
	rep, err := cl.Verify(ctx, pos[0])
	if err != nil {
		return err
	}
	c.last = nil // the report is this command's own
	text := ""
	for _, ch := range rep.Checks {
		mark := "ok    "
		if !ch.OK {
			mark = "FAILED"
		}
		text += fmt.Sprintf("%s %-18s %s\n", mark, ch.Name, ch.Detail)
	}
	if err := c.print(rep, "%s", text); err != nil {
		return err
	}
	if !rep.OK() {
		return errors.New("verification failed")
	}
	return nil
}

func (c *cli) dispute(ctx context.Context, args []string) error {
	fs := c.flags("dispute")
	reason := fs.String("reason", "", "hash_mismatch, fraud or other")
	desc := fs.String("description", "", "what went wrong")
	evidence := fs.String("evidence-file", "", "a JSON object of evidence")
	pos, err := c.positional(fs, args, 1)
	if err != nil {
		return err
	}
	cl, err := c.key()
	if err != nil {
		return err
	}
	body := map[string]any{"reason": *reason, "description": *desc}
	if *evidence != "" {
		b, err := os.ReadFile(*evidence)
		if err != nil {
			return err
		}
		body["evidence"] = json.RawMessage(b)
	}
	raw, _ := json.Marshal(body)
	var d api.DisputeInfo
	if err := cl.Do(ctx, "POST", "/v1/executions/"+url.PathEscape(pos[0])+"/disputes", "application/json", raw, &d); err != nil {
		return err
	}
	return c.print(d, "dispute %s opened; the creator is to respond by %s\n", d.DisputeID, d.RespondBy.Format(time.RFC3339))
}
