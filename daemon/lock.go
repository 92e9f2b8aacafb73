//go:build unix

package daemon

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
)

// lockData takes the lock that makes one crtxd serve a SQLite folder: two
// would each run a group writer, a sealer and a recovery worker on one
// file. The lock is the kernel's (flock), so it goes with the process,
// however that ends; release drops it.
func lockData(dir string) (release func(), exclusive bool, err error) {
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, false, err
	}
	path := filepath.Join(dir, "crtxd.lock")
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o600)
	if err != nil {
		return nil, false, err
	}
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB); err != nil {
		b, _ := os.ReadFile(path)
		f.Close()
		if errors.Is(err, syscall.EWOULDBLOCK) {
			holder := strings.TrimSpace(string(b))
			return nil, false, fmt.Errorf("another crtxd (pid %s) serves --data %s; stop it, or give this one a folder of its own", holder, dir)
		}
		return nil, false, fmt.Errorf("lock %s: %w", path, err)
	}
	f.Truncate(0)
	f.WriteAt([]byte(strconv.Itoa(os.Getpid())+"\n"), 0)
	return func() { f.Close() }, true, nil
}
