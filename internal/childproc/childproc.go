// Package childproc starts the external programs storbench drives (fio, bpftrace) so
// that none of them outlives its context or storbench itself.
package childproc

import (
	"context"
	"errors"
	"os"
	"os/exec"
	"syscall"
	"time"
)

// Command is exec.CommandContext for a program run in its own process group:
// cancelling ctx sends SIGTERM to the whole group (so whatever the program forked
// stops too, and it can clean up), SIGKILL after grace; and the kernel kills it if
// storbench dies, rather than letting it run on with nobody reading or cleaning up.
func Command(ctx context.Context, grace time.Duration, name string, args ...string) *exec.Cmd {
	cmd := exec.CommandContext(ctx, name, args...)
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
	cmd.Cancel = func() error {
		err := syscall.Kill(-cmd.Process.Pid, syscall.SIGTERM)
		if errors.Is(err, syscall.ESRCH) {
			return os.ErrProcessDone
		}
		return err
	}
	cmd.WaitDelay = grace
	return cmd
}
