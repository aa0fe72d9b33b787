// Package pgserver starts and stops a private PostgreSQL server in a directory, on a
// free loopback port: the servers of managed instances, and the throwaway servers of
// tests and benchmarks. initdb refuses to run as root, so as root the server runs as
// the postgres user. Only TCP is served (no Unix sockets). A server with a password
// (a managed instance's) admits only clients that give it (scram-sha-256); one
// without (a throwaway) trusts the user postgres on loopback.
// Tests that build a network (internal/testsupport/netlab) run it in a network namespace, on the
// address they give.
package pgserver

import (
	"context"
	"crypto/hmac"
	"crypto/pbkdf2"
	"crypto/rand"
	"crypto/sha256"
	_ "embed"
	"encoding/base64"
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
	"syscall"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/storbench/storbench/internal/childproc"
	"github.com/storbench/storbench/internal/input"
	"github.com/storbench/storbench/internal/instance/localserver"
)

// Server is a running PostgreSQL server that this package started.
type Server struct {
	Dir  string // data directory
	Port int
	Host string // address it listens on and is reached at
	// Password is the superuser postgres's, which this package gives its clients
	// (sessions, and pg_basebackup, pg_dump and pg_restore in their environment); ""
	// for a server that trusts loopback.
	Password string
	bin      string
	cred     *syscall.Credential // nil: run as ourselves
	netns    string              // network namespace path its programs run in; "": ours
}

