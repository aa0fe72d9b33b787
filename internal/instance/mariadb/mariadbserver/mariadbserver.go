// Package mariadbserver sets up, starts and stops a MariaDB server in a directory:
// the throwaway servers of tests and benchmarks, and the servers of managed instances
// (internal/instance/mariadb). mariadbd refuses to run as root, so as root the server
// runs as the mysql user.
//
// Layout: Dir holds my.cnf (the server's only option file, so that /etc/mysql plays no
// part), error.log, mariadbd.pid, mariadbd.sock and tmp/; the data directory is
// DataDir (Dir/data), the redo log LogDir when set. Root is root@localhost without a
// password, through the socket only, in a directory only the server's user (and root)
// may enter.
package mariadbserver

import (
	"context"
	"crypto/sha256"
	"database/sql"
	_ "embed"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
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
	"github.com/storbench/storbench/internal/input"
	"github.com/storbench/storbench/internal/instance/localserver"
)

// RootOnSocketSQL is given to mariadb-install-db (--extra-file): it keeps root to the
// socket.
//
//go:embed sql/root_on_socket.sql
var RootOnSocketSQL string

// ErrNoBinaries: MariaDB's server binaries are not where storbench looks.
var ErrNoBinaries = errors.New("MariaDB server binaries not found")

// umask is the environment of the server and its programs: MariaDB creates files
// with mode UMASK and directories with UMASK_DIR (less the process's umask); its
// defaults would let the mysql group read and write the data files (0660).
var umask = []string{"UMASK=0600", "UMASK_DIR=0700"}

// Timeouts: a server that is not ready within a minute failed; a clean shutdown
// flushes the whole buffer pool, which on slow storage takes a while.
const (
	startTimeout = time.Minute
	stopTimeout  = 5 * time.Minute
)

// Options configure Init and At.
type Options struct {
	// BinDir is the directory of the server program of the version to run
	// (BinariesIn); "": Binaries'.
	BinDir string
	// Dir holds the server's option file, socket, pid file, error log and temporary
	// files, and the data directory unless DataDir is set; Init wants it absent or empty.
	Dir string
	// DataDir is the data directory ("" : Dir/data).
	DataDir string
	// LogDir, when set, holds the redo log (innodb_log_group_home_dir): another
	// storage target.
	LogDir string
	// Port to listen on (loopback); 0 picks a free one.
	Port int
	// Socket is the unix socket's path ("" : Dir/mariadbd.sock, or, when that is too
	// long for a socket, a short directory of its own in the temp dir).
	Socket string
	// Settings are extra server options (name → value, e.g. "innodb_buffer_pool_size"
	// → "128M"); mariadb-install-db reads them too, so the files it creates match.
	Settings map[string]string
	// Comment is my.cnf's first line ("" : "# written by storbench").
	Comment string
	// Outlive: the server outlives this process (a managed instance's). Otherwise the
	// kernel kills it should the test or program that started it die.
	Outlive bool
}

// Server is a MariaDB server set up by this package.
type Server struct {
	Dir      string
	DataDir  string
	LogDir   string // "" : the redo log is in DataDir
	Socket   string // unix socket, root's way in
	Port     int    // TCP port on 127.0.0.1
	Conf     string // my.cnf
	PIDFile  string
	ErrorLog string

	binDir, bin string              // the binaries' directory and mariadbd in it ("" : absent)
	cred        *syscall.Credential // nil: run as ourselves
	settings    map[string]string
	comment     string
	outlive     bool
	pickPort    bool  // Port was chosen here: another may be chosen
	logFrom     int64 // where this process's start began in the error log

	mu     sync.Mutex
	exited chan struct{} // closed when the process this Server started has exited
	exit   error         // its exit, once exited is closed
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
	server = find(dirs, "mariadbd", "mysqld")
	installDB = find(dirs, "mariadb-install-db", "mysql_install_db")
	if server == "" || installDB == "" {
		return "", "", fmt.Errorf("%w: install mariadb-server or set STORBENCH_MARIADB_BINDIR", ErrNoBinaries)
	}
	return server, installDB, nil
}

