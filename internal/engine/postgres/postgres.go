// Package postgres is the PostgreSQL engine: schema and stored procedures in embedded
// .sql files, COPY loading, both transaction modes, and pg_stat_database counters.
package postgres

import (
	"context"
	_ "embed"
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"

	"github.com/storbench/storbench/internal/dburl"
	"github.com/storbench/storbench/internal/engine"
	"github.com/storbench/storbench/internal/engine/rawconn"
	"github.com/storbench/storbench/internal/input"
	"github.com/storbench/storbench/internal/tpcc"
)

var (
	//go:embed sql/schema.sql
	schemaSQL string
	//go:embed sql/indexes.sql
	indexesSQL string
	//go:embed sql/functions.sql
	functionsSQL string
	//go:embed sql/counters.sql
	countersSQL string
	//go:embed sql/existing_tables.sql
	existingTablesSQL string
	//go:embed sql/own_functions.sql
	ownFunctionsSQL string
	//go:embed sql/build_info_write.sql
	buildInfoWriteSQL string
	//go:embed sql/build_info_read.sql
	buildInfoReadSQL string
	//go:embed sql/warehouse_count.sql
	warehouseCountSQL string
	//go:embed sql/hammerdb_routines.sql
	hammerDBRoutinesSQL string
	//go:embed sql/server_version.sql
	serverVersionSQL string
	//go:embed sql/loader_session.sql
	loaderSessionSQL string
	//go:embed sql/finish_vacuum.sql
	finishVacuumSQL string
	//go:embed sql/finish_checkpoint.sql
	finishCheckpointSQL string
	//go:embed sql/finish_analyze.sql
	finishAnalyzeSQL string
	//go:embed sql/record.sql
	recordSQL string
	//go:embed sql/record_tables.sql
	recordTablesSQL string
	//go:embed sql/record_functions.sql
	recordFunctionsSQL string
	//go:embed sql/record_read.sql
	recordReadSQL string
	//go:embed sql/database_name.sql
	databaseNameSQL string
	//go:embed sql/wal_settings.sql
	walSettingsSQL string
)

// footprint is what a build takes on a server whose max_wal_size (bytes) and
// checkpoint_completion_target are these. Measured on PostgreSQL 15 (8 KB pages,
// wal_level replica), storbench builds of 1, 2, 4, 5, 6, 8 and 16 warehouses on a
// managed instance on a fresh ext4:
//   - data: pg_database_size 126.6 MB at 1 warehouse, 232.1 MB at 2: 106 MB a
//     warehouse, and 20 MB besides (the item table and its key);
//   - WAL: pg_wal grew 117 MB at 1, 201-218 MB at 2, 403 MB at 4, 503 MB at 5 (a
//     checkpoint right before the finishing changed nothing): 100 MB a warehouse, 20
//     MB besides. From 6 warehouses (1090 MB) it grew to 1107-1141 MB (8, 16): once a
//     build writes the checkpoint distance (max_wal_size / (1 +
//     checkpoint_completion_target), 565 MB by default), the server checkpoints and
//     keeps the segments it frees for reuse, up to about max_wal_size, plus the
//     segments in flight: 1.15 × max_wal_size bounds it.
func footprint(maxWAL int64, completionTarget float64) engine.Footprint {
	return engine.Footprint{DataFixed: 20e6, DataPerWarehouse: 106e6,
		LogFixed: 20e6, LogPerWarehouse: 100e6,
		LogFull: int64(float64(maxWAL) / (1 + completionTarget)), LogMax: maxWAL * 115 / 100}
}

func init() {
	// PostgreSQL's defaults, which storbench's managed instances keep: max_wal_size
	// 1 GB, checkpoint_completion_target 0.9.
	engine.Register(engine.Registration{Schemes: []string{"postgres", "postgresql"}, Open: Open, Footprint: footprint(1<<30, 0.9),
		Modes: []engine.Mode{engine.Procedures, engine.SQL}, Roles: roles{}})
}

