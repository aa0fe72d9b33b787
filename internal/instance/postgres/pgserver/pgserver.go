// Package pgserver starts and stops a private PostgreSQL server in a directory, on a
// free loopback port: the throwaway servers of tests, benchmarks and the quick start.
// initdb refuses to run as root, so as root the server runs as the postgres user.
// Tests that build a network (internal/testsupport/netlab) run it in a network namespace, on the
// address they give.
package pgserver

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"

	"github.com/jackc/pgx/v5"

	"github.com/storbench/storbench/internal/input"
	"github.com/storbench/storbench/internal/instance/localserver"
)

// Server is a running PostgreSQL server that this package started.
type Server struct {
	Dir   string // data directory
	Port  int
	Host  string // address it listens on and is reached at
	bin   string
	cred  *syscall.Credential // nil: run as ourselves
	netns string              // network namespace path its programs run in; "": ours
}

// Options configure Init and Start. Listen and NetNS are for Init's servers only:
// standbys and restored servers stay on loopback, in this process's namespace.
type Options struct {
	// Dir is the data directory to create; it must not exist or be empty.
	Dir string
	// WALDir, when set, holds the write-ahead log (initdb -X): another storage target.
	WALDir string
	// Port to listen on; 0 picks a free one on loopback.
	Port int
	// Listen is the address to listen on and to reach the server at ("": 127.0.0.1).
	Listen string
	// NetNS is the path of a network namespace (/run/netns/NAME) in which the server
	// and the programs run for it (initdb, pg_ctl…) live, and in which this package
	// connects to it; "": this process's namespace. Port 0 picks a port free in this
	// process's namespace, not in that one: give a port.
	NetNS string
	// Settings are extra postgresql.conf parameters (name → value).
	Settings map[string]string
}

// ErrNoBinaries: PostgreSQL's server binaries are not where storbench looks.
var ErrNoBinaries = errors.New("PostgreSQL server binaries not found")

// BinDir finds the server binaries: $STORBENCH_PG_BINDIR (bad input when it has no
// initdb; ErrNoBinaries is only their absence), else `pg_config --bindir`
// (Debian keeps initdb and pg_ctl off PATH), else Debian's newest
// /usr/lib/postgresql/N/bin, else PATH.
func BinDir() (string, error) {
	if d := os.Getenv("STORBENCH_PG_BINDIR"); d != "" {
		if _, err := os.Stat(filepath.Join(d, "initdb")); err != nil {
			// An explicit setting that does not work is a mistake to fix, not PostgreSQL's
			// absence: quick must not fall back to SQLite over it.
			return "", fmt.Errorf("%w: STORBENCH_PG_BINDIR=%s has no initdb: point it at PostgreSQL's server binaries (pg_config --bindir), or unset it", input.ErrInvalid, d)
		}
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
		return "", fmt.Errorf("%w: install postgresql or set STORBENCH_PG_BINDIR", ErrNoBinaries)
	}
	return filepath.Dir(p), nil
}

// versionOf reads N from /usr/lib/postgresql/N/bin/initdb (0 if it is not a number).
func versionOf(initdb string) int {
	n, _ := strconv.Atoi(filepath.Base(filepath.Dir(filepath.Dir(initdb))))
	return n
}

// Start creates a cluster (Init) and starts it: a throwaway server for tests.
func Start(ctx context.Context, opts Options) (*Server, error) {
	s, err := Init(ctx, opts)
	if err != nil {
		return nil, err
	}
	return s, s.Start(ctx)
}

