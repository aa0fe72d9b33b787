// Package childproc starts the external programs storbench drives (fio, bpftrace) so
// that none of them outlives its context or storbench itself.
package childproc

import (
	"context"
	"errors"
	"os"
	"os/exec"
	"slices"
	"strings"
	"sync"
	"syscall"
	"time"
)

// secrets are the environment variables that may hold a password: storbench's own
// DSN, those of its users' PostgreSQL and MySQL clients, and those a study names
// (Secret).
var secrets = struct {
	sync.Mutex
	names []string
}{names: []string{"STORBENCH_DSN", "PGPASSWORD", "MYSQL_PWD"}}

// Secret adds the environment variable name to those no child inherits: a study's
// password_env.
func Secret(name string) {
	secrets.Lock()
	defer secrets.Unlock()
	if !slices.Contains(secrets.names, name) {
		secrets.names = append(secrets.names, name)
	}
}

// Environ is this process's environment without the variables that may hold a
// password (secrets): a child often runs as another user (the server's: postgres,
// mysql) or as a server, and its environment is readable as that user in
// /proc/PID/environ. A child that needs a password gets it added (a client tool of a
// managed instance, its PGPASSWORD).
func Environ() []string {
	secrets.Lock()
	defer secrets.Unlock()
	return slices.DeleteFunc(os.Environ(), func(kv string) bool {
		name, _, _ := strings.Cut(kv, "=")
		return slices.Contains(secrets.names, name)
	})
}

// Command is exec.CommandContext for a program run in its own process group, with
// Environ as its environment:
// cancelling ctx sends SIGTERM to the whole group (so whatever the program forked
// stops too, and it can clean up), SIGKILL after grace; and the kernel kills it if
// storbench dies, rather than letting it run on with nobody reading or cleaning up.
func Command(ctx context.Context, grace time.Duration, name string, args ...string) *exec.Cmd {
	cmd := exec.CommandContext(ctx, name, args...)
	cmd.Env = Environ()
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
