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
	"encoding/hex"
	"errors"
	"fmt"
	"maps"
	"path/filepath"
	"strconv"
	"syscall"

	"github.com/storbench/storbench/internal/engine/sqldb"
	"github.com/storbench/storbench/internal/input"
	"github.com/storbench/storbench/internal/instance"
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

func serverDir(st *instance.State) string { return filepath.Join(st.Path, "data") }
func dataDir(st *instance.State) string   { return filepath.Join(serverDir(st), "db") }

// logDir holds the redo log and the binary log: the WAL target's wal directory, else
// the data directory.
func logDir(st *instance.State) string {
	if st.WALPath == "" {
		return ""
	}
	return filepath.Join(st.WALPath, "wal")
}

// options lay the instance's server out in its directories.
func options(st *instance.State) mariadbserver.Options {
	return mariadbserver.Options{BinDir: st.BinDir, Dir: serverDir(st), DataDir: dataDir(st), LogDir: logDir(st), Port: st.Port,
		Socket: st.Settings["socket"], Settings: st.Settings, Outlive: true,
		Comment: fmt.Sprintf("# written by storbench for instance %s; storbench instance destroy --name %s removes it", st.Name, st.Name)}
}

// serverOf is the instance's server, run by the binaries that created it.
func serverOf(st *instance.State) (*mariadbserver.Server, error) {
	return mariadbserver.At(st.BinDir, options(st))
}

// Reserve is the memory left beside the buffer pool within the instance's limit: the
// server's own (about 80 MB at start: two 16 MB log buffers, code, heap; the wait
// profile's performance_schema adds 38 MB at 200 connections, mariadbserver's
// WaitProfileSettings) and its sessions' buffers.
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

// PreparedStatements is max_prepared_stmt_count for an instance of maxConnections:
// room for every connection's session to prepare the most statements a mode
// prepares, and never below MariaDB's default.
func PreparedStatements(maxConnections int) int {
	return max(defaultPreparedStatements, maxConnections*sqldb.MaxStatementsPerSession)
}

// defaultPreparedStatements is MariaDB's default max_prepared_stmt_count.
const defaultPreparedStatements = 16382