// Init creates a cluster in opts.Dir with trust authentication for the user
// "postgres" on loopback, listening on opts.Listen (loopback by default), and writes
// its settings.
func Init(ctx context.Context, opts Options) (*Server, error) {
	s, err := Existing(opts.Dir, opts.Port)
	if err != nil {
		return nil, err
	}
	if opts.Listen != "" {
		s.Host = opts.Listen
	}
	s.netns = opts.NetNS
	if err := s.prepareDir(s.Dir); err != nil {
		return nil, err
	}
	args := []string{"-D", s.Dir, "-U", "postgres", "--auth=trust", "-E", "UTF8", "--locale=C", "--no-sync"}
	if opts.WALDir != "" {
		if err := s.prepareDir(opts.WALDir); err != nil {
			return nil, err
		}
		args = append(args, "-X", opts.WALDir)
	}
	if err := s.run(ctx, "initdb", args...); err != nil {
		return nil, err
	}
	if s.Port == 0 {
		if s.Port, err = localserver.FreePort(); err != nil {
			return nil, err
		}
	}
	return s, s.appendSettings(opts.Settings)
}

// appendSettings appends the listening address, port, socket directory and settings to
// postgresql.conf (later lines win, so a copied primary's values are overridden).
func (s *Server) appendSettings(settings map[string]string) error {
	// TCP only: a socket in the data directory would be limited to ~100-byte paths.
	conf := fmt.Sprintf("\n# storbench\nport = %d\nlisten_addresses = '%s'\nunix_socket_directories = ''\n", s.Port, s.Host)
	for _, k := range slices.Sorted(maps.Keys(settings)) {
		conf += fmt.Sprintf("%s = '%s'\n", k, settings[k])
	}
	return localserver.AppendFile(filepath.Join(s.Dir, "postgresql.conf"), conf)
}

// Existing returns the server of an initialised data directory listening on port.
func Existing(dir string, port int) (*Server, error) {
	bin, err := BinDir()
	if err != nil {
		return nil, err
	}
	return At(bin, dir, port)
}

// At returns the server of dir run by the binaries in bin (those that created it: a
// later, other PostgreSQL version must not touch the cluster).
func At(bin, dir string, port int) (*Server, error) {
	var err error
	s := &Server{Dir: dir, Port: port, Host: "127.0.0.1", bin: bin}
	if os.Geteuid() == 0 {
		if s.cred, err = localserver.ServiceUser("postgres"); err != nil {
			return nil, err
		}
	}
	return s, nil
}

// Start starts the server and waits until it accepts connections. The log goes to
// server.log in the data directory.
func (s *Server) Start(ctx context.Context) error {
	return s.run(ctx, "pg_ctl", "-D", s.Dir, "-l", LogOf(s.Dir), "-w", "-t", "60", "start")
}

// LogOf is the server log of the server in dataDir.
func LogOf(dataDir string) string { return filepath.Join(dataDir, "server.log") }

// PID returns the postmaster's process id, or 0 when the server is not running.
func (s *Server) PID() int { return PIDOf(s.Dir) }

// PIDOf reads a data directory's postmaster.pid and returns the pid when that process
// runs and is the postgres server of that directory (the postmaster works in its data
// directory): after a crash the file can name a pid since reused by another program,
// or by another cluster's server, which must not be taken for this one (or signalled).
func PIDOf(dataDir string) int {
	b, err := os.ReadFile(filepath.Join(dataDir, "postmaster.pid"))
	if err != nil {
		return 0
	}
	line, _, _ := strings.Cut(string(b), "\n")
	pid, err := strconv.Atoi(strings.TrimSpace(line))
	if err != nil || pid <= 0 || syscall.Kill(pid, 0) != nil {
		return 0
	}
	if exe, err := os.Readlink(fmt.Sprintf("/proc/%d/exe", pid)); err == nil && filepath.Base(exe) != "postgres" {
		return 0
	}
	if cwd, err := os.Readlink(fmt.Sprintf("/proc/%d/cwd", pid)); err == nil {
		if own, err := filepath.EvalSymlinks(dataDir); err != nil || cwd != own {
			return 0
		}
	}
	return pid
}

// BaseBackup takes a physical backup of the running server into dir (created, owned by
// the server's user): pg_basebackup in plain format with the WAL needed to start from
// it, after a fast checkpoint.
func (s *Server) BaseBackup(ctx context.Context, dir string) error {
	if err := s.prepareDir(dir); err != nil {
		return err
	}
	return s.run(ctx, "pg_basebackup", "-D", dir, "-F", "p", "-X", "stream", "-c", "fast",
		"-h", s.Host, "-p", strconv.Itoa(s.Port), "-U", "postgres")
}

