// Package mysql is the MySQL and MariaDB engine: the shared database/sql engine
// (sqldb) with InnoDB tables, exact DECIMAL money, the sql mode's statements in
// sql/sqlmode/ and a LOAD DATA LOCAL INFILE loader, over go-sql-driver/mysql.
package mysql

import (
	"context"
	"database/sql"
	"database/sql/driver"
	"embed"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"net"
	"net/url"
	"strings"
	"syscall"
	"time"

	"github.com/go-sql-driver/mysql"

	"github.com/storbench/storbench/internal/dburl"
	"github.com/storbench/storbench/internal/engine"
	"github.com/storbench/storbench/internal/engine/rawconn"
	"github.com/storbench/storbench/internal/engine/sqldb"
	"github.com/storbench/storbench/internal/input"
)

//go:embed sql
var files embed.FS

// footprint: MariaDB 10.11 (InnoDB, 16 KB pages), storbench builds of 1, 2 and 4
// warehouses on a managed instance (binary log on) on a fresh ext4, its growth at the
// peak: 317 MB, 481 MB, 785 MB. Of that, the binary log (LOAD DATA's rows, once more)
// 75 MB, 142 MB, 276 MB: 68 MB a warehouse and 8 MB besides. The rest, 243 MB, 339
// MB, 509 MB: 96 MB a warehouse (the tables and indexes,
// data_length + index_length + data_free 94 MB) and 148 MB besides: the item table
// (18 MB), ibdata1's growth from 12 MB to 80 MB (the load's undo log), and 31 MB more
// at the peak than at the end, whatever the warehouses. The redo log is a file of
// fixed size, made when the server starts.
var footprint = engine.Footprint{DataFixed: 148e6, DataPerWarehouse: 96e6, LogFixed: 8e6, LogPerWarehouse: 68e6}

func init() {
	engine.Register(engine.Registration{Schemes: []string{"mysql", "mariadb"}, Open: Open, Footprint: footprint,
		Modes: []engine.Mode{engine.Procedures, engine.SQL}, Roles: roles{}})
}

// Where the transaction counter (transactions.sql) comes from, as the result labels it.
const (
	transactionsSource = "Com_commit + Com_rollback of information_schema.GLOBAL_STATUS (whole server, as HammerDB reads them; COMMIT and ROLLBACK statements; Stock-Level too commits its read-only transaction)"
	mysql8Source       = "Com_commit + Com_rollback of performance_schema.global_status (whole server, as HammerDB reads them; COMMIT and ROLLBACK statements; Stock-Level too commits its read-only transaction)"
)

// sqlFiles are the engine's statements (sql/), for MariaDB.
var sqlFiles = func() fs.FS {
	sub, err := fs.Sub(files, "sql")
	if err != nil {
		panic(err)
	}
	return sub
}()

// newDialect is the dialect of one open database: MariaDB's until Open finds MySQL.
func newDialect() *sqldb.Dialect {
	return &sqldb.Dialect{Engine: "mysql", Driver: "mysql", SQL: sqlFiles,
		BeginWrite: "START TRANSACTION", BeginRead: "START TRANSACTION READ ONLY", StockLevelInTransaction: true,
		TransactionsSource: transactionsSource, Load: loadData, Classify: classify, Procedures: true}
}

// DB is an open MySQL or MariaDB TPC-C database: the shared database/sql engine with
// the server's status counters (observer.go).
type DB struct {
	*sqldb.DB
	dialect *sqldb.Dialect
}

// Open connects to the database a mysql://user:password@host:port/db DSN names (or
// mysql://user:password@/db?socket=/path/mysqld.sock); mariadb:// is the same. The
// server never creates the database on connecting, whatever the mode.
func Open(ctx context.Context, dsn string, _ engine.OpenMode) (engine.Database, error) {
	cfg, err := DriverConfig(dsn)
	if err != nil {
		return nil, err
	}
	shown := dburl.Redact(dsn)
	d := newDialect()
	connector, err := mysql.NewConnector(cfg)
	if err != nil {
		return nil, input.Errorf("dsn", "{dsn} %s: %w", shown, err)
	}
	db, err := sqldb.OpenConnector(ctx, d, connector, shown)
	if err != nil {
		return nil, err
	}
	version, err := db.ServerVersion(ctx)
	if err != nil {
		db.Close()
		return nil, fmt.Errorf("%s: server version: %w", shown, err)
	}
	if !strings.HasPrefix(version, "MariaDB") {
		// MySQL 8 moved the global status out of information_schema.
		d.SQL, d.TransactionsSource = overlay{top: mustSub("sql/mysql8"), base: sqlFiles}, mysql8Source
	}
	return &DB{DB: db, dialect: d}, nil
}

