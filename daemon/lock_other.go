//go:build !unix

package daemon

// lockData takes no lock where flock is missing: one crtxd per folder is
// the operator's to keep, and exclusive is false.
func lockData(string) (release func(), exclusive bool, err error) { return func() {}, false, nil }
