// Package mariadb runs managed MariaDB instances: mariadb-install-db into the storage
// target (the redo log and the binary log optionally on a second one), settings from
// the instance's memory, the server as the mysql user when storbench runs as root.
//
// Layout: everything the server has lives in DIR/data, so that destroy (which removes
// only the names storbench creates) leaves nothing behind: DIR/data/my.cnf (the
// settings), error.log, mariadbd.pid, mariadbd.sock, tmp/, and the data directory
// DIR/data/db. With a WAL path, the redo log (ib_logfile0) and the binary log live in
// WAL/wal.
//
// Access: root@localhost without a password, through the unix socket only, in a
// directory only the server's user (and root) may enter: storbench's own way in. The
// DSN names the user storbench@127.0.0.1 (all privileges on tpcc, PROCESS) with a
// random password kept in the instance's state file (0600).
package mariadb

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"database/sql"
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
	"syscall"
	"time"

	"github.com/go-sql-driver/mysql"

	"github.com/storbench/storbench/internal/input"
	"github.com/storbench/storbench/internal/instance"
	"github.com/storbench/storbench/internal/instance/localserver"
	"github.com/storbench/storbench/internal/instance/mariadb/mariadbserver"
)

func init() { instance.Register("mariadb", server{}) }

type server struct{}

// The database created in every instance, the one its DSN names, and the user the
// DSN connects as.
const (
	Database = "tpcc"
	User     = "storbench"
)

// Timeouts: a server that is not ready within a minute failed; a clean shutdown
// flushes the whole buffer pool, which on slow storage takes a while.
const (
	startTimeout = time.Minute
	stopTimeout  = 5 * time.Minute
)

func serverDir(st *instance.State) string { return filepath.Join(st.Path, "data") }
func dataDir(st *instance.State) string   { return filepath.Join(serverDir(st), "db") }
func confFile(st *instance.State) string  { return filepath.Join(serverDir(st), "my.cnf") }
func pidFile(st *instance.State) string   { return filepath.Join(serverDir(st), "mariadbd.pid") }
func errorLog(st *instance.State) string  { return filepath.Join(serverDir(st), "error.log") }

// logDir holds the redo log and the binary log: the WAL target's wal directory, else
// the data directory.
func logDir(st *instance.State) string {
	if st.WALPath == "" {
		return ""
	}
	return filepath.Join(st.WALPath, "wal")
}

// socketPath is the server's unix socket: in the server directory, unless that path
// is longer than a socket's (107 bytes), then in a short directory of its own in the
// temp dir named after the instance's path (socketDir).
func socketPath(st *instance.State) string {
	if s := st.Settings["socket"]; s != "" {
		return s
	}
	if p := filepath.Join(serverDir(st), "mariadbd.sock"); len(p) <= 100 {
		return p
	}
	sum := sha256.Sum256([]byte(st.Path))
	return filepath.Join(os.TempDir(), "storbench-mdb-"+hex.EncodeToString(sum[:6]), "mariadbd.sock")
}

// socketDir is the socket's own directory when it is not the server directory.
func socketDir(st *instance.State) string {
	if d := filepath.Dir(socketPath(st)); d != serverDir(st) {
		return d
	}
	return ""
}

// Reserve is the memory left beside the buffer pool within the instance's limit: the
// server's own (about 80 MB at start: two 16 MB log buffers, code, heap) and its
// sessions' buffers.
const Reserve = 128 << 20

// minBufferPool is the least buffer pool an instance gets, however small its memory.
const minBufferPool = 32 << 20

// MinMemory implements instance.Server: the least buffer pool beside the Reserve.
func (server) MinMemory() int64 { return minBufferPool + Reserve }

// CacheSetting implements instance.Server: the buffer pool is InnoDB's whole cache.
func (server) CacheSetting() string { return "innodb_buffer_pool_size" }

