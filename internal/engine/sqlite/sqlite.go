// Package sqlite is the embedded engine: SQLite in the binary (modernc.org/sqlite, no
// cgo), one file on the storage under test, WAL journal with a full fsync per commit
// so that every commit waits for the storage, as a server's would.
package sqlite

import (
	"context"
	"database/sql"
	"embed"
	"errors"
	"fmt"
	"io/fs"
	"net/url"
	"os"
	"path/filepath"
	"strconv"

	"modernc.org/sqlite"
	sqlite3 "modernc.org/sqlite/lib"

	"github.com/storbench/storbench/internal/engine"
	"github.com/storbench/storbench/internal/engine/sqldb"
	"github.com/storbench/storbench/internal/input"
)

//go:embed sql
var files embed.FS

// footprint: storbench builds of 1, 2, 4, 8 and 16 warehouses on a fresh ext4: the
// file ends at 88.9 MB, 170.6 MB, 333.7 MB, 660.8 MB, 1317 MB (82 MB a warehouse, 8 MB
// besides: the item table); its -wal log peaks at 31.8 MB up to 4 warehouses (one
// warehouse's stock, loaded in one transaction), then 43.9 MB and 81.1 MB (the index
// builds, 5.1 MB a warehouse); the final checkpoint empties it.
var footprint = engine.Footprint{DataFixed: 8e6, DataPerWarehouse: 82e6, LogFixed: 32e6, LogPerWarehouse: 5.1e6}

func init() {
	engine.Register(engine.Registration{Schemes: []string{"sqlite", "sqlite3"}, Open: Open, Footprint: footprint, Modes: []engine.Mode{engine.SQL}})
}

// busyTimeout is how long a writer waits for SQLite's one write lock before the
// statement fails as busy (and the driver retries the transaction): users share the
// single writer, and the wait is part of their response time.
const busyTimeout = 10000 // ms

var dialect = func() *sqldb.Dialect {
	sub, err := fs.Sub(files, "sql")
	if err != nil {
		panic(err)
	}
	return &sqldb.Dialect{Engine: "sqlite", Driver: "sqlite", SQL: sub, Scaled: scaled,
		BeginWrite: "BEGIN IMMEDIATE", BeginRead: "BEGIN", SingleWriter: true, Classify: classify}
}()

// DB is an open SQLite TPC-C database: the shared database/sql engine, and where its
// file is.
type DB struct {
	*sqldb.DB
	path string
	// created: Open made the file (there was none), so Close may remove it again.
	created bool
}

// Open opens the database file a sqlite:///path/tpcc.db DSN names; its directory
// must exist, and the file too unless mode lets it be created (SQLite would create
// an empty one on any open).
func Open(ctx context.Context, dsn string, mode engine.OpenMode) (engine.Database, error) {
	path, err := filePath(dsn)
	if err != nil {
		return nil, err
	}
	if st, err := os.Stat(filepath.Dir(path)); err != nil || !st.IsDir() {
		return nil, input.Errorf("dsn", "{dsn} %s: directory %s does not exist (create it on the storage to test)", dsn, filepath.Dir(path))
	}
	_, statErr := os.Stat(path)
	if mode == engine.Existing && errors.Is(statErr, fs.ErrNotExist) {
		return nil, input.Errorf("dsn", "{dsn} %s: the database file %s does not exist: check the path, or create it with storbench build --dsn %s first", dsn, path, dsn)
	}
	// WAL with synchronous=FULL: each commit fsyncs the log, the durability a server
	// gives, so the storage's latency shows in every commit.
	q := url.Values{}
	for _, p := range []string{"busy_timeout(" + strconv.Itoa(busyTimeout) + ")", "journal_mode(WAL)", "synchronous(FULL)", "foreign_keys(0)"} {
		q.Add("_pragma", p)
	}
	db, err := sqldb.Open(ctx, dialect, "file:"+path+"?"+q.Encode(), dsn)
	if err != nil {
		return nil, err
	}
	return &DB{DB: db, path: path, created: errors.Is(statErr, fs.ErrNotExist)}, nil
}

// Close implements engine.Database. A file Open created that holds no table of
// storbench's when it is closed (a refused build, a run on a mistyped path) is
// removed with its log: a refusal leaves nothing behind, and only what this Open
// created is removed.
func (db *DB) Close() {
	empty := false
	if db.created {
		tables, err := db.ExistingTables(context.Background())
		empty = err == nil && len(tables) == 0
	}
	db.DB.Close()
	if empty {
		for _, f := range Files(db.path) {
			_ = os.Remove(f)
		}
	}
}

// Files are the database file at path and the files SQLite makes beside it, named
// after it: the WAL log and its shared-memory index (journal_mode WAL, as Open sets
// it) and the rollback journal (the other modes). Nothing else there is the
// database's.
func Files(path string) []string {
	return []string{path, path + "-wal", path + "-shm", path + "-journal"}
}

// filePath is the database file of sqlite:///abs/path.db or sqlite:relative.db.
func filePath(dsn string) (string, error) {
	u, err := url.Parse(dsn)
	if err != nil {
		return "", input.Errorf("dsn", "{dsn} %q: %w (write sqlite:///path/to/tpcc.db)", dsn, err)
	}
	p := u.Path
	if u.Opaque != "" {
		p = u.Opaque
	}
	if u.Host != "" && u.Host != "localhost" {
		return "", input.Errorf("dsn", "{dsn} %s: SQLite is a file on this machine, not on host %q (write sqlite:///path/to/tpcc.db)", dsn, u.Host)
	}
	if p == "" || p == "/" {
		return "", input.Errorf("dsn", "{dsn} %s names no file (write sqlite:///path/to/tpcc.db)", dsn)
	}
	return filepath.Abs(p)
}

// Activity implements engine.Observer: SQLite keeps no counters of its work.
func (db *DB) Activity(ctx context.Context) (engine.Activity, error) {
	return engine.Activity{}, errors.New("SQLite keeps no activity counters (commits, buffer hits, log bytes)")
}

// Storage implements engine.Observer: the database file and its -wal log are in one
// directory.
func (db *DB) Storage(ctx context.Context) (engine.Storage, error) {
	dir := filepath.Dir(db.path)
	return engine.Storage{Data: dir, WAL: dir}, nil
}

// classify: a busy or locked database is SQLite's way to say another user holds the
// write lock past the busy timeout: the transaction is run again.
func classify(err error) engine.Failure {
	var se *sqlite.Error
	switch {
	case errors.Is(err, context.Canceled), errors.Is(err, context.DeadlineExceeded):
		return engine.Failure{Kind: "canceled", Lost: true}
	case errors.Is(err, sql.ErrConnDone):
		return engine.Failure{Kind: "connection", Lost: true}
	case errors.As(err, &se):
		switch se.Code() & 0xff {
		case sqlite3.SQLITE_BUSY, sqlite3.SQLITE_LOCKED:
			return engine.Failure{Retry: true, Kind: "busy"}
		case sqlite3.SQLITE_FULL:
			return engine.Failure{Kind: "full", DiskFull: true}
		}
		return engine.Failure{Kind: fmt.Sprintf("sqlite-%d", se.Code())}
	}
	return engine.Failure{Kind: "client"}
}
