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
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"

	"github.com/storbench/storbench/internal/engine"
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
)

func init() {
	engine.Register(Open, "postgres", "postgresql")
}

// DB is an open PostgreSQL TPC-C database. It keeps one connection for schema work,
// counters and checks; loaders and sessions open their own.
type DB struct {
	cfg       *pgx.ConnConfig
	conn      *pgx.Conn
	procsOnce sync.Once
	procsErr  error
}

// Open connects to the database a postgres:// DSN names.
func Open(ctx context.Context, dsn string) (engine.Database, error) {
	cfg, err := pgx.ParseConfig(dsn)
	if err != nil {
		return nil, fmt.Errorf("%w: --dsn: %v", engine.ErrInput, err)
	}
	if cfg.ConnectTimeout == 0 {
		cfg.ConnectTimeout = 10 * time.Second
	}
	conn, err := pgx.ConnectConfig(ctx, cfg)
	if err != nil {
		return nil, fmt.Errorf("%w: cannot connect to %s (check host, port, user, database and that the server runs): %v",
			engine.ErrInput, engine.RedactDSN(dsn), err)
	}
	return &DB{cfg: cfg, conn: conn}, nil
}

// Engine implements engine.Database.
func (db *DB) Engine() string { return "postgres" }

// ServerVersion implements engine.Database.
func (db *DB) ServerVersion(ctx context.Context) (string, error) {
	var v string
	err := db.conn.QueryRow(ctx, "SELECT version()").Scan(&v)
	return v, err
}

// Close implements engine.Database.
func (db *DB) Close() { db.conn.Close(context.Background()) }

// ownTables are the tables storbench creates: the spec's and its build record.
func ownTables() []string {
	names := make([]string, 0, len(tpcc.Tables)+1)
	for _, t := range tpcc.Tables {
		names = append(names, t.String())
	}
	return append(names, "storbench_build")
}

// ExistingTables implements engine.Database.
func (db *DB) ExistingTables(ctx context.Context) ([]string, error) {
	rows, err := db.conn.Query(ctx, existingTablesSQL, ownTables())
	if err != nil {
		return nil, err
	}
	return pgx.CollectRows(rows, pgx.RowTo[string])
}

// CreateTables implements engine.Database.
func (db *DB) CreateTables(ctx context.Context) error {
	_, err := db.conn.Exec(ctx, schemaSQL)
	return err
}

// FinishBuild implements engine.Database.
func (db *DB) FinishBuild(ctx context.Context, info engine.BuildInfo) error {
	steps := []struct{ what, sql string }{
		{"create keys and indexes", indexesSQL},
		{"create stored procedures", functionsSQL},
		{"analyze", "ANALYZE"},
	}
	for _, s := range steps {
		if _, err := db.conn.Exec(ctx, s.sql); err != nil {
			return fmt.Errorf("%s: %w", s.what, err)
		}
	}
	_, err := db.conn.Exec(ctx, buildInfoWriteSQL, info.Warehouses, int64(info.Seed), info.CLoad, info.BuiltAt, info.Version)
	return err
}

// BuildInfo implements engine.Database.
func (db *DB) BuildInfo(ctx context.Context) (engine.BuildInfo, error) {
	var info engine.BuildInfo
	var seed int64
	err := db.conn.QueryRow(ctx, buildInfoReadSQL).
		Scan(&info.Warehouses, &seed, &info.CLoad, &info.BuiltAt, &info.Version)
	info.Seed = uint64(seed)
	if err == nil {
		return info, nil
	}
	var pgErr *pgconn.PgError
	if !errors.Is(err, pgx.ErrNoRows) && !(errors.As(err, &pgErr) && pgErr.Code == "42P01") {
		return info, err
	}
	// Built by another tool: the warehouse count is still needed to run.
	if err := db.conn.QueryRow(ctx, warehouseCountSQL).Scan(&info.Warehouses); err != nil {
		return info, fmt.Errorf("no TPC-C schema here (run storbench build first): %w", err)
	}
	return info, engine.ErrNoBuildInfo
}

