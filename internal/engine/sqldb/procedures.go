package sqldb

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"io/fs"
	"path"
	"strconv"
	"strings"

	"github.com/storbench/storbench/internal/engine"
	"github.com/storbench/storbench/internal/input"
	"github.com/storbench/storbench/internal/tpcc"
)

// The procedures mode: each transaction is one call of the dialect's stored procedure,
// one round trip. The procedure runs the whole transaction inside (its START, COMMIT,
// the spec's ROLLBACK, and a rollback on any error, which it passes on) and ends with
// one result row of its outputs.
//
// The dialect's files, under procedures/:
//   - create_NAME.sql: one CREATE PROCEDURE each, run whole as one statement;
//   - call_NAME.sql: its call, one statement with ? placeholders, prepared once per
//     session; the arguments and the result row are those of the comments below;
//   - existing.sql: the names of the procedures present (Drop and rebuilds drop them).
//
// New-Order's lines go as four comma-separated lists of numbers, in stock-lock order
// (tpcc.NewOrderInput.LockOrder), so that the procedure locks stock rows in the one
// order every New-Order uses, and it need not sort.
type procID int

const (
	procNewOrder    procID = iota // w, d, c, items, supply ws, quantities, ol_numbers → rolled_back (0/1), o_id, total (cents), brands (bit ol_number-1: 'B')
	procPayment                   // w, d, c_w, c_d, c, by name (0/1), c_last, amount (cents) → c_id
	procOrderStatus               // w, d, c, by name (0/1), c_last → c_id, o_id (0: none), its line count
	procDelivery                  // w, carrier → skipped districts
	procStockLevel                // w, d, threshold → count of distinct items

	numProcs
)

var procNames = [numProcs]string{
	procNewOrder: "new_order", procPayment: "payment", procOrderStatus: "order_status",
	procDelivery: "delivery", procStockLevel: "stock_level",
}

// procPrefix starts the name of every stored procedure of storbench's.
const procPrefix = "storbench_"

// procSession runs each transaction as one prepared call on its own connection.
type procSession struct {
	prepared // the calls, by procID

	// Scratch: New-Order's four lists and the lock order.
	items, supply, qty, number []byte
	order                      [tpcc.MaxOrderLines]int

	// Results: the last transaction's outputs, kept for tests and debugging.
	rolledBack                 bool
	orderID, customerID, lines int64
	total                      int64 // New-Order's total in cents (2.4.2.2)
	count                      int64 // Delivery's skipped districts, Stock-Level's count
}

// newProcSession prepares the five calls on conn. On error the caller still owns
// conn; otherwise Close closes it.
func newProcSession(ctx context.Context, conn *sql.Conn, d *Dialect) (engine.Session, error) {
	files := make([]string, numProcs)
	for id, name := range procNames {
		files[id] = "procedures/call_" + name + ".sql"
	}
	p, err := prepare(ctx, conn, d, files, func(int) bool { return false })
	if err != nil {
		return nil, err
	}
	s := &procSession{prepared: p}
	for _, b := range []*[]byte{&s.items, &s.supply, &s.qty, &s.number} {
		*b = make([]byte, 0, 8*tpcc.MaxOrderLines)
	}
	return s, nil
}

// NewOrder implements engine.Session (2.4.2).
func (s *procSession) NewOrder(ctx context.Context, in *tpcc.NewOrderInput) (bool, error) {
	if len(in.Lines) > len(s.order) {
		return false, fmt.Errorf("new-order with %d lines: at most %d", len(in.Lines), len(s.order))
	}
	s.items, s.supply, s.qty, s.number = s.items[:0], s.supply[:0], s.qty[:0], s.number[:0]
	for k, i := range in.LockOrder(s.order[:0]) {
		if k > 0 {
			s.items, s.supply = append(s.items, ','), append(s.supply, ',')
			s.qty, s.number = append(s.qty, ','), append(s.number, ',')
		}
		l := &in.Lines[i]
		s.items = strconv.AppendInt(s.items, int64(l.ItemID), 10)
		s.supply = strconv.AppendInt(s.supply, int64(l.SupplyWID), 10)
		s.qty = strconv.AppendInt(s.qty, int64(l.Quantity), 10)
		s.number = strconv.AppendInt(s.number, int64(i+1), 10) // ol_number: the input position
	}
	var rolledBack, brands int64
	err := s.call(ctx, procNewOrder,
		s.a(in.WID, in.DID, in.CID, string(s.items), string(s.supply), string(s.qty), string(s.number)),
		s.to(&rolledBack, &s.orderID, &s.total, &brands))
	if err != nil {
		return false, err
	}
	// 2.4.2.3: the unused item rolled the transaction back; an expected outcome.
	s.rolledBack = rolledBack != 0
	if !s.rolledBack {
		in.SetBrands(brands)
	}
	return s.rolledBack, nil
}

