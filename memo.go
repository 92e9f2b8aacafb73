package crtx

import "sync"

// Memo holds one value derived from what carries it, made at most once and
// shared by every copy of its carrier: a value the marketplace keeps and
// serves many times is derived (mapped, encoded) once. A nil Memo keeps
// nothing.
type Memo struct {
	once sync.Once
	v    any
}

// Do returns the value, made by make on the first call.
func (m *Memo) Do(make func() any) any {
	if m == nil {
		return make()
	}
	m.once.Do(func() { m.v = make() })
	return m.v
}
