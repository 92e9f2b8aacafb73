package gate

import "sync/atomic"

// Secret is a secret the operator can replace while crtxd runs: the admin
// token, read again from its file on SIGHUP, so that every replica takes a
// new one without a restart. A nil Secret, like an empty one, holds none.
type Secret struct{ v atomic.Pointer[string] }

// NewSecret holds s.
func NewSecret(s string) *Secret {
	var x Secret
	x.Set(s)
	return &x
}

// Get is the secret held now; "" for none.
func (s *Secret) Get() string {
	if s == nil {
		return ""
	}
	if p := s.v.Load(); p != nil {
		return *p
	}
	return ""
}

// Set replaces it.
func (s *Secret) Set(v string) { s.v.Store(&v) }