// DB is an open PostgreSQL TPC-C database. It keeps one connection for schema work,
// counters and checks; loaders and sessions open their own.
type DB struct {
	cfg  *pgx.ConnConfig
	conn *pgx.Conn
	// procsOK is set once checkProcedures found storbench's functions.
	procsOK atomic.Bool
	// mu serialises the uses of conn that can overlap during a run: the watcher's
	// Counters and the procedure check of users connecting or reconnecting.
	mu sync.Mutex
	// observer is the metrics sampler's own connection (see Activity).
	observer     *pgx.Conn
	observerNote string // what the observer's connection adds to the counters
	observerMu   sync.Mutex
}

// Open connects to the database a postgres:// DSN names; the server never creates it
// on connecting, whatever the mode.
func Open(ctx context.Context, dsn string, _ engine.OpenMode) (engine.Database, error) {
	cfg, err := pgx.ParseConfig(dsn)
	if err != nil {
		return nil, input.Errorf("dsn", "{dsn}: %w", err)
	}
	if cfg.ConnectTimeout == 0 {
		cfg.ConnectTimeout = 10 * time.Second
	}
	cfg.DialFunc = rawconn.Dialer(cfg.DialFunc) // raw I/O for every connection: less client CPU
	conn, err := pgx.ConnectConfig(ctx, cfg)
	if err != nil {
		return nil, input.Errorf("dsn", "cannot connect to %s (check host, port, user, database and that the server runs): %w",
			dburl.Redact(dsn), err)
	}
	return &DB{cfg: cfg, conn: conn}, nil
}

// Engine implements engine.Database.
func (db *DB) Engine() string { return "postgres" }

// ServerVersion implements engine.Database.
func (db *DB) ServerVersion(ctx context.Context) (string, error) {
	var v string
	err := db.conn.QueryRow(ctx, serverVersionSQL).Scan(&v)
	return v, err
}

// Close implements engine.Database.
func (db *DB) Close() {
	db.observerMu.Lock()
	if db.observer != nil {
		db.observer.Close(context.Background())
	}
	db.observerMu.Unlock()
	db.conn.Close(context.Background())
}

// ExistingTables implements engine.Database.
func (db *DB) ExistingTables(ctx context.Context) ([]string, error) {
	rows, err := db.conn.Query(ctx, existingTablesSQL, engine.OwnTables())
	if err != nil {
		return nil, err
	}
	return pgx.CollectRows(rows, pgx.RowTo[string])
}

// CreateTables implements engine.Database: the tables and the record of them, in one
// transaction.
func (db *DB) CreateTables(ctx context.Context, _ engine.Schema) error {
	return pgx.BeginFunc(ctx, db.conn, func(tx pgx.Tx) error {
		if _, err := tx.Exec(ctx, recordSQL+schemaSQL); err != nil {
			return err
		}
		_, err := tx.Exec(ctx, recordTablesSQL, engine.OwnTables())
		return err
	})
}

// Footprint implements engine.FootprintReader: the WAL a build leaves is bounded by
// the server's max_wal_size.
func (db *DB) Footprint(ctx context.Context) (engine.Footprint, error) {
	var maxWAL int64
	var target float64
	if err := db.conn.QueryRow(ctx, walSettingsSQL).Scan(&maxWAL, &target); err != nil {
		return engine.Footprint{}, err
	}
	return footprint(maxWAL, target), nil
}

// FinishBuild implements engine.Database. It leaves the database as a run expects
// it: indexed, frozen and analyzed, and written out by a checkpoint (finish_*.sql);
// a schema that does not settle (HammerDB's) is only analyzed. Each step is its own
// Exec: VACUUM cannot run in a transaction block, which a multi-statement Exec would be.
func (db *DB) FinishBuild(ctx context.Context, schema engine.Schema, info engine.BuildInfo) ([]string, error) {
	steps := []struct{ what, sql string }{
		{"create keys and indexes", schema.Expand(indexesSQL)},
		{"create stored procedures", functionsSQL + "\n" + recordFunctionsSQL}, // one transaction
		{"analyze", finishAnalyzeSQL},
	}
	if schema.Settle {
		steps[2].sql = finishVacuumSQL
	}
	for _, s := range steps {
		if _, err := db.conn.Exec(ctx, s.sql); err != nil {
			return nil, fmt.Errorf("%s: %w", s.what, err)
		}
	}
	notes, err := db.checkpoint(ctx, schema)
	if err != nil {
		return nil, err
	}
	_, err = db.conn.Exec(ctx, buildInfoWriteSQL, info.Warehouses, int64(info.Seed), info.CLoad, info.BuiltAt, info.Version, info.Schema)
	return notes, err
}