// Settings are the my.cnf parameters of an instance besides its paths and port.
// Durability stays on: the redo log is flushed at each commit, the binary log is on
// and synced at each commit, the doublewrite buffer protects pages from torn writes.
// Without a memory size the buffer pool is MariaDB's default (128M).
func Settings(memoryBytes int64, maxConnections int) map[string]string {
	s := map[string]string{
		"max_connections": strconv.Itoa(maxConnections),
		// Every connection's session prepares its statements: MariaDB's default
		// limit, 16,382 for the whole server, holds 3,276 procedures-mode users.
		"max_prepared_stmt_count":        strconv.Itoa(PreparedStatements(maxConnections)),
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
	maps.Copy(s, mariadbserver.WaitProfileSettings)
	return s
}

// Init implements instance.Server: mariadb-install-db into DIR/data/db with the
// instance's my.cnf. MariaDB instances cannot be standbys (CheckReplica): primary is nil.
func (server) Init(ctx context.Context, st *instance.State, _ *instance.State) error {
	pw := make([]byte, 16)
	if _, err := rand.Read(pw); err != nil {
		return err
	}
	st.Password = hex.EncodeToString(pw)
	st.Settings = Settings(st.MemoryBytes, st.MaxConnections)
	logs := dataDir(st)
	if d := logDir(st); d != "" {
		logs = d
		st.Settings["innodb_log_group_home_dir"] = d
	}
	st.Settings["log_bin"] = filepath.Join(logs, "mariadb-bin")
	s, err := mariadbserver.Init(ctx, options(st))
	if errors.Is(err, mariadbserver.ErrNoBinaries) {
		return fmt.Errorf("%w: %w", input.ErrInvalid, err)
	}
	if err != nil {
		return err
	}
	st.Port, st.BinDir, st.Settings["socket"] = s.Port, s.BinDir(), s.Socket
	st.Version, err = s.Version(ctx)
	return err
}

// Start implements instance.Server: mariadbd with the instance's my.cnf, as the
// server's user, in a session (and process group) of its own so that it outlives
// storbench; it waits until root can connect, then makes sure the database and the
// DSN's user exist (the user with the state's password).
func (server) Start(ctx context.Context, st *instance.State) (int, error) {
	s, err := serverOf(st)
	if err != nil {
		return 0, err
	}
	err = s.Start(ctx)
	if errors.Is(err, mariadbserver.ErrNoBinaries) {
		return 0, fmt.Errorf("%w: no mariadbd in %s, whose server created instance %s: reinstall mariadb-server", input.ErrInvalid, st.BinDir, st.Name)
	}
	if err != nil {
		return 0, err
	}
	if err := errors.Join(s.CreateDatabase(ctx, Database), s.CreateUser(ctx, User, st.Password, Database)); err != nil {
		if pid := s.PID(); pid != 0 {
			_ = syscall.Kill(-pid, syscall.SIGKILL)
		}
		return 0, fmt.Errorf("%w\n%s", err, s.LogTail(30))
	}
	return s.PID(), nil
}

// Stop implements instance.Server: SIGTERM, a clean InnoDB shutdown (open sessions
// are ended), and waits for the server to exit; killed if that takes five minutes.
func (server) Stop(ctx context.Context, st *instance.State) error {
	s, err := serverOf(st)
	if err != nil {
		return err
	}
	return s.Stop(ctx)
}

// PID implements instance.Server. It needs no binaries: a server whose MariaDB was
// uninstalled must still be seen and stopped.
func (server) PID(st *instance.State) int { return mariadbserver.PIDOf(serverDir(st)) }

// LogFile implements instance.Server.
func (server) LogFile(st *instance.State) string { return mariadbserver.ErrorLogOf(serverDir(st)) }

// Backup implements instance.Server: mariadb-backup (a physical copy, prepared so
// that it can be copied back as it is), or mariadb-dump of the database in one
// transaction for a logical backup. Neither runs in parallel: how.Jobs is not used.
func (server) Backup(ctx context.Context, st *instance.State, dir string, how instance.BackupMethod) error {
	s, err := serverOf(st)
	if err != nil {
		return err
	}
	if how.Logical {
		return s.Dump(ctx, dir, Database)
	}
	return s.BaseBackup(ctx, dir)
}

// Restore implements instance.Server: a physical backup is copied back beside the
// stopped server's data directory (and log directory), which it then replaces; a
// logical one is fed to the running server, which drops the database and creates it
// from the dump.
func (server) Restore(ctx context.Context, st *instance.State, dir string, how instance.BackupMethod) error {
	s, err := serverOf(st)
	if err != nil {
		return err
	}
	if how.Logical {
		return s.LoadDump(ctx, dir, Database)
	}
	if pid := s.PID(); pid != 0 {
		return fmt.Errorf("the server (pid %d) must be stopped to restore a physical backup", pid)
	}
	// Only the instance's own data and log directories are replaced, by copies made
	// beside them, once complete.
	return instance.ReplaceDirs([]string{dataDir(st), logDir(st)}, func(staged []string) error {
		return s.RestoreBase(ctx, dir, staged[0], staged[1])
	})
}

// CheckReplica implements instance.Server: MariaDB instances have no standbys.
func (server) CheckReplica() error {
	return input.Errorf("replica_of", "{replica_of} is not supported for {engine} mariadb: replicas are postgres-only")
}

// CheckTools implements instance.Server: MariaDB's backup tools are found on their
// own (mariadb-backup, mariadb-dump), not in the server's build directory; no cold
// copy is made of it.
func (server) CheckTools(_ string, how instance.BackupMethod) error {
	if how.Cold {
		return input.Errorf("method", "a copy of a stopped MariaDB server's files is not made: its backups are mariadb-backup's or mariadb-dump's")
	}
	return nil
}

// CheckBinDir implements instance.Server: mariadbd and its install tool
// (mariadbserver.BinariesIn).
func (server) CheckBinDir(dir string) error {
	_, _, err := mariadbserver.BinariesIn(dir)
	return err
}

// Installed implements instance.Server: MariaDB's server binaries
// (mariadbserver.Binaries).
func (server) Installed() error {
	_, _, err := mariadbserver.Binaries()
	return err
}

// SetSyncStandby implements instance.Server: MariaDB instances have no standbys.
func (server) SetSyncStandby(context.Context, *instance.State, string) error {
	return fmt.Errorf("%w: synchronous standbys are not supported for mariadb: replicas are postgres-only", input.ErrInvalid)
}

// DSN is the instance's URL for build, run and check:
// mysql://storbench:PASSWORD@127.0.0.1:PORT/tpcc.
func (server) DSN(st *instance.State) string {
	return mariadbserver.URL(st.Port, User, st.Password, Database)
}