// BinariesIn are the server and its install tool of the build whose server is in dir
// (a bindir the user gave): the tool beside it, or in the build's bin or scripts
// (Debian keeps mariadbd in sbin, mariadb-install-db in bin).
func BinariesIn(dir string) (server, installDB string, err error) {
	if !filepath.IsAbs(dir) {
		return "", "", input.Errorf("bindir", "{bindir} %q is not an absolute path (give the directory of mariadbd, e.g. /usr/sbin)", dir)
	}
	server = find([]string{dir}, "mariadbd", "mysqld")
	installDB = find([]string{dir, filepath.Join(dir, "..", "bin"), filepath.Join(dir, "..", "scripts")}, "mariadb-install-db", "mysql_install_db")
	if server == "" || installDB == "" {
		return "", "", input.Errorf("bindir", "{bindir} %s has no mariadbd (or mysqld) with a mariadb-install-db beside it or in ../bin (give the directory of the server program)", dir)
	}
	return server, installDB, nil
}

// find is the first of names that is an executable file in one of dirs ("" : none).
func find(dirs []string, names ...string) string {
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

// Start sets up a server (Init) and starts it: a throwaway server.
func Start(ctx context.Context, opts Options) (*Server, error) {
	s, err := Init(ctx, opts)
	if err != nil {
		return nil, err
	}
	return s, s.Start(ctx)
}

// Init creates the server's directories, its my.cnf and, with mariadb-install-db, its
// data directory: the system tables, and root@localhost without a password, reachable
// only through the socket (Root).
func Init(ctx context.Context, opts Options) (*Server, error) {
	bin, installDB, err := Binaries()
	if opts.BinDir != "" {
		bin, installDB, err = BinariesIn(opts.BinDir)
	}
	if err != nil {
		return nil, err
	}
	if opts.Dir == "" {
		return nil, errors.New("mariadbserver: no directory")
	}
	s, err := At(filepath.Dir(bin), opts)
	if err != nil {
		return nil, err
	}
	s.pickPort = opts.Port == 0
	for _, d := range []string{s.Dir, s.DataDir, filepath.Join(s.Dir, "tmp"), s.LogDir} {
		if d != "" {
			if err := s.prepareDir(d); err != nil {
				return nil, err
			}
		}
	}
	if s.Port == 0 {
		if s.Port, err = localserver.FreePort(); err != nil {
			return nil, err
		}
	}
	if len(s.Socket) > 107 {
		return nil, fmt.Errorf("%w: the server's socket path %s is longer than 107 bytes: set TMPDIR to a short directory", input.ErrInvalid, s.Socket)
	}
	if err := s.prepareSocketDir(); err != nil {
		return nil, err
	}
	if err := s.writeConf(); err != nil {
		return nil, err
	}
	extra := filepath.Join(s.Dir, "init.sql")
	if err := localserver.WriteOwn(extra, []byte(RootOnSocketSQL), 0o644, s.cred); err != nil {
		return nil, err
	}
	defer os.Remove(extra)
	// --defaults-file must come first; the others go on to mariadbd --bootstrap.
	if _, err := s.run(ctx, nil, installDB, "--defaults-file="+s.Conf,
		"--auth-root-authentication-method=normal", "--skip-test-db", "--extra-file="+extra); err != nil {
		return nil, err
	}
	return s, nil
}

// ErrorLogOf is the error log of the server set up in dir.
func ErrorLogOf(dir string) string { return filepath.Join(dir, "error.log") }

// At returns the server set up in opts.Dir, run by the binaries in binDir (those that
// created it: another version must not touch its files). It needs no binaries until
// it starts: a server whose MariaDB was uninstalled must still be seen and stopped.
func At(binDir string, opts Options) (*Server, error) {
	s := &Server{
		Dir:      opts.Dir,
		DataDir:  opts.DataDir,
		LogDir:   opts.LogDir,
		Socket:   opts.Socket,
		Port:     opts.Port,
		Conf:     filepath.Join(opts.Dir, "my.cnf"),
		PIDFile:  filepath.Join(opts.Dir, "mariadbd.pid"),
		ErrorLog: ErrorLogOf(opts.Dir),
		binDir:   binDir,
		bin:      find([]string{binDir}, "mariadbd", "mysqld"),
		settings: opts.Settings,
		comment:  opts.Comment,
		outlive:  opts.Outlive,
	}
	if s.DataDir == "" {
		s.DataDir = filepath.Join(s.Dir, "data")
	}
	if s.Socket == "" {
		s.Socket = defaultSocket(s.Dir)
	}
	if s.comment == "" {
		s.comment = "# written by storbench"
	}
	if os.Geteuid() == 0 {
		var err error
		if s.cred, err = localserver.ServiceUser("mysql"); err != nil {
			return nil, err
		}
	}
	return s, nil
}

// defaultSocket is Dir/mariadbd.sock, unless that path is longer than a socket's (107
// bytes): then it is in a short directory of its own in the temp dir, named after Dir.
func defaultSocket(dir string) string {
	if p := filepath.Join(dir, "mariadbd.sock"); len(p) <= 100 {
		return p
	}
	sum := sha256.Sum256([]byte(dir))
	return filepath.Join(os.TempDir(), "storbench-mdb-"+hex.EncodeToString(sum[:6]), "mariadbd.sock")
}

// socketDir is the socket's own directory when it is not the server directory.
func (s *Server) socketDir() string {
	if d := filepath.Dir(s.Socket); d != s.Dir {
		return d
	}
	return ""
}

// prepareSocketDir creates the socket's own short directory for the server's user, or
// checks that an existing one is that user's alone: a directory in the shared temp
// dir may have been made by someone else.
func (s *Server) prepareSocketDir() error {
	dir := s.socketDir()
	if dir == "" {
		return nil
	}
	uid := os.Getuid()
	if s.cred != nil {
		uid = int(s.cred.Uid)
	}
	fi, err := os.Lstat(dir)
	if errors.Is(err, os.ErrNotExist) {
		if err := os.Mkdir(dir, 0o700); err != nil {
			return err
		}
		if s.cred != nil {
			return os.Chown(dir, int(s.cred.Uid), int(s.cred.Gid))
		}
		return nil
	}
	if err != nil {
		return err
	}
	if !fi.IsDir() || fi.Mode().Perm() != 0o700 || int(fi.Sys().(*syscall.Stat_t).Uid) != uid {
		return fmt.Errorf("%s, the directory of the server's socket, exists and is not the server user's alone (0700): remove it", dir)
	}
	return nil
}

// writeConf writes my.cnf: the server's paths, port, loopback only, LOAD DATA LOCAL
// INFILE allowed, then the Settings; and creates the error log, which also takes the
// server's stdout and stderr (what it says before the log is open).
func (s *Server) writeConf() error {
	opts := map[string]string{"bind_address": "127.0.0.1", "skip_name_resolve": "1", "local_infile": "1"}
	maps.Copy(opts, s.settings)
	if s.LogDir != "" {
		opts["innodb_log_group_home_dir"] = s.LogDir
	}
	opts["socket"] = s.Socket
	opts["datadir"] = s.DataDir
	opts["tmpdir"] = filepath.Join(s.Dir, "tmp")
	opts["pid_file"] = s.PIDFile
	opts["log_error"] = s.ErrorLog
	opts["port"] = strconv.Itoa(s.Port)
	var b strings.Builder
	fmt.Fprintf(&b, "%s\n[mysqld]\n", s.comment)
	for _, k := range slices.Sorted(maps.Keys(opts)) {
		fmt.Fprintf(&b, "%s = %s\n", k, opts[k])
	}
	// The directory is the server user's, who may have put links there: root must not
	// write through them (localserver.OpenOwn).
	if err := localserver.WriteOwn(s.Conf, []byte(b.String()), 0o640, s.cred); err != nil {
		return err
	}
	f, err := localserver.OpenOwn(s.ErrorLog, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o640, s.cred)
	if err != nil {
		return err
	}
	return f.Close()
}

// Start starts the server (mariadbd with its my.cnf, as the server's user, in a
// process group of its own) and waits until root can connect through the socket (at
// most a minute, or until ctx ends).
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
		if err := s.writeConf(); err != nil {
			return err
		}
	}
}

