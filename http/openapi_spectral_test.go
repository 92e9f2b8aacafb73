package http_test

import (
	"context"
	"github.com/crtx-market/crtx/internal/nodetest"
	"os/exec"
	"path/filepath"
	"testing"
	"time"
)

// Spectral, the usual OpenAPI linter, reports nothing on openapi.json with
// its recommended OpenAPI rules (http/testdata/spectral.yaml), hints
// included: every operation described, the contact given, no schema or
// example it finds wrong.
func TestOpenAPISpectral(t *testing.T) {
	dir := nodetest.Modules(t, "CRTX_SPECTRAL", "@stoplight/spectral-cli")
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, "node", filepath.Join(dir, "@stoplight", "spectral-cli", "dist", "index.js"),
		"lint", "--ruleset", filepath.Join("testdata", "spectral.yaml"), "--fail-severity", "hint", "openapi.json")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Errorf("spectral: %v\n%s", err, out)
	}
}
