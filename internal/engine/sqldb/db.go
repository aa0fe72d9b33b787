package sqldb

import (
	"context"
	"database/sql"
	"database/sql/driver"
	"embed"
	"errors"
	"fmt"
	"io/fs"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/storbench/storbench/internal/engine"
	"github.com/storbench/storbench/internal/input"
)

// common holds the statements every engine of this package shares.
//
//go:embed sql/*.sql
var common embed.FS

// DB is an open TPC-C database of a database/sql engine. It keeps a pool: schema work,
// counters and checks take a connection from it, each loader and session its own.
type DB struct {
	dialect *Dialect
	pool    *sql.DB
	// writer takes the turns of an engine with one writer (SQLite's loaders).
	writer sync.Mutex
}

// Open opens the database; driverDSN is in the driver's own form. The connection is
// tried once, so a wrong address or password is an input error here.
func Open(ctx context.Context, d *Dialect, driverDSN, shownDSN string) (*DB, error) {
	pool, err := sql.Open(d.Driver, driverDSN)
	if err != nil {
		return nil, input.Errorf("dsn", "{dsn} %s: %w", shownDSN, err)
	}
	return open(ctx, d, pool, shownDSN)
}

// OpenConnector is Open for a driver configured in code (what a DSN cannot say, such
// as how to dial).
func OpenConnector(ctx context.Context, d *Dialect, c driver.Connector, shownDSN string) (*DB, error) {
	return open(ctx, d, sql.OpenDB(c), shownDSN)
}

func open(ctx context.Context, d *Dialect, pool *sql.DB, shownDSN string) (*DB, error) {
	if err := pool.PingContext(ctx); err != nil {
		pool.Close()
		return nil, input.Errorf("dsn", "cannot open %s (check the path or address, user and password): %w", shownDSN, err)
	}
	return &DB{dialect: d, pool: pool}, nil
}

// statement reads one of the dialect's SQL files, or else a shared one.
func (db *DB) statement(name string) (string, error) {
	b, err := fs.ReadFile(db.dialect.SQL, name)
	if errors.Is(err, fs.ErrNotExist) {
		b, err = common.ReadFile("sql/" + name)
	}
	return strings.TrimSpace(string(b)), err
}

// script runs a file of statements, each ending with ";" at the end of a line.
func (db *DB) script(ctx context.Context, name string, schema engine.Schema) error {
	return db.scriptOn(ctx, db.pool, name, schema)
}

// execer runs statements: the pool, or one transaction.
type execer interface {
	ExecContext(ctx context.Context, query string, args ...any) (sql.Result, error)
}

// scriptOn is script on ex.
func (db *DB) scriptOn(ctx context.Context, ex execer, name string, schema engine.Schema) error {
	text, err := db.statement(name)
	if err != nil {
		return err
	}
	text = schema.Expand(text)
	for _, stmt := range strings.Split(text, ";\n") {
		if stmt = strings.TrimSuffix(strings.TrimSpace(stmt), ";"); stripComments(stmt) == "" {
			continue
		}
		if _, err := ex.ExecContext(ctx, stmt); err != nil {
			return fmt.Errorf("%s: %w", name, err)
		}
	}
	return nil
}

// stripComments drops "--" comment lines, to tell an empty statement from a real one.
func stripComments(stmt string) string {
	var b strings.Builder
	for _, line := range strings.Split(stmt, "\n") {
		if l := strings.TrimSpace(line); l != "" && !strings.HasPrefix(l, "--") {
			b.WriteString(l)
		}
	}
	return b.String()
}

// queryRow runs a one-row statement file.
func (db *DB) queryRow(ctx context.Context, name string, args []any, dest ...any) error {
	q, err := db.statement(name)
	if err != nil {
		return err
	}
	return db.pool.QueryRowContext(ctx, q, args...).Scan(dest...)
}

// Engine implements engine.Database.
func (db *DB) Engine() string { return db.dialect.Engine }