func (s *Server) start(ctx context.Context) error {
	if s.bin == "" {
		return fmt.Errorf("%w: no mariadbd in %s", ErrNoBinaries, s.binDir)
	}
	s.mu.Lock()
	running := s.running()
	s.mu.Unlock()
	if running {
		return errors.New("mariadbserver: already running")
	}
	if err := s.prepareSocketDir(); err != nil {
		return err
	}
	out, err := localserver.OpenOwn(s.ErrorLog, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o640, s.cred)
	if err != nil {
		return err
	}
	s.logFrom, _ = out.Seek(0, io.SeekEnd) // the log from here on is this start's
	cmd := exec.Command(s.bin, "--defaults-file="+s.Conf)
	cmd.Dir = "/"
	cmd.Env = append(childproc.Environ(), umask...)
	cmd.Stdout, cmd.Stderr = out, out
	if s.outlive {
		// A session of its own, no Pdeathsig: the server is meant to outlive storbench.
		cmd.SysProcAttr = &syscall.SysProcAttr{Credential: s.cred, Setsid: true}
	} else {
		cmd.SysProcAttr = &syscall.SysProcAttr{Credential: s.cred, Setpgid: true, Pdeathsig: syscall.SIGKILL}
	}
	err = cmd.Start()
	out.Close()
	if err != nil {
		return fmt.Errorf("start mariadbd: %w", err)
	}
	pid := cmd.Process.Pid
	exited := make(chan struct{})
	s.mu.Lock()
	s.exited, s.exit = exited, nil
	s.mu.Unlock()
	go func() { // reaps it should it exit while this process runs
		err := cmd.Wait()
		s.mu.Lock()
		s.exit = err
		s.mu.Unlock()
		close(exited)
	}()

	wait, cancel := context.WithTimeout(ctx, startTimeout)
	defer cancel()
	db, err := s.Root()
	if err != nil {
		_ = syscall.Kill(-pid, syscall.SIGKILL)
		return err
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
		case <-exited:
			return fmt.Errorf("mariadbd exited while starting (%v)\n%s", s.exitErr(), s.LogTail(30))
		case <-wait.Done():
			_ = syscall.Kill(-pid, syscall.SIGKILL)
			return fmt.Errorf("mariadbd did not accept connections on %s: %w (last: %w)\n%s", s.Socket, wait.Err(), err, s.LogTail(30))
		case <-time.After(20 * time.Millisecond):
		}
	}
}

