// Package pgserver starts and stops a private PostgreSQL server in a directory, on a
// free loopback port: the throwaway servers of tests, benchmarks and the quick start.
// initdb refuses to run as root, so as root the server runs as the postgres user.
package pgserver

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"

	"github.com/jackc/pgx/v5"
)

// Server is a running PostgreSQL server that this package started.
type Server struct {
	Dir  string // data directory
	Port int
	bin  string
	cred *syscall.Credential // nil: run as ourselves
}

// Options configure Start.
type Options struct {
	// Dir is the data directory to create; it must not exist or be empty.
	Dir string
	// Settings are extra postgresql.conf parameters (name → value).
	Settings map[string]string
}

// BinDir finds the server binaries: $STORBENCH_PG_BINDIR, else `pg_config --bindir`
// (Debian keeps initdb and pg_ctl off PATH), else Debian's newest
// /usr/lib/postgresql/N/bin, else PATH.
func BinDir() (string, error) {
	if d := os.Getenv("STORBENCH_PG_BINDIR"); d != "" {
		return d, nil
	}
	if out, err := exec.Command("pg_config", "--bindir").Output(); err == nil {
		d := strings.TrimSpace(string(out))
		if _, err := os.Stat(filepath.Join(d, "initdb")); err == nil {
			return d, nil
		}
	}
	if found, _ := filepath.Glob("/usr/lib/postgresql/*/bin/initdb"); len(found) > 0 {
		slices.SortFunc(found, func(a, b string) int { return versionOf(a) - versionOf(b) })
		return filepath.Dir(found[len(found)-1]), nil
	}
	p, err := exec.LookPath("initdb")
	if err != nil {
		return "", errors.New("PostgreSQL server binaries not found: install postgresql or set STORBENCH_PG_BINDIR")
	}
	return filepath.Dir(p), nil
}

// versionOf reads N from /usr/lib/postgresql/N/bin/initdb (0 if it is not a number).
func versionOf(initdb string) int {
	n, _ := strconv.Atoi(filepath.Base(filepath.Dir(filepath.Dir(initdb))))
	return n
}

// Start creates a cluster in opts.Dir and starts it on a free loopback port, with
// trust authentication for the user "postgres" on loopback only.
func Start(ctx context.Context, opts Options) (*Server, error) {
	bin, err := BinDir()
	if err != nil {
		return nil, err
	}
	s := &Server{Dir: opts.Dir, bin: bin}
	if os.Geteuid() == 0 {
		if s.cred, err = postgresUser(); err != nil {
			return nil, err
		}
	}
	if err := s.prepareDir(); err != nil {
		return nil, err
	}
	if err := s.run(ctx, "initdb", "-D", s.Dir, "-U", "postgres", "--auth=trust",
		"-E", "UTF8", "--locale=C", "--no-sync"); err != nil {
		return nil, err
	}
	if s.Port, err = FreePort(); err != nil {
		return nil, err
	}
	conf := fmt.Sprintf("\n# storbench pgserver\nport = %d\nlisten_addresses = '127.0.0.1'\nunix_socket_directories = '%s'\n", s.Port, s.Dir)
	for k, v := range opts.Settings {
		conf += fmt.Sprintf("%s = '%s'\n", k, v)
	}
	f, err := os.OpenFile(filepath.Join(s.Dir, "postgresql.conf"), os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		return nil, err
	}
	_, err = f.WriteString(conf)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return nil, err
	}
	if err := s.run(ctx, "pg_ctl", "-D", s.Dir, "-l", filepath.Join(s.Dir, "server.log"), "-w", "-t", "60", "start"); err != nil {
		return nil, err
	}
	return s, nil
}

// DSN returns a URL for database db on this server.
func (s *Server) DSN(db string) string {
	return fmt.Sprintf("postgres://postgres@127.0.0.1:%d/%s?sslmode=disable", s.Port, db)
}

// CreateDatabase creates an empty database.
func (s *Server) CreateDatabase(ctx context.Context, name string) error {
	conn, err := pgx.Connect(ctx, s.DSN("postgres"))
	if err != nil {
		return err
	}
	defer conn.Close(ctx)
	_, err = conn.Exec(ctx, "CREATE DATABASE "+pgx.Identifier{name}.Sanitize())
	return err
}

// Stop shuts the server down (fast mode: open sessions are ended).
func (s *Server) Stop(ctx context.Context) error {
	return s.run(ctx, "pg_ctl", "-D", s.Dir, "-m", "fast", "-w", "-t", "60", "stop")
}

// Log returns the server log, for test failure messages.
func (s *Server) Log() string {
	b, _ := os.ReadFile(filepath.Join(s.Dir, "server.log"))
	return string(b)
}

func (s *Server) run(ctx context.Context, prog string, args ...string) error {
	cmd := exec.CommandContext(ctx, filepath.Join(s.bin, prog), args...)
	cmd.Dir = "/"
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	cmd.SysProcAttr = &syscall.SysProcAttr{Credential: s.cred}
	if err := cmd.Run(); err != nil {
		return fmt.Errorf("%s: %w: %s", prog, err, strings.TrimSpace(out.String()))
	}
	return nil
}

// prepareDir creates the data directory owned by the server's user and makes its
// parents traversable by it (a test's temp dir is 0700 and owned by root).
func (s *Server) prepareDir() error {
	if err := os.MkdirAll(s.Dir, 0o700); err != nil {
		return err
	}
	if s.cred == nil {
		return nil
	}
	if err := os.Chown(s.Dir, int(s.cred.Uid), int(s.cred.Gid)); err != nil {
		return err
	}
	for d := filepath.Dir(s.Dir); d != "/" && d != "."; d = filepath.Dir(d) {
		st, err := os.Stat(d)
		if err != nil {
			return err
		}
		if st.Mode().Perm()&0o001 == 0 {
			if err := os.Chmod(d, st.Mode().Perm()|0o011); err != nil {
				return err
			}
		}
	}
	return nil
}

func postgresUser() (*syscall.Credential, error) {
	u, err := user.Lookup("postgres")
	if err != nil {
		return nil, fmt.Errorf("running as root needs a postgres user to run the server: %w", err)
	}
	uid, _ := strconv.Atoi(u.Uid)
	gid, _ := strconv.Atoi(u.Gid)
	return &syscall.Credential{Uid: uint32(uid), Gid: uint32(gid)}, nil
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
