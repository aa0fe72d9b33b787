// Package mariadbserver starts and stops a private MariaDB server in a directory, on a
// free loopback port: the throwaway servers of tests and benchmarks. mariadbd refuses
// to run as root, so as root the server runs as the mysql user.
package mariadbserver

import (
	"context"
	"database/sql"
	_ "embed"
	"errors"
	"fmt"
	"maps"
	"net"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/go-sql-driver/mysql"

	"github.com/storbench/storbench/internal/childproc"
	"github.com/storbench/storbench/internal/instance/localserver"
)

// RootOnSocketSQL is given to mariadb-install-db (--extra-file): it keeps root to the
// socket.
//
//go:embed sql/root_on_socket.sql
var RootOnSocketSQL string

// ErrNoBinaries: MariaDB's server binaries are not where storbench looks.
var ErrNoBinaries = errors.New("MariaDB server binaries not found")

// Options configure Init and Start.
type Options struct {
	// Dir holds the server's socket, pid file, error log and temporary files, and the
	// data directory unless DataDir is set; it must not exist or be empty.
	Dir string
	// DataDir is the data directory to create ("" : Dir/data).
	DataDir string
	// Port to listen on (loopback); 0 picks a free one.
	Port int
	// Settings are extra server options (name → value, e.g. "innodb_buffer_pool_size"
	// → "128M"), given to mariadb-install-db too so the files it creates match them.
	Settings map[string]string
}

// Server is a MariaDB server that this package set up.
type Server struct {
	Dir      string // socket, pid file, error log, tmp
	DataDir  string
	Socket   string // unix socket, root's way in
	Port     int    // TCP port on 127.0.0.1
	PIDFile  string
	ErrorLog string

	bin, installDB string
	cred           *syscall.Credential // nil: run as ourselves
	args           []string            // Settings as options
	pickPort       bool                // Port was chosen here: another may be chosen
	sockDir        string              // short directory made for Socket, removed on Stop

	mu     sync.Mutex
	cancel context.CancelFunc
	done   chan struct{} // closed when the server process has exited
	pid    int           // the server process (and its process group)
	err    error         // the process's exit, once done is closed
}

// Binaries finds mariadbd (or mysqld) and mariadb-install-db (or mysql_install_db):
// in $STORBENCH_MARIADB_BINDIR, else on PATH, else in /usr/sbin, /usr/bin and
// /usr/local/mysql/{bin,scripts}.
func Binaries() (server, installDB string, err error) {
	dirs := []string{"/usr/sbin", "/usr/bin", "/usr/local/mysql/bin", "/usr/local/mysql/scripts"}
	if d := os.Getenv("STORBENCH_MARIADB_BINDIR"); d != "" {
		dirs = []string{d}
	} else {
		dirs = append(filepath.SplitList(os.Getenv("PATH")), dirs...)
	}
	find := func(names ...string) string {
		for _, n := range names {
			for _, d := range dirs {
				if d == "" {
					continue
				}
				p := filepath.Join(d, n)
				if st, err := os.Stat(p); err == nil && st.Mode().IsRegular() && st.Mode()&0o111 != 0 {
					return p
				}
			}
		}
		return ""
	}
	server = find("mariadbd", "mysqld")
	installDB = find("mariadb-install-db", "mysql_install_db")
	if server == "" || installDB == "" {
		return "", "", fmt.Errorf("%w: install mariadb-server or set STORBENCH_MARIADB_BINDIR", ErrNoBinaries)
	}
	return server, installDB, nil
}

// Start creates a data directory (Init) and starts the server: a throwaway server.
func Start(ctx context.Context, opts Options) (*Server, error) {
	s, err := Init(ctx, opts)
	if err != nil {
		return nil, err
	}
	if err := s.Start(ctx); err != nil {
		return nil, err
	}
	return s, nil
}