// InitStandby makes dir a streaming standby of the server at primaryPort: a base backup
// with the recovery settings (standby.signal, primary_conninfo naming it appName, so the
// primary can wait for it), then its own port and settings.
func InitStandby(ctx context.Context, primaryPort int, appName string, opts Options) (*Server, error) {
	s, err := Existing(opts.Dir, opts.Port)
	if err != nil {
		return nil, err
	}
	if s.Port == 0 {
		if s.Port, err = localserver.FreePort(); err != nil {
			return nil, err
		}
	}
	primary := &Server{Port: primaryPort, Host: "127.0.0.1", bin: s.bin, cred: s.cred}
	if err := primary.BaseBackup(ctx, opts.Dir); err != nil {
		return nil, err
	}
	if err := s.moveWAL(ctx, opts.WALDir, opts.WALDir); err != nil {
		return nil, err
	}
	settings := maps.Clone(opts.Settings)
	if settings == nil {
		settings = map[string]string{}
	}
	settings["primary_conninfo"] = fmt.Sprintf("host=127.0.0.1 port=%d user=postgres application_name=%s", primaryPort, appName)
	if err := os.WriteFile(filepath.Join(s.Dir, "standby.signal"), nil, 0o600); err != nil {
		return nil, err
	}
	if s.cred != nil {
		if err := os.Chown(filepath.Join(s.Dir, "standby.signal"), int(s.cred.Uid), int(s.cred.Gid)); err != nil {
			return nil, err
		}
	}
	return s, s.appendSettings(settings)
}

// Dump writes a logical backup of database db into dir (created, owned by the server's
// user): pg_dump's directory format, jobs tables in parallel.
func (s *Server) Dump(ctx context.Context, dir, db string, jobs int) error {
	if err := s.prepareDir(dir); err != nil {
		return err
	}
	return s.run(ctx, "pg_dump", "-F", "d", "-j", strconv.Itoa(jobs), "-f", dir,
		"-h", s.Host, "-p", strconv.Itoa(s.Port), "-U", "postgres", db)
}

// LoadDump restores the logical backup in dir into database db of the running server,
// replacing the objects it holds (pg_restore --clean), jobs in parallel.
func (s *Server) LoadDump(ctx context.Context, dir, db string, jobs int) error {
	return s.run(ctx, "pg_restore", "--clean", "--if-exists", "-j", strconv.Itoa(jobs), "-d", db,
		"-h", s.Host, "-p", strconv.Itoa(s.Port), "-U", "postgres", dir)
}

// RestoreBase fills the server's new, absent data directory with the physical backup
// in from, then appends this server's port and settings (the backup may come from
// another server). With walDir (also new), the WAL goes there and pg_wal becomes a
// link to walLink, where walDir will be once it replaces the instance's WAL directory,
// as initdb -X made it.
func (s *Server) RestoreBase(ctx context.Context, from, walDir, walLink string, settings map[string]string) error {
	if err := s.prepareDir(s.Dir); err != nil {
		return err
	}
	if err := s.copyTree(ctx, from, s.Dir); err != nil {
		return err
	}
	if err := s.moveWAL(ctx, walDir, walLink); err != nil {
		return err
	}
	return s.appendSettings(settings)
}

// moveWAL moves the copied pg_wal into walDir (new or empty) and links it as walLink, as
// initdb -X does ("" : the WAL stays in the data directory).
func (s *Server) moveWAL(ctx context.Context, walDir, walLink string) error {
	if walDir == "" {
		return nil
	}
	if err := s.prepareDir(walDir); err != nil {
		return err
	}
	wal := filepath.Join(s.Dir, "pg_wal")
	if err := s.copyTree(ctx, wal, walDir); err != nil {
		return err
	}
	if err := os.RemoveAll(wal); err != nil {
		return err
	}
	return os.Symlink(walLink, wal)
}

