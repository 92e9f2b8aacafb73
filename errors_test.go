package crtx_test

import (
	"errors"
	"fmt"
	"testing"

	"github.com/crtx-market/crtx"
)

// FieldErrors finds every field at fault in a joined error, also under a
// wrap, in order; errors that name no field are left out.
func TestFieldErrors(t *testing.T) {
	a, b := crtx.InvalidField("name", "is required"), crtx.InvalidField("tags", "is empty")
	joined := errors.Join(a, errors.New("not a field's"), b)
	for _, err := range []error{joined, fmt.Errorf("listing: %w", joined)} {
		got := crtx.FieldErrors(err)
		if len(got) != 2 || got[0] != a || got[1] != b {
			t.Errorf("FieldErrors(%v) = %v", err, got)
		}
	}
	if got := crtx.FieldErrors(crtx.Errorf(crtx.CodeInvalidRequest, "no field")); len(got) != 0 {
		t.Errorf("an error of no field: %v", got)
	}
}