// Init creates the data directory with mariadb-install-db: the system tables, and
// root@localhost without a password, reachable only through the socket (Root).
func Init(ctx context.Context, opts Options) (*Server, error) {
	bin, installDB, err := Binaries()
	if err != nil {
		return nil, err
	}
	if opts.Dir == "" {
		return nil, errors.New("mariadbserver: no directory")
	}
	s := &Server{
		Dir:       opts.Dir,
		DataDir:   opts.DataDir,
		Port:      opts.Port,
		PIDFile:   filepath.Join(opts.Dir, "mariadbd.pid"),
		ErrorLog:  filepath.Join(opts.Dir, "error.log"),
		Socket:    filepath.Join(opts.Dir, "mariadbd.sock"),
		bin:       bin,
		installDB: installDB,
		pickPort:  opts.Port == 0,
	}
	if s.DataDir == "" {
		s.DataDir = filepath.Join(opts.Dir, "data")
	}
	for _, k := range slices.Sorted(maps.Keys(opts.Settings)) {
		s.args = append(s.args, fmt.Sprintf("--%s=%s", k, opts.Settings[k]))
	}
	if os.Geteuid() == 0 {
		if s.cred, err = localserver.ServiceUser("mysql"); err != nil {
			return nil, err
		}
	}
	for _, d := range []string{s.Dir, s.DataDir, filepath.Join(s.Dir, "tmp")} {
		if err := s.prepareDir(d); err != nil {
			return nil, err
		}
	}
	// A unix socket's path has at most 107 bytes: a deep temp dir gets a short one.
	if len(s.Socket) > 100 {
		if s.sockDir, err = os.MkdirTemp("", "mariadb"); err != nil {
			return nil, err
		}
		if err := s.prepareDir(s.sockDir); err != nil {
			return nil, err
		}
		s.Socket = filepath.Join(s.sockDir, "mariadbd.sock")
	}
	if s.Port == 0 {
		if s.Port, err = localserver.FreePort(); err != nil {
			return nil, err
		}
	}
	extra := filepath.Join(s.Dir, "init.sql")
	if err := os.WriteFile(extra, []byte(RootOnSocketSQL), 0o644); err != nil {
		return nil, err
	}
	// --no-defaults must come first; the other options go on to mariadbd --bootstrap.
	args := append([]string{"--no-defaults", "--datadir=" + s.DataDir,
		"--auth-root-authentication-method=normal", "--skip-test-db", "--skip-name-resolve",
		"--tmpdir=" + filepath.Join(s.Dir, "tmp"), "--extra-file=" + extra}, s.args...)
	if err := s.run(ctx, s.installDB, args...); err != nil {
		return nil, err
	}
	return s, os.Remove(extra)
}

// serverArgs are mariadbd's options: no option files, loopback TCP and the socket,
// no binary log, LOAD DATA LOCAL INFILE allowed, then the Settings.
func (s *Server) serverArgs() []string {
	return append([]string{
		"--no-defaults",
		"--datadir=" + s.DataDir,
		"--socket=" + s.Socket,
		"--port=" + strconv.Itoa(s.Port),
		"--bind-address=127.0.0.1",
		"--skip-name-resolve",
		"--pid-file=" + s.PIDFile,
		"--log-error=" + s.ErrorLog,
		"--tmpdir=" + filepath.Join(s.Dir, "tmp"),
		"--skip-log-bin",
		"--local-infile=1",
	}, s.args...)
}

// Start starts the server and waits until root can connect through the socket (at
// most a minute, or until ctx ends). The server runs until Stop; should the test or
// program that started it die, the kernel kills it.
func (s *Server) Start(ctx context.Context) error {
	for attempt := 0; ; attempt++ {
		err := s.start(ctx)
		if err == nil || !s.pickPort || attempt == 2 || !s.portTaken() {
			return err
		}
		// Another program took the free port between FreePort and the bind.
		if s.Port, err = localserver.FreePort(); err != nil {
			return err
		}
	}
}