// Payment implements engine.Session (2.5.2).
func (s *procSession) Payment(ctx context.Context, in *tpcc.PaymentInput) error {
	return s.call(ctx, procPayment,
		s.a(in.WID, in.DID, in.CWID, in.CDID, in.CID, flag(in.ByName), in.CLast, in.Amount),
		s.to(&s.customerID))
}

// OrderStatus implements engine.Session (2.6.2).
func (s *procSession) OrderStatus(ctx context.Context, in *tpcc.OrderStatusInput) error {
	return s.call(ctx, procOrderStatus, s.a(in.WID, in.DID, in.CID, flag(in.ByName), in.CLast),
		s.to(&s.customerID, &s.orderID, &s.lines))
}

// Delivery implements engine.Session (2.7.4).
func (s *procSession) Delivery(ctx context.Context, in *tpcc.DeliveryInput) (int, error) {
	err := s.call(ctx, procDelivery, s.a(in.WID, in.CarrierID), s.to(&s.count))
	return int(s.count), err
}

// StockLevel implements engine.Session (2.8.2).
func (s *procSession) StockLevel(ctx context.Context, in *tpcc.StockLevelInput) (int, error) {
	err := s.call(ctx, procStockLevel, s.a(in.WID, in.DID, in.Threshold), s.to(&s.count))
	return int(s.count), err
}

// call runs one procedure and scans its result row. The rows are read to the end: a
// call's last result is its status, which carries the error of a failure after the
// row was sent.
func (s *procSession) call(ctx context.Context, id procID, args, dst []any) error {
	rows, err := s.stmt[id].QueryContext(ctx, args...)
	if err != nil {
		return fmt.Errorf("%s: %w", procNames[id], err)
	}
	if !rows.Next() {
		err = rows.Err()
		if err == nil {
			err = errors.New("returned no row")
		}
	} else if err = rows.Scan(dst...); err != nil {
		// A procedure created by another storbench version returns other columns
		// (looked at only on failure: Columns allocates).
		if cols, cerr := rows.Columns(); cerr == nil && len(cols) != len(dst) {
			err = input.Errorf("mode", "it returned %d columns, want %d: the database's procedures come from another storbench version; rebuild it (storbench drop, then build) or use {mode} sql",
				len(cols), len(dst))
		}
	}
	if cerr := rows.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return fmt.Errorf("%s: %w", procNames[id], err)
	}
	return nil
}

// flag is a boolean argument as 0 or 1, which every engine's integer or boolean
// parameter takes.
func flag(b bool) int64 {
	if b {
		return 1
	}
	return 0
}

// createProcedures drops the procedures a previous build left, then creates the
// dialect's: procedures/create_NAME.sql, each run whole as one statement, creating
// storbench_NAME, which is entered in the build's record first (each CREATE commits).
func (db *DB) createProcedures(ctx context.Context) error {
	if _, err := db.dropProcedures(ctx); err != nil {
		return err
	}
	files, err := fs.Glob(db.dialect.SQL, "procedures/create_*.sql")
	if err != nil {
		return err
	}
	if len(files) == 0 {
		return fmt.Errorf("%s has no procedures/create_*.sql", db.dialect.Engine)
	}
	for _, f := range files {
		text, err := fs.ReadFile(db.dialect.SQL, f)
		if err != nil {
			return err
		}
		name := procPrefix + strings.TrimSuffix(strings.TrimPrefix(path.Base(f), "create_"), ".sql")
		if err := db.record(ctx, db.pool, engine.Object{Kind: engine.Routine, Name: name}); err != nil {
			return err
		}
		if _, err := db.pool.ExecContext(ctx, strings.TrimSpace(string(text))); err != nil {
			return fmt.Errorf("%s: %w", path.Base(f), err)
		}
	}
	return nil
}

// dropProcedures drops storbench's stored procedures (procedures/existing.sql lists
// them: their names start with storbench_) and returns their names.
func (db *DB) dropProcedures(ctx context.Context) ([]string, error) {
	names, err := db.names(ctx, "procedures/existing.sql")
	if err != nil {
		return nil, err
	}
	for _, name := range names {
		if !strings.HasPrefix(strings.ToLower(name), procPrefix) || !plainIdentifier(name) {
			return nil, fmt.Errorf("existing.sql listed %q, not one of storbench's procedures", name)
		}
		// Generated, not an embedded file: the statement names what was found above.
		if _, err := db.pool.ExecContext(ctx, "DROP PROCEDURE "+name); err != nil {
			return nil, fmt.Errorf("drop procedure %s: %w", name, err)
		}
	}
	return names, nil
}

// plainIdentifier: name is letters, digits and '_' (safe to name unquoted in a
// statement), as storbench's and HammerDB's tables and procedures are.
func plainIdentifier(name string) bool {
	for _, r := range name {
		if !(r == '_' || r >= '0' && r <= '9' || r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z') {
			return false
		}
	}
	return name != ""
}