// Options configure Init and Start. Listen and NetNS are for Init's servers only:
// standbys and restored servers stay on loopback, in this process's namespace.
type Options struct {
	// BinDir holds the server's programs (initdb, pg_ctl, postgres) of the version to
	// run; "": BinDir's.
	BinDir string
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
	// Password, when set, is the superuser postgres's: the server then admits only
	// clients that give a role's password (scram-sha-256), on loopback (a managed
	// instance; see RequirePassword). "": it trusts postgres on loopback, which lets
	// every user of the host in (a throwaway server of a test or benchmark). A
	// standby's is its primary's, whose roles it replicates.
	Password string
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
	// Debian's pg_config is a shell script: like every child, it gets no secret.
	pgConfig := exec.Command("pg_config", "--bindir")
	pgConfig.Env = childproc.Environ()
	if out, err := pgConfig.Output(); err == nil {
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

// Init creates a cluster in opts.Dir, listening on opts.Listen (loopback by default),
// and writes its settings: with opts.Password, one that requires it
// (RequirePassword); without, one that trusts the user "postgres" on loopback.
func Init(ctx context.Context, opts Options) (*Server, error) {
	s, err := opts.server()
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
	// initdb trusts until then, but nothing has listened yet. Before the settings: a
	// server they keep from starting fails at its start, which names its log.
	if s.Password = opts.Password; s.Password != "" {
		if err := s.RequirePassword(ctx); err != nil {
			return nil, err
		}
	}
	return s, s.appendSettings(opts.Settings)
}

// hba is the pg_hba.conf of a server with a password: nothing but a role's password
// over TCP on loopback (scram-sha-256); no line for Unix sockets (there are none, and
// what no line admits is refused).
const hba = `# written by storbench: clients give a role's password (scram-sha-256), on loopback only
host all all 127.0.0.1/32 scram-sha-256
host replication all 127.0.0.1/32 scram-sha-256
`

// RequirePassword makes the stopped server admit only clients that give a role's
// password (its pg_hba.conf replaced by hba) and sets the superuser's to s.Password,
// through a standalone backend (postgres --single, which reads the statement from
// its stdin): the cluster may have come from another server (a restored backup) or
// have trusted everyone until now (an instance created before passwords were). The
// server gets the password's SCRAM verifier, never the password itself.
func (s *Server) RequirePassword(ctx context.Context) error {
	if s.Password == "" {
		return errors.New("pgserver: no password to require")
	}
	verifier, err := scramVerifier(s.Password)
	if err != nil {
		return err
	}
	// The data directory is the server user's, who may have put a link in the file's
	// place: root must not write through it.
	if err := localserver.WriteOwn(filepath.Join(s.Dir, "pg_hba.conf"), []byte(hba), 0o600, s.cred); err != nil {
		return err
	}
	// exit_on_error: a failed statement fails the backend, else it would exit 0.
	alter := strings.NewReader(strings.ReplaceAll(setPasswordSQL, "VERIFIER", verifier))
	if out, err := localserver.Run(ctx, s.cred, nil, alter, filepath.Join(s.bin, "postgres"),
		"--single", "-D", s.Dir, "-c", "exit_on_error=on", "postgres"); err != nil {
		return fmt.Errorf("set the password of postgres: %w: %s", err, problemLine(out))
	}
	return nil
}

// setPasswordSQL sets the superuser's password to VERIFIER, a SCRAM verifier.
//
//go:embed sql/set_password.sql
var setPasswordSQL string

// problemLine is the line of a server program's output that says what failed: its
// first FATAL, PANIC or ERROR line, else its last line that is not blank (the
// program's whole output, banner and hints, would not be one line).
func problemLine(out string) string {
	lines := strings.Split(strings.TrimSpace(out), "\n")
	for _, l := range lines {
		if strings.Contains(l, "FATAL:") || strings.Contains(l, "PANIC:") || strings.Contains(l, "ERROR:") {
			return strings.TrimSpace(l)
		}
	}
	return strings.TrimSpace(lines[len(lines)-1])
}

// scramVerifier is what PostgreSQL stores of password for scram-sha-256
// authentication (RFC 5802 and 7677, in PostgreSQL's form
// SCRAM-SHA-256$ITERATIONS:SALT$STOREDKEY:SERVERKEY), with a random salt and
// PostgreSQL's iteration count. Given as a role's password, it is stored as it is.
func scramVerifier(password string) (string, error) {
	const iterations = 4096
	salt := make([]byte, 16)
	if _, err := rand.Read(salt); err != nil {
		return "", err
	}
	salted, err := pbkdf2.Key(sha256.New, password, salt, iterations, sha256.Size)
	if err != nil {
		return "", err
	}
	keyed := func(name string) []byte {
		m := hmac.New(sha256.New, salted)
		m.Write([]byte(name))
		return m.Sum(nil)
	}
	stored := sha256.Sum256(keyed("Client Key"))
	b64 := base64.StdEncoding.EncodeToString
	return fmt.Sprintf("SCRAM-SHA-256$%d:%s$%s:%s", iterations, b64(salt), b64(stored[:]), b64(keyed("Server Key"))), nil
}

// appendSettings appends the listening address, port, socket directory and settings to
// postgresql.conf (later lines win, so a copied primary's values are overridden).
func (s *Server) appendSettings(settings map[string]string) error {
	// TCP only: a socket in the data directory would be limited to ~100-byte paths.
	conf := fmt.Sprintf("\n# storbench\nport = %d\nlisten_addresses = '%s'\nunix_socket_directories = ''\n", s.Port, s.Host)
	for _, k := range slices.Sorted(maps.Keys(settings)) {
		// A configuration file's string: quotes doubled, backslashes escaped.
		conf += fmt.Sprintf("%s = '%s'\n", k, strings.NewReplacer(`\`, `\\`, `'`, `''`).Replace(settings[k]))
	}
	return localserver.AppendFile(filepath.Join(s.Dir, "postgresql.conf"), conf)
}

// server is the server of opts.Dir, run by opts.BinDir's programs or BinDir's.
func (opts Options) server() (*Server, error) {
	if opts.BinDir == "" {
		return Existing(opts.Dir, opts.Port)
	}
	if err := CheckBinDir(opts.BinDir); err != nil {
		return nil, err
	}
	return At(opts.BinDir, opts.Dir, opts.Port)
}

// CheckBinDir refuses a directory without PostgreSQL's server programs: bad input
// (a bindir the user gave), naming what is missing.
func CheckBinDir(dir string) error {
	if !filepath.IsAbs(dir) {
		return input.Errorf("bindir", "{bindir} %q is not an absolute path (give the directory of initdb, pg_ctl and postgres, e.g. /usr/lib/postgresql/17/bin)", dir)
	}
	for _, prog := range []string{"initdb", "pg_ctl", "postgres"} {
		if st, err := os.Stat(filepath.Join(dir, prog)); err != nil || st.IsDir() || st.Mode()&0o111 == 0 {
			return input.Errorf("bindir", "{bindir} %s has no %s program (give the directory of PostgreSQL's server programs: initdb, pg_ctl, postgres)", dir, prog)
		}
	}
	return nil
}

// CheckTools refuses a build in dir without the client programs progs: a backup by
// another major's would fail halfway (pg_basebackup refuses other servers' majors,
// pg_restore another pg_dump's newer format).
func CheckTools(dir string, progs ...string) error {
	for _, prog := range progs {
		if st, err := os.Stat(filepath.Join(dir, prog)); err != nil || st.IsDir() || st.Mode()&0o111 == 0 {
			return input.Errorf("bindir", "the PostgreSQL build in %s has no %s, and another version's would not work with its server: use a build with its client programs ({bindir}), or leave out the experiments that back up or copy it (backup-restore, replication, noisy backups)", dir, prog)
		}
	}
	return nil
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
	return s.runClient(ctx, "pg_basebackup", "-D", dir, "-F", "p", "-X", "stream", "-c", "fast",
		"-h", s.Host, "-p", strconv.Itoa(s.Port), "-U", "postgres", "-w")
}

// ColdCopy copies the stopped server's files into dir, as a base backup holds them:
// the WAL as a directory of its own (pg_wal, not the link to a WAL directory
// elsewhere). A cleanly stopped server's files need no WAL replayed.
func (s *Server) ColdCopy(ctx context.Context, dir string) error {
	if pid := s.PID(); pid != 0 {
		return fmt.Errorf("the server (pid %d) must be stopped for a copy of its files", pid)
	}
	if err := s.prepareDir(dir); err != nil {
		return err
	}
	if err := s.copyTree(ctx, s.Dir, dir); err != nil {
		return err
	}
	wal := filepath.Join(dir, "pg_wal")
	target, err := os.Readlink(wal)
	if err != nil {
		return nil // the WAL is in the data directory, copied with it
	}
	if err := os.Remove(wal); err != nil {
		return err
	}
	if err := s.prepareDir(wal); err != nil {
		return err
	}
	return s.copyTree(ctx, target, wal)
}

// InitStandby makes dir a streaming standby of the server at primaryPort: a base backup
// with the recovery settings (standby.signal, primary_conninfo naming it appName, so the
// primary can wait for it, and giving opts.Password, the primary's), then its own port
// and settings. The password is then in the standby's postgresql.conf, in its data
// directory, which only the server's user may enter.
func InitStandby(ctx context.Context, primaryPort int, appName string, opts Options) (*Server, error) {
	s, err := opts.server()
	if err != nil {
		return nil, err
	}
	s.Password = opts.Password
	if s.Port == 0 {
		if s.Port, err = localserver.FreePort(); err != nil {
			return nil, err
		}
	}
	primary := &Server{Port: primaryPort, Host: "127.0.0.1", Password: opts.Password, bin: s.bin, cred: s.cred}
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
	conninfo := fmt.Sprintf("host=127.0.0.1 port=%d user=postgres application_name=%s", primaryPort, conninfoValue(appName))
	if opts.Password != "" {
		conninfo += " password=" + conninfoValue(opts.Password)
	}
	settings["primary_conninfo"] = conninfo
	if err := localserver.WriteOwn(filepath.Join(s.Dir, "standby.signal"), nil, 0o600, s.cred); err != nil {
		return nil, err
	}
	return s, s.appendSettings(settings)
}

// Dump writes a logical backup of database db into dir (created, owned by the server's
// user): pg_dump's directory format, jobs tables in parallel.
func (s *Server) Dump(ctx context.Context, dir, db string, jobs int) error {
	if err := s.prepareDir(dir); err != nil {
		return err
	}
	return s.runClient(ctx, "pg_dump", "-F", "d", "-j", strconv.Itoa(jobs), "-f", dir,
		"-h", s.Host, "-p", strconv.Itoa(s.Port), "-U", "postgres", "-w", db)
}

// conninfoValue is v quoted for a libpq connection string.
func conninfoValue(v string) string {
	return "'" + strings.NewReplacer(`\`, `\\`, `'`, `\'`).Replace(v) + "'"
}

// LoadDump restores the logical backup in dir into database db of the running server,
// replacing the objects it holds (pg_restore --clean), jobs in parallel.
func (s *Server) LoadDump(ctx context.Context, dir, db string, jobs int) error {
	return s.runClient(ctx, "pg_restore", "--clean", "--if-exists", "-j", strconv.Itoa(jobs), "-d", db,
		"-h", s.Host, "-p", strconv.Itoa(s.Port), "-U", "postgres", "-w", dir)
}

// RestoreBase fills the server's new, absent data directory with the physical backup
// in from, then appends this server's port and settings (the backup may come from
// another server) and, with a Password, requires it (the backup's roles and pg_hba.conf
// are its server's). With walDir (also new), the WAL goes there and pg_wal becomes a
// link to walLink, where walDir will be once it replaces the instance's WAL directory,
// as initdb -X made it.
func (s *Server) RestoreBase(ctx context.Context, from, walDir, walLink string, settings map[string]string) error {
	if err := s.prepareDir(s.Dir); err != nil {
		return err
	}
	if err := s.copyTree(ctx, from, s.Dir); err != nil {
		return err
	}
	if err := s.appendSettings(settings); err != nil {
		return err
	}
	// Before the WAL moves: pg_wal is still the copy's own, not yet the link to where
	// the instance's current WAL is.
	if s.Password != "" {
		if err := s.RequirePassword(ctx); err != nil {
			return err
		}
	}
	return s.moveWAL(ctx, walDir, walLink)
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
	cmd.Env = childproc.Environ()
	cmd.SysProcAttr = &syscall.SysProcAttr{Credential: s.cred}
	if out, err := cmd.CombinedOutput(); err != nil {
		return fmt.Errorf("copy %s to %s: %w: %s", from, to, err, strings.TrimSpace(string(out)))
	}
	return nil
}

// Version is the server binary's own version line ("postgres (PostgreSQL) 15.18 …").
func (s *Server) Version(ctx context.Context) (string, error) {
	cmd := exec.CommandContext(ctx, filepath.Join(s.bin, "postgres"), "--version")
	cmd.Env = childproc.Environ()
	out, err := cmd.Output()
	return strings.TrimSpace(string(out)), err
}

// BinDir returns the directory of the server binaries in use.
func (s *Server) BinDir() string { return s.bin }

// DSN returns a URL for database db on this server, as the user postgres (with its
// Password).
func (s *Server) DSN(db string) string { return URL(s.Host, s.Port, s.Password, db) }

// URL is the --dsn form of database db on the server at host:port, as the user
// postgres with password ("" : none).
func URL(host string, port int, password, db string) string {
	user := url.User("postgres")
	if password != "" {
		user = url.UserPassword("postgres", password)
	}
	u := url.URL{Scheme: "postgres", User: user, Host: net.JoinHostPort(host, strconv.Itoa(port)),
		Path: "/" + db, RawQuery: "sslmode=disable"}
	return u.String()
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

// Stop shuts the server down (fast mode: open sessions are ended, a shutdown
// checkpoint written). A server that has not finished in 60 s, as one whose disk is
// full may never (its checkpoint cannot be written), is stopped in immediate mode:
// it is never left running, and its next start recovers from the WAL. It returns
// when the postmaster has exited.
func (s *Server) Stop(ctx context.Context) error {
	pid := s.PID()
	err := s.run(ctx, "pg_ctl", "-D", s.Dir, "-m", "fast", "-w", "-t", "60", "stop")
	if err != nil && s.PID() != 0 {
		if ierr := s.run(ctx, "pg_ctl", "-D", s.Dir, "-m", "immediate", "-w", "-t", "60", "stop"); ierr != nil {
			return errors.Join(err, ierr)
		}
		err = nil
	}
	if err == nil && pid != 0 {
		// pg_ctl returns once postmaster.pid is gone, which can be before the
		// postmaster has exited: whoever unmounts or removes the directory next would
		// find it still held.
		err = localserver.WaitExited(ctx, pid, 10*time.Second)
	}
	return err
}

// Log returns the server log, for test failure messages.
func (s *Server) Log() string {
	b, _ := os.ReadFile(LogOf(s.Dir))
	return string(b)
}

// run runs one of the server's programs as its user.
func (s *Server) run(ctx context.Context, prog string, args ...string) error {
	return s.runEnv(ctx, nil, prog, args...)
}

// runClient runs a client program (pg_basebackup, pg_dump…) as the server's user,
// with the password in its environment, which only that user and root may read (its
// command line every user may): the server itself must not inherit it.
func (s *Server) runClient(ctx context.Context, prog string, args ...string) error {
	var env []string
	if s.Password != "" {
		env = []string{"PGPASSWORD=" + s.Password}
	}
	return s.runEnv(ctx, env, prog, args...)
}

func (s *Server) runEnv(ctx context.Context, env []string, prog string, args ...string) error {
	return localserver.InNetNS(s.netns, func() error {
		if out, err := localserver.Run(ctx, s.cred, env, nil, filepath.Join(s.bin, prog), args...); err != nil {
			return fmt.Errorf("%w: %s", err, strings.TrimSpace(out))
		}
		return nil
	})
}

// prepareDir creates dir for the server's user (see localserver.PrepareDir).
func (s *Server) prepareDir(dir string) error { return localserver.PrepareDir(dir, s.cred) }
