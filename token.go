package crtx

import (
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
)

const base62 = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"

// RandomBase62 returns n characters drawn uniformly from a-z A-Z 0-9 with
// crypto/rand.
func RandomBase62(n int) string {
	out := make([]byte, 0, n)
	var buf [64]byte
	for len(out) < n {
		rand.Read(buf[:]) // never returns an error (crypto/rand, Go ≥ 1.24)
		for _, b := range buf {
			// 62*4 = 248: reject the top bytes so every character is equally likely.
			if b < 248 && len(out) < n {
				out = append(out, base62[b%62])
			}
		}
	}
	return string(out)
}

func isBase62(s string) bool {
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !('0' <= c && c <= '9' || 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z') {
			return false
		}
	}
	return true
}

// HashSecret is how API keys and session tokens are stored: a hex SHA-256.
// The secrets carry 190 bits of randomness, so a plain hash is enough; a
// lookup by hash is also a constant-time comparison of the secret.
func HashSecret(secret string) string {
	sum := sha256.Sum256([]byte(secret))
	return hex.EncodeToString(sum[:])
}