// copyTree copies from's contents into to, keeping modes, as the server's user.
func (s *Server) copyTree(ctx context.Context, from, to string) error {
	cmd := exec.CommandContext(ctx, "cp", "-a", from+"/.", to)
	cmd.SysProcAttr = &syscall.SysProcAttr{Credential: s.cred}
	if out, err := cmd.CombinedOutput(); err != nil {
		return fmt.Errorf("copy %s to %s: %w: %s", from, to, err, strings.TrimSpace(string(out)))
	}
	return nil
}

// Version is the server binary's own version line ("postgres (PostgreSQL) 15.18 …").
func (s *Server) Version(ctx context.Context) (string, error) {
	out, err := exec.CommandContext(ctx, filepath.Join(s.bin, "postgres"), "--version").Output()
	return strings.TrimSpace(string(out)), err
}

// BinDir returns the directory of the server binaries in use.
func (s *Server) BinDir() string { return s.bin }

// DSN returns a URL for database db on this server.
func (s *Server) DSN(db string) string {
	return fmt.Sprintf("postgres://postgres@%s/%s?sslmode=disable", net.JoinHostPort(s.Host, strconv.Itoa(s.Port)), db)
}

// Connect opens a session on database db as the user "postgres", from the server's
// network namespace.
func (s *Server) Connect(ctx context.Context, db string) (*pgx.Conn, error) {
	cfg, err := pgx.ParseConfig(s.DSN(db))
	if err != nil {
		return nil, err
	}
	cfg.DialFunc = localserver.NetNSDialer(s.netns)
	return pgx.ConnectConfig(ctx, cfg)
}

// CreateDatabase creates an empty database.
func (s *Server) CreateDatabase(ctx context.Context, name string) error {
	conn, err := s.Connect(ctx, "postgres")
	if err != nil {
		return err
	}
	defer conn.Close(ctx)
	_, err = conn.Exec(ctx, "CREATE DATABASE "+pgx.Identifier{name}.Sanitize())
	return err
}

// SetSyncStandby makes every commit wait for the standby named appName ("" : for none)
// and reloads the configuration.
func (s *Server) SetSyncStandby(ctx context.Context, appName string) error {
	conn, err := s.Connect(ctx, "postgres")
	if err != nil {
		return err
	}
	defer conn.Close(ctx)
	// ALTER SYSTEM takes no parameters; the name is quoted as an identifier.
	stmt := "ALTER SYSTEM RESET synchronous_standby_names"
	if appName != "" {
		stmt = fmt.Sprintf("ALTER SYSTEM SET synchronous_standby_names = '%s'", strings.ReplaceAll(pgx.Identifier{appName}.Sanitize(), "'", "''"))
	}
	if _, err := conn.Exec(ctx, stmt); err != nil {
		return err
	}
	_, err = conn.Exec(ctx, "SELECT pg_reload_conf()")
	return err
}

// Stop shuts the server down (fast mode: open sessions are ended).
func (s *Server) Stop(ctx context.Context) error {
	return s.run(ctx, "pg_ctl", "-D", s.Dir, "-m", "fast", "-w", "-t", "60", "stop")
}

// Log returns the server log, for test failure messages.
func (s *Server) Log() string {
	b, _ := os.ReadFile(LogOf(s.Dir))
	return string(b)
}

func (s *Server) run(ctx context.Context, prog string, args ...string) error {
	return localserver.InNetNS(s.netns, func() error {
		if out, err := localserver.Run(ctx, s.cred, nil, filepath.Join(s.bin, prog), args...); err != nil {
			return fmt.Errorf("%w: %s", err, strings.TrimSpace(out))
		}
		return nil
	})
}

// prepareDir creates dir for the server's user (see localserver.PrepareDir).
func (s *Server) prepareDir(dir string) error { return localserver.PrepareDir(dir, s.cred) }
