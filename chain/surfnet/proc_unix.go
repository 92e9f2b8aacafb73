//go:build unix

package surfnet

import (
	"os/exec"
	"syscall"
)

// detach puts the network in a process group of its own: a terminal's
// Ctrl-C reaches the process that started it, which stops it last, after
// what runs on it, and not the network first.
func detach(cmd *exec.Cmd) { cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true} }
