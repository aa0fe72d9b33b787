// Package postgres runs managed PostgreSQL instances: initdb into the storage target
// (the WAL optionally on a second one), settings from the instance's memory, the
// server as the postgres user when storbench runs as root.
//
// Access: TCP on loopback only, with a role's password (scram-sha-256); the DSN names
// the superuser postgres with a random password kept in the instance's state file
// (0600). The server only ever gets its SCRAM verifier; its child programs
// (pg_basebackup, pg_dump, pg_restore) get it in their environment, a standby in its
// primary_conninfo.
package postgres

import (
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/jackc/pgx/v5/pgconn"

	"github.com/storbench/storbench/internal/input"
	"github.com/storbench/storbench/internal/instance"
	"github.com/storbench/storbench/internal/instance/postgres/pgserver"
	"github.com/storbench/storbench/internal/remote"
)

func init() { instance.Register("postgres", server{}) }

type server struct{}

// MinMemory implements instance.Server: shared_buffers (a quarter) of 16 MB, the
// server's processes and a few sessions; below it the server is killed by its limit
// or the step measures swapping.
func (server) MinMemory() int64 { return 64 << 20 }

// CacheSetting implements instance.Server: shared_buffers is a quarter of the memory.
func (server) CacheSetting() string { return "shared_buffers" }

// CheckReplica implements instance.Server: a standby starts as a base backup of its
// primary.
func (server) CheckReplica() error { return nil }

// CheckBinDir implements instance.Server.
func (server) CheckBinDir(dir string) error { return pgserver.CheckBinDir(dir) }

// CheckTools implements instance.Server: pg_basebackup for a physical backup or a
// standby, pg_dump and pg_restore for a logical one, of the instance's own build
// (some bundles ship only initdb, pg_ctl and postgres).
func (server) CheckTools(dir string, how instance.BackupMethod) error {
	if how.Cold {
		return nil // cp
	}
	if dir == "" {
		var err error
		if dir, err = pgserver.BinDir(); err != nil {
			return nil // Installed says so
		}
	}
	progs := []string{"pg_basebackup"}
	if how.Logical {
		progs = []string{"pg_dump", "pg_restore"}
	}
	return pgserver.CheckTools(dir, progs...)
}

// Installed implements instance.Server: PostgreSQL's server binaries (pgserver.BinDir).
func (server) Installed() error {
	_, err := pgserver.BinDir()
	return err
}

// Database is the database created in every instance, the one its DSN names.
const Database = "tpcc"

func dataDir(st *instance.State) string { return filepath.Join(st.Path, "data") }

func walDir(st *instance.State) string {
	if st.WALPath == "" {
		return ""
	}
	return filepath.Join(st.WALPath, "wal")
}

// Settings are the postgresql.conf parameters of an instance. With a memory size:
// shared_buffers = memory / 4 and effective_cache_size = memory × 3 / 4 (PostgreSQL's
// own guidance for a dedicated server). Durability stays on: a storage benchmark
// without fsync measures nothing.
func Settings(memoryBytes int64, maxConnections int) map[string]string {
	s := map[string]string{
		"max_connections":    strconv.Itoa(maxConnections),
		"fsync":              "on",
		"synchronous_commit": "on",
		"full_page_writes":   "on",
	}
	if memoryBytes > 0 {
		s["shared_buffers"] = megabytes(memoryBytes / 4)
		s["effective_cache_size"] = megabytes(memoryBytes * 3 / 4)
	}
	return s
}

func megabytes(b int64) string { return fmt.Sprintf("%dMB", max(b>>20, 1)) }