// checkpoint writes the build's dirty pages out when the schema settles.
func (db *DB) checkpoint(ctx context.Context, schema engine.Schema) ([]string, error) {
	if !schema.Settle {
		return nil, nil
	}
	var notes []string
	// CHECKPOINT needs superuser or pg_checkpoint; a role that may only create tables
	// has a complete database all the same, whose dirty pages the server's next
	// checkpoint writes: possibly inside the first run's window, which the user should
	// know, not a failed build.
	var pgErr *pgconn.PgError
	if _, err := db.conn.Exec(ctx, finishCheckpointSQL); errors.As(err, &pgErr) && pgErr.Code == insufficientPrivilege {
		notes = append(notes, "final CHECKPOINT skipped: this role may not run it (needs superuser or pg_checkpoint); "+
			"the server's next checkpoint writes the load's pages, perhaps during the first run: run CHECKPOINT as a superuser before measuring")
	} else if err != nil {
		return nil, fmt.Errorf("checkpoint: %w", err)
	}
	return notes, nil
}

// insufficientPrivilege is the SQLSTATE of a statement this role may not run.
const insufficientPrivilege = "42501"

// BuildInfo implements engine.Database.
func (db *DB) BuildInfo(ctx context.Context) (engine.BuildInfo, error) {
	var info engine.BuildInfo
	var seed int64
	err := db.conn.QueryRow(ctx, buildInfoReadSQL).
		Scan(&info.Warehouses, &seed, &info.CLoad, &info.BuiltAt, &info.Version, &info.Schema)
	info.Seed = uint64(seed)
	if err == nil {
		info.BuiltBy = engine.BuiltByStorbench
		return info, nil
	}
	if errors.Is(err, pgx.ErrNoRows) {
		return info, engine.ErrBuildUnfinished
	}
	var pgErr *pgconn.PgError
	if !(errors.As(err, &pgErr) && pgErr.Code == "42P01") {
		return info, err
	}
	// Built by another tool: the warehouse count is still needed to run.
	if err := db.conn.QueryRow(ctx, warehouseCountSQL).Scan(&info.Warehouses); err != nil {
		return info, fmt.Errorf("no TPC-C schema here (run storbench build first): %w", err)
	}
	hammerDB, err := db.names(ctx, hammerDBRoutinesSQL)
	if err != nil {
		return info, err
	}
	if len(hammerDB) > 0 {
		info = engine.HammerDBBuild(info.Warehouses)
	}
	return info, engine.ErrNoBuildInfo
}

// Inventory implements engine.Dropper.
func (db *DB) Inventory(ctx context.Context) (engine.Inventory, error) {
	var name string
	if err := db.conn.QueryRow(ctx, databaseNameSQL).Scan(&name); err != nil {
		return engine.Inventory{}, err
	}
	tables, err := db.ExistingTables(ctx)
	if err != nil {
		return engine.Inventory{}, err
	}
	own, err := db.ownFunctions(ctx)
	if err != nil {
		return engine.Inventory{}, err
	}
	hammerDB, err := db.names(ctx, hammerDBRoutinesSQL)
	if err != nil {
		return engine.Inventory{}, err
	}
	var record []engine.Object
	if slices.Contains(tables, engine.ObjectsTable) {
		rows, err := db.conn.Query(ctx, recordReadSQL)
		if err != nil {
			return engine.Inventory{}, err
		}
		if record, err = pgx.CollectRows(rows, pgx.RowToStructByPos[engine.Object]); err != nil {
			return engine.Inventory{}, err
		}
	}
	return engine.NewInventory(name, tables, routines(own), routines(hammerDB), record), nil
}

// routines are the routines of names as the catalog gives them, name(argument
// types), which DROP ROUTINE takes; messages show their names alone.
func routines(names []string) []engine.Object {
	objs := engine.Routines(names)
	for i := range objs {
		objs[i].Short, _, _ = strings.Cut(objs[i].Name, "(")
	}
	return objs
}