// DriverConfig turns a mysql:// or mariadb:// URL into go-sql-driver's configuration.
func DriverConfig(dsn string) (*mysql.Config, error) {
	bad := func(format string, a ...any) error {
		return input.Errorf("dsn", "{dsn} %s: %s (write mysql://user:password@host:3306/tpcc or mysql://user:password@/tpcc?socket=/run/mysqld/mysqld.sock)",
			dburl.Redact(dsn), fmt.Sprintf(format, a...))
	}
	u, err := url.Parse(dsn)
	if err != nil {
		return nil, bad("not a URL")
	}
	if u.Scheme != "mysql" && u.Scheme != "mariadb" {
		return nil, bad("scheme %q is not mysql or mariadb", u.Scheme)
	}
	cfg := mysql.NewConfig()
	if u.User == nil || u.User.Username() == "" {
		return nil, bad("no user")
	}
	cfg.User = u.User.Username()
	cfg.Passwd, _ = u.User.Password()
	cfg.DBName = strings.TrimPrefix(u.Path, "/")
	if cfg.DBName == "" || strings.Contains(cfg.DBName, "/") {
		return nil, bad("name one database")
	}
	q := u.Query()
	for k := range q {
		if k != "socket" {
			return nil, bad("unknown parameter %q (only socket)", k)
		}
	}
	switch socket := q.Get("socket"); {
	case socket != "" && u.Host != "":
		return nil, bad("a host and a socket: give one")
	case socket != "":
		cfg.Net, cfg.Addr = "unix", socket
	case u.Host == "":
		return nil, bad("no host")
	default:
		host, port := u.Hostname(), u.Port()
		if port == "" {
			port = "3306"
		}
		cfg.Net, cfg.Addr = "tcp", net.JoinHostPort(host, port)
	}
	// Text results (no time.Time), one statement per call, LOAD DATA only from the
	// loader's registered readers. The sessions prepare their statements on the server
	// once (then one COM_STMT_EXECUTE round trip each), which interpolateParams does not
	// change: measured at 4 users, that gave 10-20% more NOPM and 10% less client CPU
	// per transaction than client-side interpolation. Interpolation serves the pool's
	// few parameterised statements (one round trip instead of prepare, execute, close).
	cfg.ParseTime = false
	cfg.InterpolateParams = true
	cfg.MultiStatements = false
	cfg.AllowAllFiles = false
	cfg.AllowNativePasswords = true
	cfg.Timeout = 10 * time.Second
	cfg.ReadTimeout, cfg.WriteTimeout = 0, 0
	// Raw I/O for every connection: less client CPU per round trip (package rawconn).
	cfg.DialFunc = rawconn.Dialer(new(net.Dialer).DialContext)
	// Strict: a value that does not fit is an error, not a warning; no silent engine
	// other than InnoDB; NOW() in UTC, like the generator's timestamps.
	cfg.Params = map[string]string{
		"sql_mode":  "'STRICT_ALL_TABLES,NO_ENGINE_SUBSTITUTION'",
		"time_zone": "'+00:00'",
	}
	return cfg, nil
}

// overlay reads a file from top, else from base.
type overlay struct{ top, base fs.FS }

func (o overlay) Open(name string) (fs.File, error) {
	if f, err := o.top.Open(name); err == nil {
		return f, nil
	}
	return o.base.Open(name)
}

func mustSub(dir string) fs.FS {
	sub, err := fs.Sub(files, dir)
	if err != nil {
		panic(err)
	}
	return sub
}

// MySQL's error numbers that mean "run the transaction again": InnoDB rolled it back
// on a deadlock, or a lock wait timed out (the statement was rolled back; the
// session's ROLLBACK ends the rest).
const (
	erLockWaitTimeout = 1205
	erLockDeadlock    = 1213
)

// The storage is full: a table cannot grow (1114) or the disk has no space (1021).
const (
	erRecordFileFull = 1114
	erDiskFull       = 1021
)

// MySQL's error numbers after which the server has ended the session.
var connectionEnded = map[uint16]bool{
	1053: true, // ER_SERVER_SHUTDOWN
	1927: true, // ER_CONNECTION_KILLED (MariaDB)
	3169: true, // ER_SESSION_WAS_KILLED (MySQL)
	4031: true, // ER_CLIENT_INTERACTION_TIMEOUT (MySQL)
}

// classify tells the driver what an error means. Kind is "mysql-<number>" for a server
// error, "canceled" when the context ended the call (go-sql-driver then closes the
// connection), "connection" for a broken connection and "client" for an error the
// client found over a connection that stays usable (a missing row).
func classify(err error) engine.Failure {
	var me *mysql.MySQLError
	if errors.As(err, &me) {
		kind := fmt.Sprintf("mysql-%d", me.Number)
		switch me.Number {
		case erLockDeadlock, erLockWaitTimeout:
			return engine.Failure{Retry: true, Kind: kind}
		case erRecordFileFull, erDiskFull:
			return engine.Failure{Kind: kind, DiskFull: true}
		}
		return engine.Failure{Kind: kind, Lost: connectionEnded[me.Number]}
	}
	var netErr net.Error
	switch {
	case errors.Is(err, context.Canceled), errors.Is(err, context.DeadlineExceeded):
		return engine.Failure{Kind: "canceled", Lost: true}
	case errors.Is(err, driver.ErrBadConn), errors.Is(err, sql.ErrConnDone), errors.Is(err, mysql.ErrInvalidConn),
		errors.Is(err, io.EOF), errors.Is(err, io.ErrUnexpectedEOF), errors.Is(err, syscall.ECONNRESET),
		errors.Is(err, syscall.EPIPE), errors.As(err, &netErr):
		return engine.Failure{Kind: "connection", Lost: true}
	}
	return engine.Failure{Kind: "client"}
}
