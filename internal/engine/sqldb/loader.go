package sqldb

import (
	"bufio"
	"context"
	"database/sql"
	"fmt"
	"io"
	"strconv"
	"strings"

	"github.com/storbench/storbench/internal/engine"
	"github.com/storbench/storbench/internal/tpcc"
)

// rowsPerInsert is how many rows one prepared INSERT carries: a few hundred
// placeholders per statement, well under every engine's limit (SQLite: 32,766).
const rowsPerInsert = 100

// loader inserts the generator's text rows with prepared multi-row INSERTs, one
// transaction per Load (a table of one warehouse).
type loader struct {
	db   *DB
	conn *sql.Conn
}

// NewLoader implements engine.Database.
func (db *DB) NewLoader(ctx context.Context) (engine.Loader, error) {
	conn, err := db.pool.Conn(ctx)
	if err != nil {
		return nil, err
	}
	return &loader{db: db, conn: conn}, nil
}

// Load implements engine.Loader: the dialect's own Load where it has one, else
// multi-row INSERTs. An engine with one writer (SQLite) loads one table at a time: the
// generators still run in parallel, the writes take turns.
func (l *loader) Load(ctx context.Context, table tpcc.Table, rows io.Reader) (int64, error) {
	if l.db.dialect.SingleWriter {
		l.db.writer.Lock()
		defer l.db.writer.Unlock()
	}
	if l.db.dialect.Load != nil {
		return l.db.dialect.Load(ctx, l.conn, table, rows)
	}
	cols := table.Columns()
	scale := make([]int64, len(cols))
	for i, c := range cols {
		scale[i] = l.db.dialect.Scaled[c]
	}
	tx, err := l.conn.BeginTx(ctx, nil)
	if err != nil {
		return 0, err
	}
	defer tx.Rollback()
	full, err := tx.PrepareContext(ctx, insertSQL(table, rowsPerInsert))
	if err != nil {
		return 0, err
	}
	defer full.Close()

	args := make([]any, 0, rowsPerInsert*len(cols))
	var n, batched int64
	flush := func(stmt *sql.Stmt) error {
		if _, err := stmt.ExecContext(ctx, args...); err != nil {
			return err
		}
		n += batched
		args, batched = args[:0], 0
		return nil
	}
	sc := bufio.NewScanner(rows)
	sc.Buffer(make([]byte, 64*1024), 1<<20)
	for sc.Scan() {
		fields := strings.Split(sc.Text(), "\t")
		if len(fields) != len(cols) {
			return n, fmt.Errorf("%s row %d has %d fields, want %d", table, n+batched+1, len(fields), len(cols))
		}
		for i, f := range fields {
			v, err := field(f, scale[i])
			if err != nil {
				return n, fmt.Errorf("%s.%s: %w", table, cols[i], err)
			}
			args = append(args, v)
		}
		if batched++; batched == rowsPerInsert {
			if err := flush(full); err != nil {
				return n, err
			}
		}
	}
	if err := sc.Err(); err != nil {
		return n, err
	}
	if batched > 0 {
		rest, err := tx.PrepareContext(ctx, insertSQL(table, int(batched)))
		if err != nil {
			return n, err
		}
		defer rest.Close()
		if err := flush(rest); err != nil {
			return n, err
		}
	}
	return n, tx.Commit()
}

// Close implements engine.Loader.
func (l *loader) Close() { l.conn.Close() }

// insertSQL is an INSERT of rows rows into table. Generated, not an embedded file: the
// column list is tpcc's (the generator's order) and the row count varies.
func insertSQL(table tpcc.Table, rows int) string {
	cols := table.Columns()
	row := "(" + strings.TrimSuffix(strings.Repeat("?,", len(cols)), ",") + ")"
	var b strings.Builder
	fmt.Fprintf(&b, "INSERT INTO %s (%s) VALUES ", table, strings.Join(cols, ", "))
	for i := range rows {
		if i > 0 {
			b.WriteByte(',')
		}
		b.WriteString(row)
	}
	return b.String()
}

// field is one text field as an argument: \N is NULL, a scaled column's decimal
// becomes its integer units, anything else goes as text.
func field(f string, scale int64) (any, error) {
	switch {
	case f == `\N`:
		return nil, nil
	case scale == 0:
		return f, nil
	}
	return scaledInt(f, scale)
}

// scaledInt reads a non-negative or negative decimal ("300000.00", "0.1234", "-10.00")
// exactly as an integer of 1/scale units.
func scaledInt(f string, scale int64) (int64, error) {
	whole, frac, _ := strings.Cut(f, ".")
	neg := strings.HasPrefix(whole, "-")
	w, err := strconv.ParseInt(strings.TrimPrefix(whole, "-"), 10, 64)
	if err != nil {
		return 0, fmt.Errorf("not a decimal: %q", f)
	}
	digits := len(strconv.FormatInt(scale, 10)) - 1
	if len(frac) > digits {
		return 0, fmt.Errorf("%q has more than %d decimals", f, digits)
	}
	frac += strings.Repeat("0", digits-len(frac))
	var fv int64
	if frac != "" {
		if fv, err = strconv.ParseInt(frac, 10, 64); err != nil {
			return 0, fmt.Errorf("not a decimal: %q", f)
		}
	}
	v := w*scale + fv
	if neg {
		v = -v
	}
	return v, nil
}