// Init implements instance.Server; a standby starts as a base backup of its primary,
// whose roles, and so password, it has.
func (server) Init(ctx context.Context, st *instance.State, primary *instance.State) error {
	settings := Settings(st.MemoryBytes, st.MaxConnections)
	st.Password = rand.Text()
	if primary != nil {
		if primary.Password == "" {
			return fmt.Errorf("%w: instance %s has no password yet (an earlier storbench created it): storbench instance stop --name %s, then start, gives it one", input.ErrInvalid, primary.Name, primary.Name)
		}
		st.Password = primary.Password
	}
	bin := st.BinDir
	if bin == "" && primary != nil {
		bin = primary.BinDir // a standby replays its primary's WAL: the same build
	}
	opts := pgserver.Options{BinDir: bin, Dir: dataDir(st), WALDir: walDir(st), Port: st.Port, Settings: settings, Password: st.Password}
	var s *pgserver.Server
	var err error
	if primary != nil {
		// A standby is its primary's physical backup: the tools of a backup (of the
		// default build where none is named).
		if err := (server{}).CheckTools(bin, instance.BackupMethod{}); err != nil {
			return err
		}
		s, err = pgserver.InitStandby(ctx, primary.Port, st.Name, opts)
	} else {
		s, err = pgserver.Init(ctx, opts)
	}
	if errors.Is(err, pgserver.ErrNoBinaries) {
		return fmt.Errorf("%w: %w", input.ErrInvalid, err)
	}
	if err != nil {
		return err
	}
	st.Port, st.BinDir, st.Settings = s.Port, s.BinDir(), settings
	st.Version, err = s.Version(ctx)
	return err
}

// Start implements instance.Server; the first start creates the tpcc database. An
// instance created before instances had passwords (it trusted every local user) gets
// one first.
func (server) Start(ctx context.Context, st *instance.State) (int, error) {
	s, err := serverOf(st)
	if err != nil {
		return 0, err
	}
	if st.Password == "" {
		if err := requirePassword(ctx, s, st); err != nil {
			return 0, err
		}
	}
	if err := s.Start(ctx); err != nil {
		return 0, err
	}
	var pgErr *pgconn.PgError
	// 42P04: it exists; 25006: a read-only standby, which has it from its primary.
	if err := s.CreateDatabase(ctx, Database); err != nil && !(errors.As(err, &pgErr) && (pgErr.Code == "42P04" || pgErr.Code == "25006")) {
		return 0, fmt.Errorf("create database %s: %w", Database, err)
	}
	return s.PID(), nil
}

// requirePassword gives the stopped server of an instance that has none (created by
// an earlier storbench, whose instances trusted every local user) a new password,
// which st records once the instance has started (else the next start does this
// again). A standby cannot take one (it replicates its primary's roles): it is
// refused with how to make a new one.
func requirePassword(ctx context.Context, s *pgserver.Server, st *instance.State) error {
	if _, err := os.Stat(filepath.Join(s.Dir, "standby.signal")); err == nil {
		return fmt.Errorf("%w: instance %s is a standby created by an earlier storbench, without a password: storbench instance destroy --name %s, then create it again with --replica-of", input.ErrInvalid, st.Name, st.Name)
	}
	s.Password = rand.Text()
	if err := s.RequirePassword(ctx); err != nil {
		return err
	}
	st.Password = s.Password
	return nil
}

// The optional interfaces instance finds by type assertion.
var (
	_ instance.Exposer          = server{}
	_ instance.ExternalBackuper = server{}
)

// Exposed implements instance.Exposer: an instance an earlier storbench created has
// no password and trusts every local connection until its next start gives it one.
func (server) Exposed(st *instance.State) string {
	if st.Password != "" {
		return ""
	}
	return fmt.Sprintf("NONE: an earlier storbench created this instance, which lets every user of this machine in until it starts again (storbench instance stop --name %s, then start)", st.Name)
}

// DSN implements instance.Server:
// postgres://postgres:PASSWORD@127.0.0.1:PORT/tpcc?sslmode=disable.
func (server) DSN(st *instance.State) string {
	return pgserver.URL("127.0.0.1", st.Port, st.Password, Database)
}

// Stop implements instance.Server.
func (server) Stop(ctx context.Context, st *instance.State) error {
	s, err := serverOf(st)
	if err != nil {
		return err
	}
	return s.Stop(ctx)
}

