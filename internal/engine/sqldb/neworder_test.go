package sqldb

import (
	"context"
	"database/sql/driver"
	"fmt"
	"maps"
	"sync"
	"testing"

	"modernc.org/sqlite"

	"github.com/storbench/storbench/internal/engine"
	"github.com/storbench/storbench/internal/tpcc"
)

// The row changes of one New-Order, by table: every engine and mode must do the same
// work (2.4.2.2), a rolled-back New-Order included (2.4.2.3).
type changes map[string]int64

// The tiny databases' items 1..3 are in both; item 4 of SQLite's has no twin in
// MariaDB's, so the brand-generic lines use items 1..3 there. brandSetup makes item 1
// and its stock in warehouse 1 hold ORIGINAL, and item 2 only in i_data.
var brandSetup = []string{
	`UPDATE item SET i_data = 'abcORIGINALdef' WHERE i_id IN (1, 2)`,
	`UPDATE stock SET s_data = 'xyzORIGINAL' WHERE s_w_id = 1 AND s_i_id = 1`,
}

// newOrderWork runs a committed New-Order naming item 3 on two lines, then one with an
// unused item, on s, and checks the rows each changed (changed runs a New-Order and
// returns its changes), the stock of item 3 and the lines' brand-generic.
func newOrderWork(t *testing.T, s engine.Session, stock3 func() string, changed func(func()) changes) {
	t.Helper()
	ctx := context.Background()
	in := &tpcc.NewOrderInput{WID: 1, DID: 1, CID: 1, AllLocal: true, Lines: []tpcc.OrderLine{
		{ItemID: 3, SupplyWID: 1, Quantity: 4},
		{ItemID: 1, SupplyWID: 1, Quantity: 1},
		{ItemID: 3, SupplyWID: 1, Quantity: 6},
		{ItemID: 2, SupplyWID: 1, Quantity: 1},
	}}
	before := stock3()
	got := changed(func() {
		if rolledBack, err := s.NewOrder(ctx, in); err != nil || rolledBack {
			t.Fatalf("NewOrder = %v, %v", rolledBack, err)
		}
	})
	want := changes{"district": 1, "stock": 4, "orders": 1, "new_order": 1, "order_line": 4}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("committed New-Order changed %v, want %v (one stock update per line)", got, want)
	}
	if after := stock3(); before != "0 0" || after != "10 2" {
		t.Errorf("stock of item 3: s_ytd, s_order_cnt %q before, %q after; want \"0 0\", \"10 2\"", before, after)
	}
	var brands string
	for _, l := range in.Lines {
		brands += string(l.BrandGeneric)
	}
	if brands != "GBGG" {
		t.Errorf("brand-generic of the lines: %q, want GBGG", brands)
	}

	bad := &tpcc.NewOrderInput{WID: 1, DID: 1, CID: 1, AllLocal: true, Rollback: true, Lines: []tpcc.OrderLine{
		{ItemID: 2, SupplyWID: 1, Quantity: 1},
		{ItemID: 3, SupplyWID: 1, Quantity: 1},
		{ItemID: 2, SupplyWID: 1, Quantity: 1},
		{ItemID: tpcc.UnusedItemID, SupplyWID: 1, Quantity: 1},
	}}
	got = changed(func() {
		if rolledBack, err := s.NewOrder(ctx, bad); err != nil || !rolledBack {
			t.Fatalf("NewOrder with an unused item = %v, %v; want rolled back", rolledBack, err)
		}
	})
	want = changes{"district": 1, "stock": 3, "orders": 1, "new_order": 1, "order_line": 3}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("rolled-back New-Order changed %v, want %v (all the valid lines' work)", got, want)
	}
}

// SQLite: triggers call a Go function that counts each change. A rollback undoes the
// changes, not the function's count.
var (
	sqliteChangesMu sync.Mutex
	sqliteChanges   = changes{}
)

func init() {
	err := sqlite.RegisterScalarFunction("test_count_change", 1, func(_ *sqlite.FunctionContext, args []driver.Value) (driver.Value, error) {
		sqliteChangesMu.Lock()
		defer sqliteChangesMu.Unlock()
		sqliteChanges[args[0].(string)]++
		return nil, nil
	})
	if err != nil {
		panic(err)
	}
}