// ServerVersion implements engine.Database.
func (db *DB) ServerVersion(ctx context.Context) (string, error) {
	var v string
	err := db.queryRow(ctx, "server_version.sql", nil, &v)
	return v, err
}

// Close implements engine.Database.
func (db *DB) Close() { db.pool.Close() }

// Pool is the database's connection pool, for an engine's own queries (its observer).
func (db *DB) Pool() *sql.DB { return db.pool }

// ExistingTables implements engine.Database.
func (db *DB) ExistingTables(ctx context.Context) ([]string, error) {
	q, err := db.statement("existing_tables.sql")
	if err != nil {
		return nil, err
	}
	rows, err := db.pool.QueryContext(ctx, q)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	own := engine.OwnTables()
	var found []string
	for rows.Next() {
		var name string
		if err := rows.Scan(&name); err != nil {
			return nil, err
		}
		if slices.Contains(own, strings.ToLower(name)) {
			found = append(found, name)
		}
	}
	slices.Sort(found)
	return found, rows.Err()
}

// CreateTables implements engine.Database: the record of the tables (record.sql)
// with their names entered, then the tables, in one transaction where the engine's
// DDL has them (SQLite); where each DDL statement commits (MariaDB), the names are
// entered before any table is created, so that whatever an interrupted build left
// is recorded.
func (db *DB) CreateTables(ctx context.Context, schema engine.Schema) error {
	tx, err := db.pool.BeginTx(ctx, nil)
	if err != nil {
		return err
	}
	defer tx.Rollback()
	if err := db.scriptOn(ctx, tx, "record.sql", schema); err != nil {
		return err
	}
	for _, t := range engine.OwnTables() {
		if err := db.record(ctx, tx, engine.Object{Kind: engine.Table, Name: t}); err != nil {
			return err
		}
	}
	if err := db.scriptOn(ctx, tx, "schema.sql", schema); err != nil {
		return err
	}
	return tx.Commit()
}

// record enters an object in the build's record (engine.ObjectsTable).
func (db *DB) record(ctx context.Context, ex execer, o engine.Object) error {
	q, err := db.statement("record_insert.sql")
	if err != nil {
		return err
	}
	_, err = ex.ExecContext(ctx, q, o.Kind, o.Name)
	return err
}

// FinishBuild implements engine.Database: keys and indexes after the data, then the
// engine's own finishing (statistics, a checkpoint) and the build record. The
// finishing is the same whatever schema.Settle says: MySQL's is ANALYZE TABLE alone
// already (InnoDB has no checkpoint a client can ask for), as HammerDB's; SQLite's WAL
// checkpoint empties a log HammerDB, which has no SQLite driver, says nothing about.
func (db *DB) FinishBuild(ctx context.Context, schema engine.Schema, info engine.BuildInfo) ([]string, error) {
	for _, s := range []struct{ what, file string }{{"create keys and indexes", "indexes.sql"}, {"finish", "finish.sql"}} {
		if err := db.script(ctx, s.file, schema); err != nil {
			return nil, fmt.Errorf("%s: %w", s.what, err)
		}
	}
	if db.dialect.Procedures {
		if err := db.createProcedures(ctx); err != nil {
			return nil, fmt.Errorf("create stored procedures: %w", err)
		}
	}
	q, err := db.statement("build_info_write.sql")
	if err != nil {
		return nil, err
	}
	_, err = db.pool.ExecContext(ctx, q, info.Warehouses, int64(info.Seed), info.CLoad, info.BuiltAt.UTC().Format(time.RFC3339Nano), info.Version, info.Schema)
	return nil, err
}

// BuildInfo implements engine.Database.
func (db *DB) BuildInfo(ctx context.Context) (engine.BuildInfo, error) {
	var info engine.BuildInfo
	var seed int64
	var built string
	err := db.readBuildInfo(ctx, &info.Warehouses, &seed, &info.CLoad, &built, &info.Version, &info.Schema)
	if err == nil {
		info.Seed = uint64(seed)
		info.BuiltBy = engine.BuiltByStorbench
		info.BuiltAt, err = time.Parse(time.RFC3339Nano, built)
		return info, err
	}
	if errors.Is(err, sql.ErrNoRows) {
		return info, engine.ErrBuildUnfinished
	}
	// Built by another tool (no record table): the warehouse count is still needed to run.
	if err := db.queryRow(ctx, "warehouse_count.sql", nil, &info.Warehouses); err != nil {
		return info, fmt.Errorf("no TPC-C schema here (run storbench build first): %w", err)
	}
	return info, engine.ErrNoBuildInfo
}

