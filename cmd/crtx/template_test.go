package main

import (
	"bytes"
	"context"
	"encoding/json"
	"strings"
	"testing"

	crtxpkg "github.com/crtx-market/crtx"
	"github.com/crtx-market/crtx/market"
)

// crtx creator template prints a listing that create takes as it is, once
// --key fills in the signing key: every required field, nothing unknown.
func TestCreatorTemplate(t *testing.T) {
	var out, errOut bytes.Buffer
	if code := run(context.Background(), []string{"creator", "template"}, strings.NewReader(""), &out, &errOut); code != 0 {
		t.Fatalf("exit %d: %s", code, errOut.String())
	}
	var p crtxpkg.ListingParams
	dec := json.NewDecoder(&out)
	dec.DisallowUnknownFields()
	if err := dec.Decode(&p); err != nil {
		t.Fatal(err)
	}
	if p.SigningPublicKey != nil {
		t.Errorf("the template names a signing key: %s", *p.SigningPublicKey)
	}
	key := "9xQeWvG816bUx9EPjHmaT23yvVM2ZWbrrpZb9PusVFin"
	p.SigningPublicKey = &key
	if err := market.CheckListing(p, true); err != nil {
		t.Errorf("the template with a key: %v", err)
	}
}