// Drop implements engine.Database: it drops only storbench's own tables and functions.
func (db *DB) Drop(ctx context.Context) ([]string, error) {
	tables, err := db.ExistingTables(ctx)
	if err != nil {
		return nil, err
	}
	funcs, err := db.ownFunctions(ctx)
	if err != nil {
		return nil, err
	}
	var stmt strings.Builder
	for _, f := range funcs {
		fmt.Fprintf(&stmt, "DROP FUNCTION %s;\n", f)
	}
	for _, t := range tables {
		fmt.Fprintf(&stmt, "DROP TABLE %s;\n", pgx.Identifier{t}.Sanitize())
	}
	if stmt.Len() > 0 {
		if _, err := db.conn.Exec(ctx, stmt.String()); err != nil {
			return nil, err
		}
	}
	return append(tables, funcs...), nil
}

// Counters implements engine.Database: pg_stat_database's commits + rollbacks of this
// database (HammerDB sums every database on the server, so unrelated activity counts
// there) and sum(d_next_o_id).
func (db *DB) Counters(ctx context.Context) (engine.Counters, error) {
	var c engine.Counters
	err := db.conn.QueryRow(ctx, countersSQL).Scan(&c.Transactions, &c.NextOrderIDs)
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

// Classify implements engine.Database.
func (db *DB) Classify(err error) engine.Failure {
	var pgErr *pgconn.PgError
	if errors.As(err, &pgErr) {
		switch pgErr.Code {
		case "40001", "40P01": // serialization_failure, deadlock_detected
			return engine.Failure{Retry: true, Kind: pgErr.Code}
		case "57P01", "57P02", "57P03": // admin shutdown, crash shutdown, cannot connect now
			return engine.Failure{Kind: pgErr.Code, Lost: true}
		}
		return engine.Failure{Kind: pgErr.Code}
	}
	if errors.Is(err, context.DeadlineExceeded) || errors.Is(err, context.Canceled) {
		return engine.Failure{Kind: "canceled"}
	}
	return engine.Failure{Kind: "connection", Lost: true}
}

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
	conn, err := pgx.ConnectConfig(ctx, db.cfg.Copy())
	if err != nil {
		return nil, err
	}
	return newSQLModeSession(conn), nil
}

// procedureNames are the functions the procedures mode calls (sql/functions.sql).
var procedureNames = []string{"storbench_delivery", "storbench_new_order", "storbench_order_status",
	"storbench_payment", "storbench_stock_level"}

// checkProcedures fails early, with a useful message, when the database has the tables
// but not storbench's functions (built by another tool). It asks the server once.
func (db *DB) checkProcedures(ctx context.Context) error {
	db.procsOnce.Do(func() {
		have, err := db.ownFunctions(ctx)
		if err != nil {
			db.procsErr = err
			return
		}
		for _, name := range procedureNames {
			if !slices.ContainsFunc(have, func(f string) bool { return strings.HasPrefix(f, name+"(") }) {
				db.procsErr = fmt.Errorf("%w: the database lacks storbench's stored procedure %s: run storbench build, or use --mode sql",
					engine.ErrInput, name)
				return
			}
		}
	})
	return db.procsErr
}

// ownFunctions lists storbench's functions as regprocedure text ("name(argtypes)").
func (db *DB) ownFunctions(ctx context.Context) ([]string, error) {
	rows, err := db.conn.Query(ctx, ownFunctionsSQL)
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
	// A load is rebuilt on failure, not recovered: commits need not wait for the WAL
	// flush (each COPY is one transaction; durability comes from the final checkpoint).
	if _, err := conn.Exec(ctx, "SET synchronous_commit = off"); err != nil {
		conn.Close(ctx)
		return nil, err
	}
	return &loader{conn: conn}, nil
}

type loader struct{ conn *pgx.Conn }

// Load streams text rows with COPY: the generator's format is COPY's text format.
func (l *loader) Load(ctx context.Context, table tpcc.Table, rows io.Reader) (int64, error) {
	sql := fmt.Sprintf("COPY %s (%s) FROM STDIN", table, strings.Join(table.Columns(), ", "))
	tag, err := l.conn.PgConn().CopyFrom(ctx, rows, sql)
	return tag.RowsAffected(), err
}

func (l *loader) Close() { l.conn.Close(context.Background()) }