func (s *Server) start(ctx context.Context) error {
	s.mu.Lock()
	if s.running() {
		s.mu.Unlock()
		return errors.New("mariadbserver: already running")
	}
	if s.sockDir != "" { // removed by Stop
		if err := s.prepareDir(s.sockDir); err != nil {
			s.mu.Unlock()
			return err
		}
	}
	// The log is this server's alone: truncate it so that LogTail shows this start.
	_ = os.Truncate(s.ErrorLog, 0)
	life, cancel := context.WithCancel(context.Background())
	// Stop cancels life: SIGTERM to the group, SIGKILL if shutdown takes two minutes.
	cmd := childproc.Command(life, 2*time.Minute, s.bin, s.serverArgs()...)
	cmd.SysProcAttr.Credential = s.cred
	cmd.Dir = "/"
	out := &localserver.SyncBuffer{}
	cmd.Stdout, cmd.Stderr = out, out // what it says before the error log is open
	if err := cmd.Start(); err != nil {
		cancel()
		s.mu.Unlock()
		return fmt.Errorf("start mariadbd: %w", err)
	}
	done := make(chan struct{})
	s.cancel, s.done, s.pid, s.err = cancel, done, cmd.Process.Pid, nil
	s.mu.Unlock()
	go func() {
		err := cmd.Wait()
		s.mu.Lock()
		s.err = err
		s.mu.Unlock()
		close(done)
	}()

	wait, stop := context.WithTimeout(ctx, time.Minute)
	defer stop()
	db, err := s.Root()
	if err != nil {
		return errors.Join(err, s.Stop(context.Background()))
	}
	defer db.Close()
	for {
		try, cancelTry := context.WithTimeout(wait, 2*time.Second)
		err = db.PingContext(try)
		cancelTry()
		if err == nil {
			return nil
		}
		select {
		case <-done:
			s.mu.Lock()
			exit := s.err
			s.cancel = nil
			s.mu.Unlock()
			cancel()
			return fmt.Errorf("mariadbd exited while starting (%v): %s\n%s", exit,
				strings.TrimSpace(out.String()), s.LogTail(30))
		case <-wait.Done():
			_ = s.Stop(context.Background())
			return fmt.Errorf("mariadbd did not accept connections on %s: %w (last: %v)\n%s",
				s.Socket, wait.Err(), err, s.LogTail(30))
		case <-time.After(20 * time.Millisecond):
		}
	}
}

// running tells whether the process started last still runs (s.mu held).
func (s *Server) running() bool {
	if s.done == nil {
		return false
	}
	select {
	case <-s.done:
		return false
	default:
		return true
	}
}

// portTaken tells whether the last start failed because the port was in use.
func (s *Server) portTaken() bool {
	log := s.LogTail(30)
	return strings.Contains(log, "Address already in use") || strings.Contains(log, "another server running on port")
}

// Stop shuts the server down (SIGTERM: a clean InnoDB shutdown, open sessions are
// ended) and waits for it to exit; if ctx ends first, the server is killed. Stopping a
// stopped server does nothing; Stop reports a server that had exited on its own.
func (s *Server) Stop(ctx context.Context) error {
	s.mu.Lock()
	cancel, done, pid, crashed := s.cancel, s.done, s.pid, !s.running()
	s.cancel = nil
	s.mu.Unlock()
	if s.sockDir != "" {
		defer os.RemoveAll(s.sockDir)
	}
	if cancel == nil {
		return nil // never started, or stopped already
	}
	cancel()
	var err error
	select {
	case <-done:
	case <-ctx.Done():
		_ = syscall.Kill(-pid, syscall.SIGKILL)
		<-done
		err = fmt.Errorf("mariadbd killed: shutdown took too long: %w", ctx.Err())
	}
	s.mu.Lock()
	exit := s.err
	s.mu.Unlock()
	switch {
	case crashed:
		return fmt.Errorf("mariadbd had exited (%v)\n%s", exit, s.LogTail(30))
	case err != nil:
		return err
	case !strings.Contains(s.LogTail(5), "Shutdown complete"):
		return fmt.Errorf("mariadbd did not shut down cleanly (%v)\n%s", exit, s.LogTail(30))
	}
	return nil
}

// PID returns the server's process id, or 0 when it is not running.
func (s *Server) PID() int {
	b, err := os.ReadFile(s.PIDFile)
	if err != nil {
		return 0
	}
	pid, err := strconv.Atoi(strings.TrimSpace(string(b)))
	if err != nil || syscall.Kill(pid, 0) != nil {
		return 0
	}
	if exe, err := os.Readlink(fmt.Sprintf("/proc/%d/exe", pid)); err == nil &&
		filepath.Base(exe) != "mariadbd" && filepath.Base(exe) != "mysqld" {
		return 0
	}
	return pid
}