// BufferPool is innodb_buffer_pool_size for an instance of memoryBytes: 70% of it,
// MariaDB's guidance for a server mostly of InnoDB (60-70% of the memory available to
// it), but at most memory − Reserve, at least 32 MB. InnoDB reads and writes its data
// files with O_DIRECT, so unlike PostgreSQL's (which leaves the rest of memory to the
// page cache: shared_buffers = memory/4) the buffer pool is the whole cache, and what
// is left of the limit must hold the server and its sessions.
func BufferPool(memoryBytes int64) int64 {
	bp := min(memoryBytes*7/10, memoryBytes-Reserve)
	return max(bp, minBufferPool)
}

// Settings are the my.cnf parameters of an instance besides its paths and port.
// Durability stays on: the redo log is flushed at each commit, the binary log is on
// and synced at each commit, the doublewrite buffer protects pages from torn writes.
// Without a memory size the buffer pool is MariaDB's default (128M).
func Settings(memoryBytes int64, maxConnections int) map[string]string {
	s := map[string]string{
		"max_connections":                strconv.Itoa(maxConnections),
		"innodb_flush_log_at_trx_commit": "1",
		"innodb_doublewrite":             "1",
		"innodb_flush_method":            "O_DIRECT",
		"sync_binlog":                    "1",
		"server_id":                      "1",
		// With the binary log on, creating functions and triggers takes SUPER unless
		// the server trusts their creators: storbench's user has no SUPER.
		"log_bin_trust_function_creators": "1",
		"local_infile":                    "1",
		"character_set_server":            "utf8mb4",
		"collation_server":                "utf8mb4_bin",
		"skip_name_resolve":               "1",
		"bind_address":                    "127.0.0.1",
	}
	if memoryBytes > 0 {
		s["innodb_buffer_pool_size"] = fmt.Sprintf("%dM", BufferPool(memoryBytes)>>20)
	}
	return s
}

// credential is the user the server runs as: mysql when storbench is root (mariadbd
// refuses root), else storbench's own (nil).
func credential() (*syscall.Credential, error) {
	if os.Geteuid() != 0 {
		return nil, nil
	}
	return localserver.ServiceUser("mysql")
}

// Init implements instance.Server: mariadb-install-db into DIR/data/db with the
// instance's my.cnf. MariaDB instances cannot be standbys.
func (server) Init(ctx context.Context, st *instance.State, primary *instance.State) error {
	if primary != nil || st.ReplicaOf != "" {
		return fmt.Errorf("%w: --replica-of is not supported for mariadb: replicas are postgres-only", input.ErrInvalid)
	}
	bin, installDB, err := mariadbserver.Binaries()
	if err != nil {
		return fmt.Errorf("%w: %v", input.ErrInvalid, err)
	}
	cred, err := credential()
	if err != nil {
		return err
	}
	for _, d := range []string{serverDir(st), dataDir(st), filepath.Join(serverDir(st), "tmp"), logDir(st)} {
		if d != "" {
			if err := localserver.PrepareDir(d, cred); err != nil {
				return err
			}
		}
	}
	if st.Port == 0 {
		if st.Port, err = localserver.FreePort(); err != nil {
			return err
		}
	}
	pw := make([]byte, 16)
	if _, err := rand.Read(pw); err != nil {
		return err
	}
	st.Password = hex.EncodeToString(pw)
	st.BinDir = filepath.Dir(bin)
	st.Settings = Settings(st.MemoryBytes, st.MaxConnections)
	logs := dataDir(st)
	if d := logDir(st); d != "" {
		logs = d
		st.Settings["innodb_log_group_home_dir"] = d
	}
	st.Settings["log_bin"] = filepath.Join(logs, "mariadb-bin")
	st.Settings["socket"] = socketPath(st)
	if len(st.Settings["socket"]) > 107 {
		return fmt.Errorf("%w: the server's socket path %s is longer than 107 bytes: set TMPDIR to a short directory", input.ErrInvalid, st.Settings["socket"])
	}
	if err := prepareSocketDir(st, cred); err != nil {
		return err
	}
	if err := writeConf(st, cred); err != nil {
		return err
	}
	extra := filepath.Join(serverDir(st), "init.sql")
	if err := os.WriteFile(extra, []byte(mariadbserver.RootOnSocketSQL), 0o644); err != nil {
		return err
	}
	defer os.Remove(extra)
	// --defaults-file must come first; the others go on to mariadbd --bootstrap.
	if _, err := run(ctx, cred, nil, installDB, "--defaults-file="+confFile(st),
		"--auth-root-authentication-method=normal", "--skip-test-db", "--extra-file="+extra); err != nil {
		return err
	}
	st.Version, err = version(ctx, bin)
	return err
}