// PID implements instance.Server. It needs no binaries: a server whose PostgreSQL was
// uninstalled still runs and must still be seen (and stopped before destroy).
func (server) PID(st *instance.State) int { return pgserver.PIDOf(dataDir(st)) }

// LogFile implements instance.Server.
func (server) LogFile(st *instance.State) string { return pgserver.LogOf(dataDir(st)) }

// Backup implements instance.Server: pg_basebackup, or pg_dump for a logical backup.
func (server) Backup(ctx context.Context, st *instance.State, dir string, how instance.BackupMethod) error {
	s, err := serverOf(st)
	if err != nil {
		return err
	}
	switch {
	case how.Logical:
		return s.Dump(ctx, dir, Database, how.Jobs)
	case how.Cold:
		return s.ColdCopy(ctx, dir)
	}
	return s.BaseBackup(ctx, dir)
}

// BackupExternal implements instance.ExternalBackuper: pg_basebackup run here.
func (server) BackupExternal(ctx context.Context, dsn, dir string) error {
	return pgserver.BaseBackupFrom(ctx, dsn, dir)
}

// HostBackupScript implements instance.ExternalBackuper: pg_basebackup on the host,
// into a mktemp directory (nothing of the host's is replaced), its password in a
// 0600 PGPASSFILE read from stdin, -w so that it never prompts.
func (server) HostBackupScript(dsn, path string) (script, stdin string, err error) {
	conninfo, line, err := pgserver.PasswordFile(dsn)
	if err != nil {
		return "", "", err
	}
	script = strings.Join([]string{
		"set -e",
		"umask 077",
		"dir=$(mktemp -d " + remote.ShellQuote(path+"/storbench-noisy.XXXXXX") + ")",
		`trap 'rm -rf "$dir"' EXIT`,
		"trap 'exit 1' INT TERM HUP",
		`cat > "$dir/pgpass"`,
		"began=$(date +%s.%N)",
		`PGPASSFILE="$dir/pgpass" pg_basebackup -w -d ` + remote.ShellQuote(conninfo) + ` -D "$dir/base" -F p -X stream -c fast >&2`,
		"ended=$(date +%s.%N)",
		`echo "$began $ended $(du -sb "$dir/base" | cut -f1)"`,
	}, "\n")
	return script, line + "\n", nil
}

// Restore implements instance.Server: the backup's files, copied beside them, replace
// the data directory (and the WAL directory when the instance has one) once the copy
// is complete; or pg_restore loads a dump.
func (server) Restore(ctx context.Context, st *instance.State, dir string, how instance.BackupMethod) error {
	s, err := serverOf(st)
	if err != nil {
		return err
	}
	if how.Logical {
		return s.LoadDump(ctx, dir, Database, how.Jobs)
	}
	if pid := s.PID(); pid != 0 {
		return fmt.Errorf("the server (pid %d) must be stopped to restore a physical backup", pid)
	}
	return instance.ReplaceDirs([]string{dataDir(st), walDir(st)}, func(staged []string) error {
		copy, err := pgserver.At(st.BinDir, staged[0], st.Port)
		if err != nil {
			return err
		}
		// The backup's roles may be another instance's: the copy gets this one's
		// password (a legacy instance's, none: its next start gives it one).
		copy.Password = st.Password
		return copy.RestoreBase(ctx, dir, staged[1], walDir(st), st.Settings)
	})
}

// SetSyncStandby implements instance.Server.
func (server) SetSyncStandby(ctx context.Context, primary *instance.State, name string) error {
	s, err := serverOf(primary)
	if err != nil {
		return err
	}
	return s.SetSyncStandby(ctx, name)
}

// serverOf is the instance's server, run by the binaries that created it.
func serverOf(st *instance.State) (*pgserver.Server, error) {
	s, err := pgserver.At(st.BinDir, dataDir(st), st.Port)
	if err != nil {
		return nil, err
	}
	s.Password = st.Password
	return s, nil
}