// DropObjects implements engine.Dropper, in one transaction: all or nothing.
func (db *DB) DropObjects(ctx context.Context, objs []engine.Object) error {
	// Generated, not an embedded file: the statements name what Inventory found (a
	// routine as the catalog names it, name(argument types)).
	var stmt strings.Builder
	for _, o := range objs {
		switch o.Kind {
		case engine.Routine:
			fmt.Fprintf(&stmt, "DROP ROUTINE %s;\n", o.Name)
		case engine.Table:
			fmt.Fprintf(&stmt, "DROP TABLE %s;\n", pgx.Identifier{o.Name}.Sanitize())
		}
	}
	_, err := db.conn.Exec(ctx, stmt.String())
	return err
}

// Counters implements engine.Database: pg_stat_database's commits + rollbacks of this
// database (HammerDB sums every database on the server, so unrelated activity counts
// there) and sum(d_next_o_id).
func (db *DB) Counters(ctx context.Context) (engine.Counters, error) {
	db.mu.Lock()
	defer db.mu.Unlock()
	// A server that restarted (a crash, a failover) ended this connection: open it again.
	if db.conn.IsClosed() {
		conn, err := pgx.ConnectConfig(ctx, db.cfg)
		if err != nil {
			return engine.Counters{}, err
		}
		db.conn = conn
	}
	var c engine.Counters
	err := db.conn.QueryRow(ctx, countersSQL).Scan(&c.Transactions, &c.NextOrderIDs, &c.Since)
	c.At = time.Now()
	c.TransactionsSource = "pg_stat_database xact_commit + xact_rollback of this database"
	c.NewOrdersSource = "sum(district.d_next_o_id)"
	return c, err
}

// Check implements engine.Database.
func (db *DB) Check(ctx context.Context, query string) (int64, []string, error) {
	rows, err := db.conn.Query(ctx, query)
	if err != nil {
		return 0, nil, err
	}
	defer rows.Close()
	var violations int64
	var keys []string
	for rows.Next() {
		vals, err := rows.Values()
		if err != nil {
			return 0, nil, err
		}
		violations = vals[0].(int64)
		key := make([]string, 0, len(vals)-1)
		for i, v := range vals[1:] {
			key = append(key, fmt.Sprintf("%s=%v", rows.FieldDescriptions()[i+1].Name, v))
		}
		keys = append(keys, strings.Join(key, ","))
	}
	return violations, keys, rows.Err()
}

// errConnLost marks an error after which the session's connection is unusable: the
// sessions wrap their error with it when, and only when, that is so (procedures: the
// wire connection is broken; sql: pgx closed the connection). Classify reads it.
var errConnLost = errors.New("postgres connection lost")

// Classify implements engine.Database. Kind is the SQLSTATE of a server error,
// "canceled" when the context ended the call, "connection" for another lost
// connection, and "client" for errors the client found in a reply (a missing row, an
// unexpected NULL or row count) over a connection that stays usable.
func (db *DB) Classify(err error) engine.Failure {
	lost := errors.Is(err, errConnLost)
	var pgErr *pgconn.PgError
	if errors.As(err, &pgErr) {
		switch pgErr.Code {
		case "40001", "40P01": // serialization_failure, deadlock_detected
			return engine.Failure{Retry: true, Kind: pgErr.Code, Lost: lost}
		case "53100": // disk_full
			return engine.Failure{Kind: pgErr.Code, Lost: lost || connectionEnded(pgErr), DiskFull: true}
		}
		return engine.Failure{Kind: pgErr.Code, Lost: lost || connectionEnded(pgErr)}
	}
	switch {
	case errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded):
		return engine.Failure{Kind: "canceled", Lost: lost}
	case lost:
		return engine.Failure{Kind: "connection", Lost: true}
	}
	return engine.Failure{Kind: "client"}
}

