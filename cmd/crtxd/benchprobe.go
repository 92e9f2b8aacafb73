package main

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/crtx-market/crtx/store/sqldb"
)

// waitUp waits until u answers HTTP, at most ten seconds, or until ctx
// ends.
func waitUp(ctx context.Context, u string) error {
	for i := 0; ; i++ {
		if resp, err := http.Get(u); err == nil {
			resp.Body.Close()
			return nil
		}
		if i > 100 {
			return fmt.Errorf("%s did not answer", u)
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(100 * time.Millisecond):
		}
	}
}

// metrics reads the marketplace's /metrics: each sample's value by its
// name and labels as written (`name{label="value"}`).
func metrics(base string) (map[string]float64, error) {
	resp, err := http.Get(base + "/metrics")
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("GET /metrics: %s", resp.Status)
	}
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		return nil, err
	}
	out := map[string]float64{}
	for _, line := range strings.Split(string(b), "\n") {
		if f := strings.Fields(line); len(f) == 2 && !strings.HasPrefix(line, "#") {
			out[f[0]], _ = strconv.ParseFloat(f[1], 64)
		}
	}
	return out, nil
}

// writerStats reads the group writer's counters from /metrics; none when
// it does not answer.
func writerStats(base string) (w sqldb.WriterStats) {
	m, _ := metrics(base)
	w.Commits, w.Transactions = int64(m["crtx_store_commits_total"]), int64(m["crtx_store_transactions_total"])
	w.Busy = time.Duration(m["crtx_store_writer_busy_seconds_total"] * float64(time.Second))
	return w
}

func freeAddr() string {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return "127.0.0.1:18999"
	}
	defer ln.Close()
	return ln.Addr().String()
}

// settle waits, at most max, until the process uses under a tenth of a
// core, and reports how long that took.
func settle(pid int, max time.Duration) time.Duration {
	start := time.Now()
	for time.Since(start) < max {
		c0 := cpuTime(pid)
		time.Sleep(250 * time.Millisecond)
		if cpuTime(pid)-c0 < 25*time.Millisecond {
			break
		}
	}
	return time.Since(start)
}

// cpuTime reads the user and system CPU time a process has used.
func cpuTime(pid int) time.Duration {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return 0
	}
	// Fields after the command name, which is in parentheses and may hold spaces.
	f := strings.Fields(string(b[bytes.LastIndexByte(b, ')')+1:]))
	if len(f) < 13 {
		return 0
	}
	utime, _ := strconv.ParseInt(f[11], 10, 64)
	stime, _ := strconv.ParseInt(f[12], 10, 64)
	return time.Duration(utime+stime) * time.Second / 100 // USER_HZ
}

// peakRSS reads VmHWM, the resident set's high-water mark, of a process.
func peakRSS(pid int) float64 {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return 0
	}
	for _, line := range strings.Split(string(b), "\n") {
		if f := strings.Fields(line); len(f) >= 2 && f[0] == "VmHWM:" {
			kb, _ := strconv.ParseFloat(f[1], 64)
			return kb / 1024
		}
	}
	return 0
}
