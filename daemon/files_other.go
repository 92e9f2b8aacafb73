//go:build !unix

package daemon

// openFileLimit is unknown where there is no getrlimit.
func openFileLimit() (uint64, bool) { return 0, false }