func TestNewOrderWorkSQLite(t *testing.T) {
	_, db := newTestSession(t)
	for _, table := range []string{"district", "stock", "orders", "new_order", "order_line"} {
		for _, op := range []string{"INSERT", "UPDATE", "DELETE"} {
			q := fmt.Sprintf(`CREATE TRIGGER test_%s_%s AFTER %s ON %s BEGIN SELECT test_count_change('%s'); END`,
				table, op, op, table, table)
			if _, err := db.Exec(q); err != nil {
				t.Fatal(err)
			}
		}
	}
	for _, q := range brandSetup {
		if _, err := db.Exec(q); err != nil {
			t.Fatal(err)
		}
	}
	// A session opened after the triggers: its statements are prepared with them.
	ctx := t.Context()
	conn, err := db.Conn(ctx)
	if err != nil {
		t.Fatal(err)
	}
	s, err := newSession(ctx, conn, testDialect)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	stock3 := func() string {
		return fmt.Sprint(query(t, db, `SELECT s_ytd || ' ' || s_order_cnt FROM stock WHERE s_w_id = 1 AND s_i_id = 3`)[0])
	}
	newOrderWork(t, s, stock3, func(run func()) changes {
		sqliteChangesMu.Lock()
		clear(sqliteChanges)
		sqliteChangesMu.Unlock()
		run()
		sqliteChangesMu.Lock()
		defer sqliteChangesMu.Unlock()
		return maps.Clone(sqliteChanges)
	})
}

// MariaDB: information_schema.TABLE_STATISTICS (with userstat on) counts the rows each
// table's handler changed, a rolled-back transaction's too.
func TestNewOrderWorkMariaDB(t *testing.T) {
	ctx := context.Background()
	db, srv := openTinyMariaDBServer(t)
	root, err := srv.Root()
	if err != nil {
		t.Fatal(err)
	}
	defer root.Close()
	if _, err := root.ExecContext(ctx, "SET GLOBAL userstat = 1"); err != nil {
		t.Fatal(err)
	}
	for _, q := range brandSetup {
		if _, err := db.pool.ExecContext(ctx, q); err != nil {
			t.Fatal(err)
		}
	}
	read := func() changes {
		rows, err := db.pool.QueryContext(ctx, `SELECT TABLE_NAME, ROWS_CHANGED FROM information_schema.TABLE_STATISTICS
			WHERE TABLE_SCHEMA = DATABASE()`)
		if err != nil {
			t.Fatal(err)
		}
		defer rows.Close()
		c := changes{}
		for rows.Next() {
			var name string
			var n int64
			if err := rows.Scan(&name, &n); err != nil {
				t.Fatal(err)
			}
			c[name] = n
		}
		if err := rows.Err(); err != nil {
			t.Fatal(err)
		}
		return c
	}
	stock3 := func() string {
		return fmt.Sprint(query(t, db.pool, `SELECT CONCAT(CAST(s_ytd AS CHAR), ' ', s_order_cnt) FROM stock WHERE s_w_id = 1 AND s_i_id = 3`)[0])
	}
	for _, mode := range []engine.Mode{engine.Procedures, engine.SQL} {
		t.Run(string(mode), func(t *testing.T) {
			// Each mode starts from the same stock: item 3's counters back to zero.
			if _, err := db.pool.ExecContext(ctx, `UPDATE stock SET s_ytd = 0, s_order_cnt = 0 WHERE s_i_id = 3`); err != nil {
				t.Fatal(err)
			}
			s, err := db.Connect(ctx, mode)
			if err != nil {
				t.Fatal(err)
			}
			defer s.Close()
			newOrderWork(t, s, stock3, func(run func()) changes {
				before := read()
				run()
				diff := changes{}
				for name, n := range read() {
					if d := n - before[name]; d != 0 {
						diff[name] = d
					}
				}
				return diff
			})
		})
	}
}
