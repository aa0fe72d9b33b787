// Package localserver holds what starting a database server on this machine needs,
// whatever the engine: the system user it runs as when storbench is root, directories
// that user can reach, a free loopback port, and the network namespace it runs in when
// a test gives it one.
package localserver

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"os/user"
	"path/filepath"
	"runtime"
	"strconv"
	"sync"
	"syscall"
	"time"

	"golang.org/x/sys/unix"

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
			// Keep the sticky and set-id bits: Perm() alone would drop /tmp's sticky bit.
			keep := st.Mode() & (os.ModePerm | os.ModeSticky | os.ModeSetuid | os.ModeSetgid)
			if err := os.Chmod(d, keep|0o011); err != nil {
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
// (nil: as this process), with env added to its environment (childproc.Environ) and stdin
// when given, and returns its output; an error carries the output. Its own process
// group stops with ctx, whatever it forked (a WAL streamer would otherwise hold the
// output open), and with storbench.
func Run(ctx context.Context, cred *syscall.Credential, env []string, stdin io.Reader, prog string, args ...string) (string, error) {
	cmd := childproc.Command(ctx, 5*time.Second, prog, args...)
	cmd.Dir = "/"
	cmd.Env = append(cmd.Env, env...)
	cmd.Stdin = stdin
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	cmd.SysProcAttr.Credential = cred
	if err := cmd.Run(); err != nil {
		return out.String(), fmt.Errorf("%s: %w", filepath.Base(prog), err)
	}
	return out.String(), nil
}

// InNetNS runs f on an OS thread moved into the network namespace at path (such as
// /run/netns/NAME; "" : f runs here, in this process's namespace). Programs f starts
// and sockets f opens belong to that namespace for their whole life, whichever thread
// uses them later.
func InNetNS(path string, f func() error) error {
	if path == "" {
		return f()
	}
	errc := make(chan error, 1)
	go func() {
		runtime.LockOSThread()
		back, err := enterNetNS(path)
		if err != nil {
			runtime.UnlockOSThread()
			errc <- err
			return
		}
		defer func() {
			// The thread goes back before the runtime may reuse it. It must not end
			// instead (as a goroutine ending locked ends its thread): the kernel would
			// kill the children any goroutine started from it (Pdeathsig, childproc).
			// If it cannot go back, it stays locked and ends: the lesser harm.
			if back() == nil {
				runtime.UnlockOSThread()
			}
		}()
		errc <- f()
	}()
	return <-errc
}

// enterNetNS moves this (locked) thread into the network namespace at path and
// returns the function that moves it back.
func enterNetNS(path string) (back func() error, err error) {
	orig, err := os.Open("/proc/thread-self/ns/net")
	if err != nil {
		return nil, err
	}
	ns, err := os.Open(path)
	if err != nil {
		orig.Close()
		return nil, err
	}
	defer ns.Close()
	if err := unix.Setns(int(ns.Fd()), unix.CLONE_NEWNET); err != nil {
		orig.Close()
		return nil, fmt.Errorf("enter network namespace %s: %w", path, err)
	}
	return func() error {
		defer orig.Close()
		return unix.Setns(int(orig.Fd()), unix.CLONE_NEWNET)
	}, nil
}

// NetNSDialer returns a dial function (net.Dialer.DialContext's signature, as pgx's
// DialFunc and http.Transport.DialContext take) whose connections are opened in the
// network namespace at path ("" : this process's). addr must hold an IP address: a
// name would be resolved on other threads, in this process's namespace.
func NetNSDialer(path string) func(ctx context.Context, network, addr string) (net.Conn, error) {
	return func(ctx context.Context, network, addr string) (net.Conn, error) {
		var conn net.Conn
		err := InNetNS(path, func() error {
			var err error
			conn, err = (&net.Dialer{}).DialContext(ctx, network, addr)
			return err
		})
		return conn, err
	}
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

// OpenOwn opens path, a file in a directory the server's user owns (who may put
// anything there), as flag says (os.O_RDONLY, os.O_WRONLY|os.O_APPEND, with
// os.O_CREATE…) without going through what that user may have put in its place: a
// symbolic link is not followed, and a file that is not regular or has another name
// (a hard link to a file elsewhere) is refused before anything is read or written.
// Root must never read or write, through them, a file of the host. A file it may
// create has mode perm and, with cred, belongs to cred's user.
func OpenOwn(path string, flag int, perm os.FileMode, cred *syscall.Credential) (*os.File, error) {
	// O_NONBLOCK: a FIFO put there must not hang the open; O_TRUNC is left to the
	// caller, after the checks.
	f, err := os.OpenFile(path, flag&^os.O_TRUNC|unix.O_NOFOLLOW|unix.O_NONBLOCK|unix.O_NOCTTY, perm)
	if errors.Is(err, unix.ELOOP) {
		return nil, fmt.Errorf("%s is a symbolic link: storbench does not go through links in a server's directory", path)
	}
	if err != nil {
		return nil, err
	}
	var st unix.Stat_t
	if err := unix.Fstat(int(f.Fd()), &st); err != nil {
		f.Close()
		return nil, err
	}
	if st.Mode&unix.S_IFMT != unix.S_IFREG || st.Nlink != 1 {
		f.Close()
		return nil, fmt.Errorf("%s is not a regular file of its own (a link to another file, a device or a FIFO): storbench does not go through it; remove it", path)
	}
	if cred != nil && flag&os.O_CREATE != 0 {
		if err := f.Chown(int(cred.Uid), int(cred.Gid)); err != nil {
			f.Close()
			return nil, err
		}
	}
	return f, nil
}

// WriteOwn replaces the content of path, a file in a directory the server's user
// owns, with data (see OpenOwn), creating it with mode perm when it does not exist.
func WriteOwn(path string, data []byte, perm os.FileMode, cred *syscall.Credential) error {
	f, err := OpenOwn(path, os.O_WRONLY|os.O_CREATE, perm, cred)
	if err != nil {
		return err
	}
	err = f.Truncate(0)
	if err == nil {
		_, err = f.Write(data)
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	return err
}

// AppendFile appends text to an existing configuration file in a server's directory
// (see OpenOwn): a server reads its last setting of a name, so appending overrides.
func AppendFile(path, text string) error {
	f, err := OpenOwn(path, os.O_WRONLY|os.O_APPEND, 0, nil)
	if err != nil {
		return err
	}
	_, err = f.WriteString(text)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	return err
}

// WaitExited waits until process pid has exited (a zombie counts: it holds no files),
// at most limit. A server's stop program can return before its process has gone:
// pg_ctl stops waiting when postmaster.pid is removed, which the postmaster does on
// its way out, while it still works in, and holds files of, its data directory.
func WaitExited(ctx context.Context, pid int, limit time.Duration) error {
	deadline := time.Now().Add(limit)
	for {
		stat, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
		if err != nil || exitedState(stat) {
			return nil
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("process %d still runs %v after it was stopped", pid, limit)
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(10 * time.Millisecond):
		}
	}
}

// exitedState tells from /proc/PID/stat whether the process is a zombie or dead: the
// state is the first field after the command, which is in parentheses and may hold any
// character.
func exitedState(stat []byte) bool {
	i := bytes.LastIndexByte(stat, ')')
	if i < 0 || i+2 >= len(stat) {
		return false
	}
	return stat[i+2] == 'Z' || stat[i+2] == 'X'
}