// connectionEnded reports whether the server ends the session with this error: a
// FATAL or PANIC, a connection exception (class 08), or an operator intervention that
// ends sessions (57P01 admin shutdown, 57P02 crash shutdown, 57P03 cannot connect now,
// 57P04 database dropped, 57P05 idle session timeout).
func connectionEnded(pgErr *pgconn.PgError) bool {
	return isFatal(pgErr) || strings.HasPrefix(pgErr.Code, "08") || strings.HasPrefix(pgErr.Code, "57P0")
}

// isFatal reports whether pgErr is a FATAL or PANIC error: the server closes the
// connection after it.
func isFatal(pgErr *pgconn.PgError) bool {
	sev := pgErr.SeverityUnlocalized
	if sev == "" { // servers before 9.6 send only the localized severity
		sev = pgErr.Severity
	}
	return sev == "FATAL" || sev == "PANIC"
}

// Modes implements engine.Database: what init registered (storbench's stored
// procedures first).
func (db *DB) Modes() []engine.Mode { return engine.Modes(db.Engine()) }

// Connect implements engine.Database.
func (db *DB) Connect(ctx context.Context, mode engine.Mode) (engine.Session, error) {
	if mode == engine.Procedures {
		if err := db.checkProcedures(ctx); err != nil {
			return nil, err
		}
		s, err := newProcSession(ctx, db.cfg)
		if err != nil {
			return nil, err
		}
		return s, nil
	}
	s, err := newSQLModeSession(ctx, db.cfg)
	if err != nil {
		return nil, err
	}
	return s, nil
}

// procedureNames are the functions the procedures mode calls (sql/functions.sql).
var procedureNames = []string{"storbench_delivery", "storbench_new_order", "storbench_order_status",
	"storbench_payment", "storbench_stock_level"}

// checkProcedures fails early, with a useful message, when the database has the tables
// but not storbench's functions (built by another tool). Only success is remembered: a
// failure (a transient one too) is returned, and the next connect asks again.
func (db *DB) checkProcedures(ctx context.Context) error {
	if db.procsOK.Load() {
		return nil
	}
	db.mu.Lock()
	defer db.mu.Unlock()
	if db.procsOK.Load() {
		return nil
	}
	have, err := db.ownFunctions(ctx)
	if err != nil {
		return err
	}
	for _, name := range procedureNames {
		if !slices.ContainsFunc(have, func(f string) bool { return strings.HasPrefix(f, name+"(") }) {
			return input.Errorf("mode", "the database lacks storbench's stored procedure %s: run storbench build, or use {mode} sql",
				name)
		}
	}
	db.procsOK.Store(true)
	return nil
}

// ownFunctions lists storbench's functions as regprocedure text ("name(argtypes)").
func (db *DB) ownFunctions(ctx context.Context) ([]string, error) {
	return db.names(ctx, ownFunctionsSQL)
}

// names runs a query of one text column.
func (db *DB) names(ctx context.Context, query string) ([]string, error) {
	rows, err := db.conn.Query(ctx, query)
	if err != nil {
		return nil, err
	}
	return pgx.CollectRows(rows, pgx.RowTo[string])
}

// NewLoader implements engine.Database.
func (db *DB) NewLoader(ctx context.Context) (engine.Loader, error) {
	conn, err := pgx.ConnectConfig(ctx, db.cfg.Copy())
	if err != nil {
		return nil, err
	}
	// A load is rebuilt on failure, not recovered: its commits need not wait for the
	// WAL flush (each COPY is one transaction). FinishBuild's CHECKPOINT writes
	// everything the load left, WAL and data pages, before the database counts as built.
	if _, err := conn.Exec(ctx, loaderSessionSQL); err != nil {
		conn.Close(ctx)
		return nil, err
	}
	return &loader{conn: conn}, nil
}

type loader struct{ conn *pgx.Conn }

// Load streams text rows with COPY: the generator's format is COPY's text format.
func (l *loader) Load(ctx context.Context, table tpcc.Table, rows io.Reader) (int64, error) {
	// Generated, not an embedded file: the column list is tpcc's, the generator's order.
	sql := fmt.Sprintf("COPY %s (%s) FROM STDIN", table, strings.Join(table.Columns(), ", "))
	tag, err := l.conn.PgConn().CopyFrom(ctx, rows, sql)
	return tag.RowsAffected(), err
}

func (l *loader) Close() { l.conn.Close(context.Background()) }