// writeConf writes the instance's my.cnf: its paths, port and settings. The file is
// the server's only option file (--defaults-file), so /etc/mysql plays no part.
func writeConf(st *instance.State, cred *syscall.Credential) error {
	opts := maps.Clone(st.Settings)
	opts["datadir"] = dataDir(st)
	opts["tmpdir"] = filepath.Join(serverDir(st), "tmp")
	opts["pid_file"] = pidFile(st)
	opts["log_error"] = errorLog(st)
	opts["port"] = strconv.Itoa(st.Port)
	var b strings.Builder
	fmt.Fprintf(&b, "# written by storbench for instance %s; storbench instance destroy --name %s removes it\n[mysqld]\n", st.Name, st.Name)
	for _, k := range slices.Sorted(maps.Keys(opts)) {
		fmt.Fprintf(&b, "%s = %s\n", k, opts[k])
	}
	if err := os.WriteFile(confFile(st), []byte(b.String()), 0o640); err != nil {
		return err
	}
	// The server's stdout and stderr (what it says before its error log is open).
	f, err := os.OpenFile(errorLog(st), os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o640)
	if err != nil {
		return err
	}
	f.Close()
	if cred != nil {
		for _, p := range []string{confFile(st), errorLog(st)} {
			if err := os.Chown(p, int(cred.Uid), int(cred.Gid)); err != nil {
				return err
			}
		}
	}
	return nil
}