// running tells whether the process this Server started last still runs (s.mu held).
func (s *Server) running() bool {
	if s.exited == nil {
		return false
	}
	select {
	case <-s.exited:
		return false
	default:
		return true
	}
}

// exitErr is the exit of the process this Server started, once it has exited.
func (s *Server) exitErr() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.exit
}

// portTaken tells whether the last start failed because the port was in use.
func (s *Server) portTaken() bool {
	log := s.LogTail(30)
	return strings.Contains(log, "Address already in use") || strings.Contains(log, "another server running on port")
}

// Stop shuts the server down (SIGTERM: a clean InnoDB shutdown, open sessions are
// ended) and waits for it to exit; it is killed if that takes five minutes or ctx
// ends. Stopping a stopped server does nothing, but Stop reports a server this Server
// started that had exited on its own.
func (s *Server) Stop(ctx context.Context) error {
	s.mu.Lock()
	exited := s.exited
	crashed := exited != nil && !s.running()
	s.exited = nil
	s.mu.Unlock()
	pid := s.PID()
	if pid == 0 {
		if crashed {
			return fmt.Errorf("mariadbd had exited (%v)\n%s", s.exitErr(), s.LogTail(30))
		}
		return nil
	}
	if err := syscall.Kill(pid, syscall.SIGTERM); err != nil && !errors.Is(err, syscall.ESRCH) {
		return fmt.Errorf("stop mariadbd (pid %d): %w", pid, err)
	}
	wait, cancel := context.WithTimeout(ctx, stopTimeout)
	defer cancel()
	for s.alive(pid) {
		select {
		case <-wait.Done():
			_ = syscall.Kill(pid, syscall.SIGKILL)
			return fmt.Errorf("mariadbd (pid %d) killed: its shutdown took too long: %w", pid, wait.Err())
		case <-time.After(20 * time.Millisecond):
		}
	}
	if exited != nil {
		<-exited // reaped
	}
	if dir := s.socketDir(); dir != "" {
		_ = os.Remove(dir) // empty once the server has gone
	}
	if !strings.Contains(s.LogTail(5), "Shutdown complete") {
		return fmt.Errorf("mariadbd did not shut down cleanly:\n%s", s.LogTail(30))
	}
	return nil
}

