package main

import (
	"strings"
	"testing"
)

// --param key=value takes any text: it never panics, a key is never empty,
// and an accepted pair is set under the text before the first "=".
func FuzzSetParam(f *testing.F) {
	for _, s := range []string{"lang=en", "n=3", "ok=true", `obj={"a":[1,2]}`, "=x", "novalue", "k=", "k==v", "k=\xff"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, kv string) {
		ps := map[string]any{}
		err := setParam(ps, kv)
		k, _, found := strings.Cut(kv, "=")
		switch {
		case err != nil && found && k != "":
			t.Errorf("%q refused: %v", kv, err)
		case err == nil && (len(ps) != 1 || ps[k] == nil && !strings.HasSuffix(kv, "=null")):
			t.Errorf("%q set %v", kv, ps)
		}
	})
}
