package keyfile

import (
	"crypto/ed25519"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestRoundTripAndMode(t *testing.T) {
	path := filepath.Join(t.TempDir(), "sub", "id.json")
	k, err := LoadOrCreate(path)
	if err != nil {
		t.Fatal(err)
	}
	st, err := os.Stat(path)
	if err != nil || st.Mode().Perm() != 0o600 {
		t.Fatalf("mode = %v, %v", st.Mode(), err)
	}
	again, err := LoadOrCreate(path)
	if err != nil || !again.Equal(k) {
		t.Fatalf("second load gave another key: %v", err)
	}
	if err := Write(path, k); err == nil {
		t.Error("Write replaced an existing key file")
	}
	b, _ := os.ReadFile(path)
	if !strings.HasPrefix(string(b), "[") || strings.Count(string(b), ",") != 63 {
		t.Errorf("not a 64-byte JSON array: %s", b)
	}
}

func TestLoadRefuses(t *testing.T) {
	dir := t.TempDir()
	_, k, _ := ed25519.GenerateKey(nil)
	mismatched := append([]byte{}, k...)
	mismatched[40] ^= 1
	for name, content := range map[string]string{
		"short":    "[1,2,3]",
		"not json": "hello",
		"range":    "[" + strings.Repeat("300,", 63) + "300]",
	} {
		p := filepath.Join(dir, name)
		os.WriteFile(p, []byte(content), 0o600)
		if _, err := Load(p); err == nil {
			t.Errorf("%s: loaded", name)
		}
	}
	p := filepath.Join(dir, "mismatch")
	if err := Write(p, mismatched); err != nil {
		t.Fatal(err)
	}
	if _, err := Load(p); err == nil {
		t.Error("a key whose public half does not match its seed loaded")
	}
}