// PID returns the server's process id, or 0 when it is not running.
func (s *Server) PID() int { return PIDOf(s.Dir) }

// PIDOf returns the process id of the server set up in dir when it runs: the pid
// file's process, if its command line names dir's my.cnf (after a crash the file can
// name a pid since reused by another program, which must not be signalled).
func PIDOf(dir string) int {
	b, err := os.ReadFile(filepath.Join(dir, "mariadbd.pid"))
	if err != nil {
		return 0
	}
	pid, err := strconv.Atoi(strings.TrimSpace(string(b)))
	if err != nil || pid <= 0 || !runs(pid, filepath.Join(dir, "my.cnf")) {
		return 0
	}
	return pid
}

func (s *Server) alive(pid int) bool { return runs(pid, s.Conf) }

// runs tells whether pid runs a server of the option file conf: its command line
// names it (a zombie has none).
func runs(pid int, conf string) bool {
	cmdline, err := os.ReadFile(fmt.Sprintf("/proc/%d/cmdline", pid))
	if err != nil {
		return false
	}
	return slices.Contains(strings.Split(string(cmdline), "\x00"), "--defaults-file="+conf)
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

// CreateDatabase creates database name (utf8mb4) unless it exists.
func (s *Server) CreateDatabase(ctx context.Context, name string) error {
	return s.exec(ctx, "CREATE DATABASE IF NOT EXISTS "+quoteIdent(name)+" CHARACTER SET utf8mb4 COLLATE utf8mb4_bin")
}

// CreateUser creates user@'127.0.0.1', or sets its password when it exists (a
// physical backup restored may come from another server), with all privileges on
// database db (tables, indexes, routines, views, triggers), plus PROCESS for the
// InnoDB counters (SHOW ENGINE INNODB STATUS, information_schema.INNODB_METRICS).
func (s *Server) CreateUser(ctx context.Context, name, password, db string) error {
	acct := quoteString(name) + "@'127.0.0.1'"
	return s.exec(ctx,
		"CREATE USER IF NOT EXISTS "+acct+" IDENTIFIED BY "+quoteString(password),
		"ALTER USER "+acct+" IDENTIFIED BY "+quoteString(password),
		"GRANT ALL PRIVILEGES ON "+quoteIdent(db)+".* TO "+acct,
		"GRANT PROCESS ON *.* TO "+acct,
		// The wait profile (package engine/mysql) reads its summaries.
		"GRANT SELECT ON performance_schema.* TO "+acct)
}

// exec runs statements as root on one session, out of the binary log (which would
// hold passwords).
func (s *Server) exec(ctx context.Context, stmts ...string) error {
	db, err := s.Root()
	if err != nil {
		return err
	}
	defer db.Close()
	conn, err := db.Conn(ctx)
	if err != nil {
		return err
	}
	defer conn.Close()
	for _, q := range append([]string{"SET SESSION sql_log_bin = 0"}, stmts...) {
		if _, err := conn.ExecContext(ctx, q); err != nil {
			// The statement may hold a password: name it by its first words.
			words := strings.Fields(q)
			return fmt.Errorf("%s: %w", strings.Join(words[:min(3, len(words))], " "), err)
		}
	}
	return nil
}

// BaseBackup takes a physical backup of the running server into dir (created, owned by
// the server's user): mariadb-backup, prepared so that it can be copied back as it is.
func (s *Server) BaseBackup(ctx context.Context, dir string) error {
	if err := s.prepareDir(dir); err != nil {
		return err
	}
	backup, err := s.tool("mariadb-backup", "mariabackup")
	if err != nil {
		return err
	}
	if _, err := s.run(ctx, nil, backup, "--defaults-file="+s.Conf, "--backup",
		"--target-dir="+dir, "--user=root", "--socket="+s.Socket); err != nil {
		return err
	}
	_, err = s.run(ctx, nil, backup, "--no-defaults", "--prepare", "--target-dir="+dir)
	return err
}

// RestoreBase copies the physical backup in from into dataDir (and the redo log into
// logDir, when the server has one), both new: the copies are to replace the server's.
func (s *Server) RestoreBase(ctx context.Context, from, dataDir, logDir string) error {
	if _, err := os.Stat(filepath.Join(from, "xtrabackup_checkpoints")); err != nil {
		return fmt.Errorf("%w: %s is not a mariadb physical backup (no xtrabackup_checkpoints)", input.ErrInvalid, from)
	}
	backup, err := s.tool("mariadb-backup", "mariabackup")
	if err != nil {
		return err
	}
	// The server's options, with the copies' paths.
	args := []string{"--defaults-file=" + s.Conf, "--copy-back", "--target-dir=" + from, "--datadir=" + dataDir}
	if logDir != "" {
		args = append(args, "--innodb-log-group-home-dir="+logDir)
	}
	for _, d := range []string{dataDir, logDir} {
		if d == "" {
			continue
		}
		if err := s.prepareDir(d); err != nil {
			return err
		}
	}
	_, err = s.run(ctx, nil, backup, args...)
	return err
}

// Dump writes a logical backup of database db into dir (created, owned by the server's
// user): mariadb-dump in one transaction, into DIR/db.sql.
func (s *Server) Dump(ctx context.Context, dir, db string) error {
	if err := s.prepareDir(dir); err != nil {
		return err
	}
	dump, err := s.tool("mariadb-dump", "mysqldump")
	if err != nil {
		return err
	}
	_, err = s.run(ctx, nil, dump, "--no-defaults", "--user=root", "--socket="+s.Socket,
		"--single-transaction", "--routines", "--triggers", "--events", "--hex-blob",
		"--default-character-set=utf8mb4", "--add-drop-database", "--databases", db,
		"--result-file="+dumpFile(dir, db))
	return err
}

// LoadDump replays in the running server the logical backup of database db in dir,
// which drops the database and creates it from the dump.
func (s *Server) LoadDump(ctx context.Context, dir, db string) error {
	client, err := s.tool("mariadb", "mysql")
	if err != nil {
		return err
	}
	f, err := os.Open(dumpFile(dir, db))
	if err != nil {
		return fmt.Errorf("%w: %s is not a mariadb logical backup: %w", input.ErrInvalid, dir, err)
	}
	defer f.Close()
	_, err = s.run(ctx, f, client, "--no-defaults", "--user=root", "--socket="+s.Socket,
		"--default-character-set=utf8mb4", "--binary-mode")
	return err
}

func dumpFile(dir, db string) string { return filepath.Join(dir, db+".sql") }

// tool finds a client program (mariadb-backup, mariadb-dump, mariadb): beside the
// server, in $STORBENCH_MARIADB_BINDIR, on PATH, in /usr/bin.
func (s *Server) tool(names ...string) (string, error) {
	dirs := []string{s.binDir, os.Getenv("STORBENCH_MARIADB_BINDIR")}
	dirs = append(dirs, filepath.SplitList(os.Getenv("PATH"))...)
	dirs = append(dirs, "/usr/bin", "/usr/local/mysql/bin")
	if p := find(dirs, names...); p != "" {
		return p, nil
	}
	return "", fmt.Errorf("%w: %s not found: install it (Debian: apt-get install mariadb-backup mariadb-client)", input.ErrInvalid, names[0])
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
func (s *Server) URL(user, password, db string) string { return URL(s.Port, user, password, db) }

// URL is the --dsn form of database db on the server at port on loopback.
func URL(port int, user, password, db string) string {
	u := url.URL{Scheme: "mysql", User: url.UserPassword(user, password),
		Host: net.JoinHostPort("127.0.0.1", strconv.Itoa(port)), Path: "/" + db}
	return u.String()
}

// BinDir returns the directory of the server binaries in use.
func (s *Server) BinDir() string { return s.binDir }

// Version is the server binary's own version line ("mariadbd Ver 10.11.19-MariaDB …").
func (s *Server) Version(ctx context.Context) (string, error) {
	if s.bin == "" {
		return "", fmt.Errorf("%w: no mariadbd in %s", ErrNoBinaries, s.binDir)
	}
	cmd := exec.CommandContext(ctx, s.bin, "--version")
	cmd.Env = childproc.Environ()
	out, err := cmd.Output()
	if err != nil {
		return "", fmt.Errorf("%s --version: %w", s.bin, err)
	}
	// It begins with argv[0], the binary's path: keep its name.
	f := strings.Fields(string(out))
	if len(f) > 0 {
		f[0] = filepath.Base(f[0])
	}
	return strings.Join(f, " "), nil
}

// LogTail returns the last n lines of the error log, from this process's start of
// the server on, for failure messages.
func (s *Server) LogTail(n int) string {
	b, _ := os.ReadFile(s.ErrorLog)
	if s.logFrom > 0 && s.logFrom <= int64(len(b)) {
		b = b[s.logFrom:]
	}
	return lastLines(string(b), n)
}

func lastLines(s string, n int) string {
	lines := strings.Split(strings.TrimRight(s, "\n"), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, "\n")
}

// run runs prog as the server's user with stdin (nil: none), creating files as the
// server does (umask), and returns its output; an error carries the output's last
// lines. It is stopped with ctx and with storbench.
func (s *Server) run(ctx context.Context, stdin io.Reader, prog string, args ...string) (string, error) {
	out, err := localserver.Run(ctx, s.cred, umask, stdin, prog, args...)
	if err != nil {
		return out, fmt.Errorf("%w: %s", err, lastLines(out, 15))
	}
	return out, nil
}

// prepareDir creates dir for the server's user (see localserver.PrepareDir).
func (s *Server) prepareDir(dir string) error { return localserver.PrepareDir(dir, s.cred) }

func quoteIdent(s string) string { return "`" + strings.ReplaceAll(s, "`", "``") + "`" }

func quoteString(s string) string {
	return "'" + strings.NewReplacer(`\`, `\\`, `'`, `''`).Replace(s) + "'"
}

// WaitProfileSettings turn on what storbench's wait profile reads (package
// engine/mysql): performance_schema, with metadata lock waits timed (file I/O and
// statements are by default), and sized down to its summaries: no history, digests,
// memory, stage, table, socket or latch instruments, none of which the profile
// reads. Measured on MariaDB 10.11 at max_connections 200 (docs/metrics.md): 38 MB of
// the server's memory, against 112 MB with the defaults; the rest of the Reserve
// beside the buffer pool holds it.
var WaitProfileSettings = map[string]string{
	"performance_schema":                                       "ON",
	"performance_schema_instrument":                            "'wait/lock/metadata/sql/mdl=ON'",
	"performance_schema_digests_size":                          "0",
	"performance_schema_max_digest_length":                     "0",
	"performance_schema_max_sql_text_length":                   "0",
	"performance_schema_events_statements_history_long_size":   "0",
	"performance_schema_events_statements_history_size":        "0",
	"performance_schema_events_waits_history_long_size":        "0",
	"performance_schema_events_waits_history_size":             "0",
	"performance_schema_events_stages_history_long_size":       "0",
	"performance_schema_events_stages_history_size":            "0",
	"performance_schema_events_transactions_history_long_size": "0",
	"performance_schema_events_transactions_history_size":      "0",
	"performance_schema_session_connect_attrs_size":            "0",
	"performance_schema_max_memory_classes":                    "0",
	"performance_schema_max_stage_classes":                     "0",
	"performance_schema_max_mutex_classes":                     "0",
	"performance_schema_max_rwlock_classes":                    "0",
	"performance_schema_max_cond_classes":                      "0",
	"performance_schema_max_table_instances":                   "0",
	"performance_schema_max_table_handles":                     "0",
	"performance_schema_max_table_lock_stat":                   "0",
	"performance_schema_max_index_stat":                        "0",
	"performance_schema_max_socket_classes":                    "0",
	"performance_schema_max_program_instances":                 "0",
	"performance_schema_max_prepared_statements_instances":     "0",
}
