// Package localserver holds what starting a database server on this machine needs,
// whatever the engine: the system user it runs as when storbench is root, directories
// that user can reach, and a free loopback port.
package localserver

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net"
	"os"
	"os/user"
	"path/filepath"
	"strconv"
	"sync"
	"syscall"
	"time"

	"github.com/storbench/storbench/internal/childproc"
)

// ServiceUser is the credential of the system user a server runs as (postgres,
// mysql): servers refuse to run as root, and their packages create these users.
func ServiceUser(name string) (*syscall.Credential, error) {
	u, err := user.Lookup(name)
	if err != nil {
		return nil, fmt.Errorf("running as root needs a %s user to run the server: %w", name, err)
	}
	uid, _ := strconv.Atoi(u.Uid)
	gid, _ := strconv.Atoi(u.Gid)
	return &syscall.Credential{Uid: uint32(uid), Gid: uint32(gid)}, nil
}

// PrepareDir creates dir (0700) owned by cred's user and makes its parents
// traversable by it (a test's temp dir is 0700 and owned by root); parents the user
// owns already are left as they are. A nil cred: the server runs as this process.
func PrepareDir(dir string, cred *syscall.Credential) error {
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return err
	}
	if cred == nil {
		return nil
	}
	if err := os.Chown(dir, int(cred.Uid), int(cred.Gid)); err != nil {
		return err
	}
	for d := filepath.Dir(dir); d != "/" && d != "."; d = filepath.Dir(d) {
		st, err := os.Stat(d)
		if err != nil {
			return err
		}
		if st.Mode().Perm()&0o001 == 0 && st.Sys().(*syscall.Stat_t).Uid != cred.Uid {
			if err := os.Chmod(d, st.Mode().Perm()|0o011); err != nil {
				return err
			}
		}
	}
	return nil
}

// FreePort returns a TCP port that is free on 127.0.0.1 now.
func FreePort() (int, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}

// Run runs a server's program (initdb, pg_basebackup, mariadb-backup…) as cred's user
// (nil: as this process), with stdin when given, and returns its output; an error
// carries the output. Its own process group stops with ctx, whatever it forked (a
// WAL streamer would otherwise hold the output open), and with storbench.
func Run(ctx context.Context, cred *syscall.Credential, stdin io.Reader, prog string, args ...string) (string, error) {
	cmd := childproc.Command(ctx, 5*time.Second, prog, args...)
	cmd.Dir = "/"
	cmd.Stdin = stdin
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	cmd.SysProcAttr.Credential = cred
	if err := cmd.Run(); err != nil {
		return out.String(), fmt.Errorf("%s: %w", filepath.Base(prog), err)
	}
	return out.String(), nil
}

// SyncBuffer collects a child's output, written by exec's copying goroutine while
// another reads it (a server's early log, a command's progress).
type SyncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *SyncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *SyncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}