// Root opens a pool of connections as root through the socket.
func (s *Server) Root() (*sql.DB, error) {
	cfg := mysql.NewConfig()
	cfg.User, cfg.Net, cfg.Addr = "root", "unix", s.Socket
	cfg.Timeout = 2 * time.Second
	c, err := mysql.NewConnector(cfg)
	if err != nil {
		return nil, err
	}
	return sql.OpenDB(c), nil
}

// CreateDatabase creates an empty database (utf8mb4).
func (s *Server) CreateDatabase(ctx context.Context, name string) error {
	return s.exec(ctx, "CREATE DATABASE "+quoteIdent(name)+" CHARACTER SET utf8mb4 COLLATE utf8mb4_bin")
}

// CreateUser creates user@'127.0.0.1' with password and all privileges on database db
// (tables, indexes, routines, views, triggers), plus PROCESS for the InnoDB counters
// (SHOW ENGINE INNODB STATUS, information_schema.INNODB_METRICS).
func (s *Server) CreateUser(ctx context.Context, name, password, db string) error {
	acct := quoteString(name) + "@'127.0.0.1'"
	return s.exec(ctx,
		"CREATE USER "+acct+" IDENTIFIED BY "+quoteString(password),
		"GRANT ALL PRIVILEGES ON "+quoteIdent(db)+".* TO "+acct,
		"GRANT PROCESS ON *.* TO "+acct)
}

func (s *Server) exec(ctx context.Context, stmts ...string) error {
	db, err := s.Root()
	if err != nil {
		return err
	}
	defer db.Close()
	for _, q := range stmts {
		if _, err := db.ExecContext(ctx, q); err != nil {
			return fmt.Errorf("%s: %w", q, err)
		}
	}
	return nil
}

// Config returns go-sql-driver/mysql's configuration for user on database db over
// loopback TCP, with client-side parameter interpolation (one round trip a query).
func (s *Server) Config(user, password, db string) *mysql.Config {
	cfg := mysql.NewConfig()
	cfg.User, cfg.Passwd, cfg.DBName = user, password, db
	cfg.Net, cfg.Addr = "tcp", net.JoinHostPort("127.0.0.1", strconv.Itoa(s.Port))
	cfg.InterpolateParams = true
	return cfg
}

// DSN is Config in go-sql-driver/mysql's DSN form:
// user:password@tcp(127.0.0.1:port)/db?interpolateParams=true.
func (s *Server) DSN(user, password, db string) string {
	return s.Config(user, password, db).FormatDSN()
}

// URL is the form storbench's --dsn takes: mysql://user:password@127.0.0.1:port/db.
func (s *Server) URL(user, password, db string) string {
	u := url.URL{Scheme: "mysql", User: url.UserPassword(user, password),
		Host: net.JoinHostPort("127.0.0.1", strconv.Itoa(s.Port)), Path: "/" + db}
	return u.String()
}

// Version is the server binary's own version line ("mariadbd  Ver 10.11.19-MariaDB …").
func (s *Server) Version(ctx context.Context) (string, error) {
	out, err := exec.CommandContext(ctx, s.bin, "--version").Output()
	return strings.Join(strings.Fields(string(out)), " "), err
}

// LogTail returns the last n lines of the error log, for failure messages.
func (s *Server) LogTail(n int) string {
	b, _ := os.ReadFile(s.ErrorLog)
	lines := strings.Split(strings.TrimRight(string(b), "\n"), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, "\n")
}

func (s *Server) run(ctx context.Context, prog string, args ...string) error {
	if out, err := localserver.Run(ctx, s.cred, nil, prog, args...); err != nil {
		return fmt.Errorf("%w: %s", err, strings.TrimSpace(out))
	}
	return nil
}

// prepareDir creates dir for the server's user (see localserver.PrepareDir).
func (s *Server) prepareDir(dir string) error { return localserver.PrepareDir(dir, s.cred) }

func quoteIdent(s string) string { return "`" + strings.ReplaceAll(s, "`", "``") + "`" }

func quoteString(s string) string {
	return "'" + strings.NewReplacer(`\`, `\\`, `'`, `''`).Replace(s) + "'"
}
