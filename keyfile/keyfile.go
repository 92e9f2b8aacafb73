// Package keyfile reads and writes Ed25519 keys in the Solana CLI's format:
// a JSON array of the 64 bytes of seed and public key, in a file of mode 0600.
package keyfile

import (
	"crypto/ed25519"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
)

// LoadOrCreate reads an Ed25519 key file in the Solana CLI's format (a
// JSON array of the 64 bytes of seed and public key) or, when it does not
// exist yet, creates one with mode 0600.
func LoadOrCreate(path string) (ed25519.PrivateKey, error) {
	key, err := Load(path)
	if !errors.Is(err, fs.ErrNotExist) {
		return key, err
	}
	_, key, err = ed25519.GenerateKey(nil)
	if err != nil {
		return nil, err
	}
	return key, Write(path, key)
}

// Load reads a key file written by Write or by `solana-keygen`.
func Load(path string) (ed25519.PrivateKey, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	var raw []int
	if err := json.Unmarshal(b, &raw); err != nil || len(raw) != ed25519.PrivateKeySize {
		return nil, fmt.Errorf("%s: not a key file (a JSON array of %d bytes)", path, ed25519.PrivateKeySize)
	}
	key := make([]byte, len(raw))
	for i, v := range raw {
		if v < 0 || v > 255 {
			return nil, fmt.Errorf("%s: byte %d is out of range", path, i)
		}
		key[i] = byte(v)
	}
	// The file holds the public half too; make sure it belongs to the seed.
	k := ed25519.NewKeyFromSeed(key[:ed25519.SeedSize])
	if !k.Public().(ed25519.PublicKey).Equal(ed25519.PublicKey(key[ed25519.SeedSize:])) {
		return nil, fmt.Errorf("%s: the public key does not match the seed", path)
	}
	return k, nil
}

// Write writes key in the Solana CLI's format with mode 0600, never
// replacing an existing file.
func Write(path string, key ed25519.PrivateKey) error {
	raw := make([]int, len(key))
	for i, b := range key {
		raw[i] = int(b)
	}
	b, _ := json.Marshal(raw)
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return err
	}
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		return err
	}
	if _, err := f.Write(b); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}
