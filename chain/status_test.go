package chain

import (
	"context"
	"testing"
	"time"

	"github.com/crtx-market/crtx"
)

// awaitFinalized polls Status until the signature is finalized.
func awaitFinalized(t *testing.T, c *Client, sig string) crtx.ChainStatus {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), 30*time.Second)
	defer cancel()
	for {
		st, err := c.Status(ctx, sig)
		if err != nil {
			t.Fatal(err)
		}
		if st.Err != "" {
			t.Fatalf("%s failed: %s", sig, st.Err)
		}
		if st.Finalized {
			return st
		}
		select {
		case <-ctx.Done():
			t.Fatalf("%s not finalized: %+v", sig, st)
		case <-time.After(50 * time.Millisecond):
		}
	}
}