// prepareSocketDir creates the socket's own short directory (see socketPath) for the
// server's user, or checks that an existing one is that user's alone: a directory in
// the shared temp dir may have been made by someone else.
func prepareSocketDir(st *instance.State, cred *syscall.Credential) error {
	dir := socketDir(st)
	if dir == "" {
		return nil
	}
	uid := os.Getuid()
	if cred != nil {
		uid = int(cred.Uid)
	}
	fi, err := os.Lstat(dir)
	if errors.Is(err, os.ErrNotExist) {
		if err := os.Mkdir(dir, 0o700); err != nil {
			return err
		}
		if cred != nil {
			return os.Chown(dir, int(cred.Uid), int(cred.Gid))
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

// serverBinary is mariadbd (or mysqld) in the directory that created the instance.
func serverBinary(st *instance.State) (string, error) {
	for _, n := range []string{"mariadbd", "mysqld"} {
		p := filepath.Join(st.BinDir, n)
		if fi, err := os.Stat(p); err == nil && fi.Mode().IsRegular() && fi.Mode()&0o111 != 0 {
			return p, nil
		}
	}
	return "", fmt.Errorf("%w: no mariadbd in %s, whose server created instance %s: reinstall mariadb-server", input.ErrInvalid, st.BinDir, st.Name)
}

// tool finds a client program (mariadb-backup, mariadb-dump, mariadb): beside the
// server, in $STORBENCH_MARIADB_BINDIR, on PATH, in /usr/bin.
func tool(st *instance.State, names ...string) (string, error) {
	dirs := []string{st.BinDir, os.Getenv("STORBENCH_MARIADB_BINDIR")}
	dirs = append(dirs, filepath.SplitList(os.Getenv("PATH"))...)
	dirs = append(dirs, "/usr/bin", "/usr/local/mysql/bin")
	for _, n := range names {
		for _, d := range dirs {
			if d == "" {
				continue
			}
			p := filepath.Join(d, n)
			if fi, err := os.Stat(p); err == nil && fi.Mode().IsRegular() && fi.Mode()&0o111 != 0 {
				return p, nil
			}
		}
	}
	return "", fmt.Errorf("%w: %s not found: install it (Debian: apt-get install mariadb-backup mariadb-client)", input.ErrInvalid, names[0])
}

// Start implements instance.Server: mariadbd with the instance's my.cnf, as the
// server's user, in a session (and process group) of its own so that it outlives
// storbench; it waits until root can connect, then makes sure the database and the
// DSN's user exist (the user with the state's password).
func (server) Start(ctx context.Context, st *instance.State) (int, error) {
	bin, err := serverBinary(st)
	if err != nil {
		return 0, err
	}
	cred, err := credential()
	if err != nil {
		return 0, err
	}
	if err := prepareSocketDir(st, cred); err != nil {
		return 0, err
	}
	out, err := os.OpenFile(errorLog(st), os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o640)
	if err != nil {
		return 0, err
	}
	offset, _ := out.Seek(0, 2) // the log from here on is this start's
	cmd := exec.Command(bin, "--defaults-file="+confFile(st))
	cmd.Dir = "/"
	cmd.Stdout, cmd.Stderr = out, out
	// No Pdeathsig: the server is meant to outlive this process.
	cmd.SysProcAttr = &syscall.SysProcAttr{Credential: cred, Setsid: true}
	err = cmd.Start()
	out.Close()
	if err != nil {
		return 0, fmt.Errorf("start mariadbd: %w", err)
	}
	pid := cmd.Process.Pid
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }() // reaps it should it exit while storbench runs

	fail := func(err error) (int, error) {
		_ = syscall.Kill(-pid, syscall.SIGKILL)
		return 0, fmt.Errorf("%w\n%s", err, logSince(st, offset, 30))
	}
	wait, cancel := context.WithTimeout(ctx, startTimeout)
	defer cancel()
	db := rootDB(st)
	defer db.Close()
	for {
		try, cancelTry := context.WithTimeout(wait, 2*time.Second)
		err = db.PingContext(try)
		cancelTry()
		if err == nil {
			break
		}
		select {
		case exit := <-exited:
			return 0, fmt.Errorf("mariadbd exited while starting (%v)\n%s", exit, logSince(st, offset, 30))
		case <-wait.Done():
			return fail(fmt.Errorf("mariadbd did not accept connections on %s: %w (last: %v)", socketPath(st), wait.Err(), err))
		case <-time.After(20 * time.Millisecond):
		}
	}
	if err := ensureUser(ctx, db, st.Password); err != nil {
		return fail(err)
	}
	return pid, nil
}

// ensureUser creates the database and the DSN's user, and sets that user's password
// to the state's (a physical backup restored may come from another instance). The
// statements stay out of the binary log, which would hold the password.
func ensureUser(ctx context.Context, db *sql.DB, password string) error {
	conn, err := db.Conn(ctx)
	if err != nil {
		return err
	}
	defer conn.Close()
	acct := quoteString(User) + "@'127.0.0.1'"
	for _, q := range []string{
		"SET SESSION sql_log_bin = 0",
		"CREATE DATABASE IF NOT EXISTS " + quoteIdent(Database) + " CHARACTER SET utf8mb4 COLLATE utf8mb4_bin",
		"CREATE USER IF NOT EXISTS " + acct + " IDENTIFIED BY " + quoteString(password),
		"ALTER USER " + acct + " IDENTIFIED BY " + quoteString(password),
		// PROCESS: the InnoDB counters (SHOW ENGINE INNODB STATUS, INNODB_METRICS).
		"GRANT ALL PRIVILEGES ON " + quoteIdent(Database) + ".* TO " + acct,
		"GRANT PROCESS ON *.* TO " + acct,
	} {
		if _, err := conn.ExecContext(ctx, q); err != nil {
			// The statement may hold the password: name it by its first words.
			words := strings.Fields(q)
			return fmt.Errorf("%s: %w", strings.Join(words[:min(3, len(words))], " "), err)
		}
	}
	return nil
}

// rootDB connects as root through the socket.
func rootDB(st *instance.State) *sql.DB {
	cfg := mysql.NewConfig()
	cfg.User, cfg.Net, cfg.Addr = "root", "unix", socketPath(st)
	cfg.Timeout = 2 * time.Second
	c, _ := mysql.NewConnector(cfg) // fails only on a bad TLS or server-key option
	return sql.OpenDB(c)
}

// Stop implements instance.Server: SIGTERM, a clean InnoDB shutdown (open sessions
// are ended), and waits for the server to exit; killed if that takes stopTimeout.
func (s server) Stop(ctx context.Context, st *instance.State) error {
	pid := s.PID(st)
	if pid == 0 {
		return nil
	}
	if err := syscall.Kill(pid, syscall.SIGTERM); err != nil && !errors.Is(err, syscall.ESRCH) {
		return fmt.Errorf("stop mariadbd (pid %d): %w", pid, err)
	}
	wait, cancel := context.WithTimeout(ctx, stopTimeout)
	defer cancel()
	for alive(pid, st) {
		select {
		case <-wait.Done():
			_ = syscall.Kill(pid, syscall.SIGKILL)
			return fmt.Errorf("mariadbd (pid %d) killed: its shutdown took too long: %w", pid, wait.Err())
		case <-time.After(20 * time.Millisecond):
		}
	}
	if dir := socketDir(st); dir != "" {
		_ = os.Remove(dir) // empty once the server has gone
	}
	if tail := logTail(st, 5); !strings.Contains(tail, "Shutdown complete") {
		return fmt.Errorf("mariadbd did not shut down cleanly:\n%s", logTail(st, 30))
	}
	return nil
}

// PID implements instance.Server: the pid file's process when it runs and is this
// instance's mariadbd (after a crash the file can name a pid since reused). It needs
// no binaries: a server whose MariaDB was uninstalled must still be seen and stopped.
func (server) PID(st *instance.State) int {
	b, err := os.ReadFile(pidFile(st))
	if err != nil {
		return 0
	}
	pid, err := strconv.Atoi(strings.TrimSpace(string(b)))
	if err != nil || pid <= 0 || !alive(pid, st) {
		return 0
	}
	return pid
}

// alive tells whether pid runs this instance's server: its command line names the
// instance's my.cnf (a zombie has none).
func alive(pid int, st *instance.State) bool {
	cmdline, err := os.ReadFile(fmt.Sprintf("/proc/%d/cmdline", pid))
	if err != nil {
		return false
	}
	return slices.Contains(strings.Split(string(cmdline), "\x00"), "--defaults-file="+confFile(st))
}

// Backup implements instance.Server: mariadb-backup (a physical copy, prepared so
// that it can be copied back as it is), or mariadb-dump of the database in one
// transaction for a logical backup. Neither runs in parallel: how.Jobs is not used.
func (server) Backup(ctx context.Context, st *instance.State, dir string, how instance.BackupMethod) error {
	cred, err := credential()
	if err != nil {
		return err
	}
	if err := localserver.PrepareDir(dir, cred); err != nil {
		return err
	}
	if how.Logical {
		dump, err := tool(st, "mariadb-dump", "mysqldump")
		if err != nil {
			return err
		}
		_, err = run(ctx, cred, nil, dump, "--no-defaults", "--user=root", "--socket="+socketPath(st),
			"--single-transaction", "--routines", "--triggers", "--events", "--hex-blob",
			"--default-character-set=utf8mb4", "--add-drop-database", "--databases", Database,
			"--result-file="+dumpFile(dir))
		return err
	}
	backup, err := tool(st, "mariadb-backup", "mariabackup")
	if err != nil {
		return err
	}
	if _, err := run(ctx, cred, nil, backup, "--defaults-file="+confFile(st), "--backup",
		"--target-dir="+dir, "--user=root", "--socket="+socketPath(st)); err != nil {
		return err
	}
	_, err = run(ctx, cred, nil, backup, "--no-defaults", "--prepare", "--target-dir="+dir)
	return err
}

func dumpFile(dir string) string { return filepath.Join(dir, Database+".sql") }

// Restore implements instance.Server: a physical backup is copied back beside the
// stopped server's data directory (and log directory), which it then replaces; a logical one is fed
// to the running server, which drops the database and creates it from the dump.
func (s server) Restore(ctx context.Context, st *instance.State, dir string, how instance.BackupMethod) error {
	cred, err := credential()
	if err != nil {
		return err
	}
	if how.Logical {
		client, err := tool(st, "mariadb", "mysql")
		if err != nil {
			return err
		}
		f, err := os.Open(dumpFile(dir))
		if err != nil {
			return fmt.Errorf("%w: %s is not a mariadb logical backup: %v", input.ErrInvalid, dir, err)
		}
		defer f.Close()
		_, err = run(ctx, cred, f, client, "--no-defaults", "--user=root", "--socket="+socketPath(st),
			"--default-character-set=utf8mb4", "--binary-mode")
		return err
	}
	if _, err := os.Stat(filepath.Join(dir, "xtrabackup_checkpoints")); err != nil {
		return fmt.Errorf("%w: %s is not a mariadb physical backup (no xtrabackup_checkpoints)", input.ErrInvalid, dir)
	}
	if pid := s.PID(st); pid != 0 {
		return fmt.Errorf("the server (pid %d) must be stopped to restore a physical backup", pid)
	}
	backup, err := tool(st, "mariadb-backup", "mariabackup")
	if err != nil {
		return err
	}
	// Only the instance's own data and log directories are replaced, by copies made
	// beside them (the server's options point the copy there), once complete.
	return instance.ReplaceDirs([]string{dataDir(st), logDir(st)}, func(staged []string) error {
		args := []string{"--defaults-file=" + confFile(st), "--copy-back", "--target-dir=" + dir, "--datadir=" + staged[0]}
		if staged[1] != "" {
			args = append(args, "--innodb-log-group-home-dir="+staged[1])
		}
		for _, d := range staged {
			if d == "" {
				continue
			}
			if err := localserver.PrepareDir(d, cred); err != nil {
				return err
			}
		}
		_, err := run(ctx, cred, nil, backup, args...)
		return err
	})
}

// SetSyncStandby implements instance.Server: MariaDB instances have no standbys.
func (server) SetSyncStandby(context.Context, *instance.State, string) error {
	return fmt.Errorf("%w: synchronous standbys are not supported for mariadb: replicas are postgres-only", input.ErrInvalid)
}

// DSN is the instance's URL for build, run and check:
// mysql://storbench:PASSWORD@127.0.0.1:PORT/tpcc.
func (server) DSN(st *instance.State) string {
	u := url.URL{Scheme: "mysql", User: url.UserPassword(User, st.Password),
		Host: net.JoinHostPort("127.0.0.1", strconv.Itoa(st.Port)), Path: "/" + Database}
	return u.String()
}

// version is the server binary's own version line ("mariadbd Ver 10.11.19-MariaDB …").
func version(ctx context.Context, bin string) (string, error) {
	out, err := exec.CommandContext(ctx, bin, "--version").Output()
	if err != nil {
		return "", fmt.Errorf("%s --version: %w", bin, err)
	}
	// It begins with argv[0], the binary's path: keep its name.
	f := strings.Fields(string(out))
	if len(f) > 0 {
		f[0] = filepath.Base(f[0])
	}
	return strings.Join(f, " "), nil
}

// run runs prog as cred's user (nil: as this process) with stdin, and returns its
// output; an error carries the output's last lines. It is stopped with ctx and with
// storbench.
func run(ctx context.Context, cred *syscall.Credential, stdin *os.File, prog string, args ...string) (string, error) {
	var in io.Reader
	if stdin != nil {
		in = stdin
	}
	out, err := localserver.Run(ctx, cred, in, prog, args...)
	if err != nil {
		return out, fmt.Errorf("%w: %s", err, lastLines(out, 15))
	}
	return out, nil
}

// logTail is the last n lines of the error log.
func logTail(st *instance.State, n int) string { return logSince(st, 0, n) }

// logSince is the last n lines the error log got from offset on.
func logSince(st *instance.State, offset int64, n int) string {
	b, _ := os.ReadFile(errorLog(st))
	if offset > 0 && offset <= int64(len(b)) {
		b = b[offset:]
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

func quoteIdent(s string) string { return "`" + strings.ReplaceAll(s, "`", "``") + "`" }

func quoteString(s string) string {
	return "'" + strings.NewReplacer(`\`, `\\`, `'`, `''`).Replace(s) + "'"
}