// readBuildInfo scans the build record's columns, in table order, into the first
// of dest: a record written before builds named their schema has no build_schema,
// and leaves that "" (not recorded).
func (db *DB) readBuildInfo(ctx context.Context, dest ...any) error {
	q, err := db.statement("build_info_read.sql")
	if err != nil {
		return err
	}
	rows, err := db.pool.QueryContext(ctx, q)
	if err != nil {
		return err
	}
	defer rows.Close()
	cols, err := rows.Columns()
	if err != nil {
		return err
	}
	if len(cols) > len(dest) {
		return fmt.Errorf("storbench_build has %d columns, this storbench knows %d: a newer storbench built it", len(cols), len(dest))
	}
	if !rows.Next() {
		if err := rows.Err(); err != nil {
			return err
		}
		return sql.ErrNoRows
	}
	return rows.Scan(dest[:len(cols)]...)
}

// Inventory implements engine.Dropper.
func (db *DB) Inventory(ctx context.Context) (engine.Inventory, error) {
	var name string
	if err := db.queryRow(ctx, "database_name.sql", nil, &name); err != nil {
		return engine.Inventory{}, err
	}
	tables, err := db.ExistingTables(ctx)
	if err != nil {
		return engine.Inventory{}, err
	}
	var own, hammerDB []string
	if db.dialect.Procedures {
		if own, err = db.names(ctx, "procedures/existing.sql"); err != nil {
			return engine.Inventory{}, err
		}
		if hammerDB, err = db.names(ctx, "procedures/hammerdb.sql"); err != nil {
			return engine.Inventory{}, err
		}
	}
	var record []engine.Object
	if slices.Contains(tables, engine.ObjectsTable) {
		if record, err = db.readRecord(ctx); err != nil {
			return engine.Inventory{}, err
		}
	}
	return engine.NewInventory(name, tables, engine.Routines(own), engine.Routines(hammerDB), record), nil
}

// readRecord reads what the build's record lists.
func (db *DB) readRecord(ctx context.Context) ([]engine.Object, error) {
	q, err := db.statement("record_read.sql")
	if err != nil {
		return nil, err
	}
	rows, err := db.pool.QueryContext(ctx, q)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var objs []engine.Object
	for rows.Next() {
		var o engine.Object
		if err := rows.Scan(&o.Kind, &o.Name); err != nil {
			return nil, err
		}
		objs = append(objs, o)
	}
	return objs, rows.Err()
}

// names runs a statement file of one text column.
func (db *DB) names(ctx context.Context, file string) ([]string, error) {
	q, err := db.statement(file)
	if err != nil {
		return nil, err
	}
	rows, err := db.pool.QueryContext(ctx, q)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", file, err)
	}
	defer rows.Close()
	var names []string
	for rows.Next() {
		var name string
		if err := rows.Scan(&name); err != nil {
			return nil, err
		}
		names = append(names, name)
	}
	return names, rows.Err()
}

