//go:build unix

package daemon

import "syscall"

// openFileLimit is the process's limit on open files: each call in flight
// holds two (the caller's connection and the one to the creator). Go's
// runtime has already raised the soft limit to one below the hard one at
// start (syscall's init).
func openFileLimit() (uint64, bool) {
	var l syscall.Rlimit
	if err := syscall.Getrlimit(syscall.RLIMIT_NOFILE, &l); err != nil {
		return 0, false
	}
	return l.Cur, true
}
