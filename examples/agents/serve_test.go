package agents

import (
	"bytes"
	"context"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// An example agent refuses to start without --marketplace, which would
// serve anyone for free, unless told so with --insecure-accept-unsigned.
func TestCommandWantsTheMarketplace(t *testing.T) {
	var stdout, stderr bytes.Buffer
	key := filepath.Join(t.TempDir(), "key.json")
	code := command(context.Background(), "textstats", "127.0.0.1:0", []string{"--key", key}, &stdout, &stderr, TextStats, TextStatsInput, TextStatsOutput)
	if code != 2 || !strings.Contains(stderr.String(), "--marketplace URL is required") || !strings.Contains(stderr.String(), "--insecure-accept-unsigned") {
		t.Fatalf("without --marketplace: exit %d\n%s", code, &stderr)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
	defer cancel()
	stdout.Reset()
	stderr.Reset()
	code = command(ctx, "textstats", "127.0.0.1:0", []string{"--key", key, "--insecure-accept-unsigned"}, &stdout, &stderr, TextStats, TextStatsInput, TextStatsOutput)
	if code != 0 || !strings.Contains(stdout.String(), "listening at http://127.0.0.1:") || !strings.Contains(stdout.String(), "accepting unsigned requests") {
		t.Fatalf("with --insecure-accept-unsigned: exit %d\n%s%s", code, &stdout, &stderr)
	}
}