// DropObjects implements engine.Dropper, in one transaction where the engine's DDL
// has them (SQLite); where each DROP commits (MariaDB), each object leaves the
// build's record as it is dropped, so that an interrupted drop leaves no name there
// that a later table of the user's could take.
func (db *DB) DropObjects(ctx context.Context, objs []engine.Object) error {
	recorded := slices.Contains(objs, engine.Object{Kind: engine.Table, Name: engine.ObjectsTable})
	unrecord, err := db.statement("record_delete.sql")
	if err != nil {
		return err
	}
	tx, err := db.pool.BeginTx(ctx, nil)
	if err != nil {
		return err
	}
	defer tx.Rollback()
	for _, o := range objs {
		if !plainIdentifier(o.Name) {
			return fmt.Errorf("drop %s: not a name storbench drops", o.Name)
		}
		// Generated, not an embedded file: the statement names what Inventory found.
		stmt := "DROP TABLE " + o.Name
		if o.Kind == engine.Routine {
			stmt = "DROP PROCEDURE " + o.Name
		}
		if _, err := tx.ExecContext(ctx, stmt); err != nil {
			return fmt.Errorf("drop %s %s: %w", o.Kind, o.Name, err)
		}
		if recorded && o.Name != engine.ObjectsTable {
			if _, err := tx.ExecContext(ctx, unrecord, o.Kind, o.Name); err != nil {
				return err
			}
		}
	}
	return tx.Commit()
}

// Modes implements engine.Database: what the engine registered (procedures first, as
// the best, where its dialect has stored procedures; sql on every engine).
func (db *DB) Modes() []engine.Mode { return engine.Modes(db.Engine()) }

// Connect implements engine.Database for a mode of Modes (the driver resolves it
// first, engine.ResolveMode).
func (db *DB) Connect(ctx context.Context, mode engine.Mode) (engine.Session, error) {
	open := func(ctx context.Context, conn *sql.Conn, d *Dialect) (engine.Session, error) {
		return newSession(ctx, conn, d)
	}
	if mode == engine.Procedures {
		if !db.dialect.Procedures {
			return nil, input.Errorf("mode", "%s has no stored procedures: use {mode} sql", db.dialect.Engine)
		}
		open = newProcSession
	}
	conn, err := db.pool.Conn(ctx)
	if err != nil {
		return nil, err
	}
	s, err := open(ctx, conn, db.dialect)
	if err != nil {
		conn.Close()
		return nil, err
	}
	return s, nil
}

// Counters implements engine.Database: the engine's transaction counter where it has
// one (transactions.sql), and sum(d_next_o_id).
func (db *DB) Counters(ctx context.Context) (engine.Counters, error) {
	c := engine.Counters{NewOrdersSource: "sum(district.d_next_o_id)"}
	err := db.queryRow(ctx, "new_orders.sql", nil, &c.NextOrderIDs)
	c.At = time.Now()
	if err != nil {
		return c, err
	}
	q, ferr := fs.ReadFile(db.dialect.SQL, "transactions.sql")
	if errors.Is(ferr, fs.ErrNotExist) {
		c.NoTransactionCounter = true
		return c, nil
	}
	if ferr != nil {
		return c, ferr
	}
	c.TransactionsSource = db.dialect.TransactionsSource
	var uptime sql.NullInt64
	if err := db.pool.QueryRowContext(ctx, string(q)).Scan(&c.Transactions, &uptime); err != nil {
		return c, err
	}
	if uptime.Valid {
		c.Since = c.At.Add(-time.Duration(uptime.Int64) * time.Second)
	}
	return c, nil
}

// Check implements engine.Database.
func (db *DB) Check(ctx context.Context, query string) (int64, []string, error) {
	rows, err := db.pool.QueryContext(ctx, query)
	if err != nil {
		return 0, nil, err
	}
	defer rows.Close()
	cols, err := rows.Columns()
	if err != nil {
		return 0, nil, err
	}
	var violations int64
	var keys []string
	vals := make([]sql.NullString, len(cols))
	dest := make([]any, len(cols))
	for i := range vals {
		dest[i] = &vals[i]
	}
	for rows.Next() {
		if err := rows.Scan(dest...); err != nil {
			return 0, nil, err
		}
		fmt.Sscan(vals[0].String, &violations)
		key := make([]string, 0, len(cols)-1)
		for i, c := range cols[1:] {
			key = append(key, c+"="+vals[i+1].String)
		}
		keys = append(keys, strings.Join(key, ","))
	}
	return violations, keys, rows.Err()
}

// Classify implements engine.Database.
func (db *DB) Classify(err error) engine.Failure { return db.dialect.Classify(err) }
