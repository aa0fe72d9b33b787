package postgres

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/storbench/storbench/internal/engine"
	"github.com/storbench/storbench/internal/input"
	"github.com/storbench/storbench/internal/tpcc"
)

// changes are the row changes of one New-Order, from pg_stat_user_tables, which counts
// the changes of rolled-back transactions too.
type changes struct{ districtUpd, stockUpd, ordersIns, newOrderIns, orderLineIns int64 }

const changesSQL = `SELECT
	sum(n_tup_upd) FILTER (WHERE relname = 'district'), sum(n_tup_upd) FILTER (WHERE relname = 'stock'),
	sum(n_tup_ins) FILTER (WHERE relname = 'orders'), sum(n_tup_ins) FILTER (WHERE relname = 'new_order'),
	sum(n_tup_ins) FILTER (WHERE relname = 'order_line')
	FROM pg_stat_user_tables`

func readChanges(t *testing.T, db *DB) changes {
	t.Helper()
	var c changes
	// A new snapshot of the statistics: the default stats_fetch_consistency caches them
	// for the transaction.
	if _, err := db.conn.Exec(context.Background(), "SELECT pg_stat_clear_snapshot()"); err != nil {
		t.Fatal(err)
	}
	q(t, db, changesSQL, &c.districtUpd, &c.stockUpd, &c.ordersIns, &c.newOrderIns, &c.orderLineIns)
	return c
}

// newOrderChanges runs one New-Order on a new session of mode and returns the rows it
// changed. The session then closes: its backend flushes its statistics on exit, and
// every path updates the district, whose counter shows the flush has landed.
func newOrderChanges(t *testing.T, db *DB, mode engine.Mode, in *tpcc.NewOrderInput, wantRollback bool) changes {
	t.Helper()
	before := readChanges(t, db)
	s, err := db.Connect(context.Background(), mode)
	if err != nil {
		t.Fatal(err)
	}
	rolledBack, err := s.NewOrder(context.Background(), in)
	s.Close()
	if err != nil || rolledBack != wantRollback {
		t.Fatalf("NewOrder = %v, %v; want rolled back %v", rolledBack, err, wantRollback)
	}
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(50 * time.Millisecond) {
		after := readChanges(t, db)
		if after.districtUpd > before.districtUpd {
			return changes{after.districtUpd - before.districtUpd, after.stockUpd - before.stockUpd,
				after.ordersIns - before.ordersIns, after.newOrderIns - before.newOrderIns,
				after.orderLineIns - before.orderLineIns}
		}
		if time.Now().After(deadline) {
			t.Fatal("the session's statistics never arrived")
		}
	}
}

// TestNewOrderWork: in both modes, (1) an item on two lines is two stock updates, one
// per line (2.4.2.2); (2) each line's brand-generic is "B" when both i_data and s_data
// hold ORIGINAL, else "G"; (3) a New-Order with an unused item (2.4.2.3) does all the
// work of the valid lines (the order, its new_order row, their stock and order lines)
// before it rolls back.
func TestNewOrderWork(t *testing.T) {
	ts := startTemplate(t)
	for _, mode := range modes {
		t.Run(string(mode), func(t *testing.T) {
			db := ts.clone(t)
			ctx := t.Context()
			// Item 11 and its stock in warehouse 1 hold ORIGINAL; item 12 only in i_data.
			for _, stmt := range []string{
				`UPDATE item SET i_data = 'abcORIGINALdef' WHERE i_id IN (11, 12)`,
				`UPDATE stock SET s_data = 'xyzORIGINAL' WHERE s_w_id = 1 AND s_i_id = 11`,
				`UPDATE stock SET s_data = 'xyz' WHERE s_w_id = 1 AND s_i_id = 12`,
			} {
				if _, err := db.conn.Exec(ctx, stmt); err != nil {
					t.Fatal(err)
				}
			}
			before := readStock(t, db, 1, 13)
			in := &tpcc.NewOrderInput{WID: 1, DID: 2, CID: 3, AllLocal: true, Lines: []tpcc.OrderLine{
				{ItemID: 13, SupplyWID: 1, Quantity: 4},
				{ItemID: 11, SupplyWID: 1, Quantity: 1},
				{ItemID: 13, SupplyWID: 1, Quantity: 6},
				{ItemID: 12, SupplyWID: 1, Quantity: 1},
			}}
			got := newOrderChanges(t, db, mode, in, false)
			if want := (changes{1, 4, 1, 1, 4}); got != want {
				t.Errorf("committed New-Order changed %+v, want %+v (one stock update per line)", got, want)
			}
			after := readStock(t, db, 1, 13)
			if after.orderCnt != before.orderCnt+2 || after.ytd != before.ytd+10 {
				t.Errorf("stock of item 13: %+v after %+v, want s_order_cnt +2 and s_ytd +10", after, before)
			}
			var brands string
			for _, l := range in.Lines {
				brands += string(l.BrandGeneric)
			}
			if brands != "GBGG" {
				t.Errorf("brand-generic of the lines: %q, want GBGG", brands)
			}

			bad := &tpcc.NewOrderInput{WID: 1, DID: 2, CID: 3, AllLocal: true, Rollback: true, Lines: []tpcc.OrderLine{
				{ItemID: 21, SupplyWID: 1, Quantity: 1},
				{ItemID: 22, SupplyWID: 1, Quantity: 1},
				{ItemID: 21, SupplyWID: 1, Quantity: 1},
				{ItemID: tpcc.UnusedItemID, SupplyWID: 1, Quantity: 1},
			}}
			got = newOrderChanges(t, db, mode, bad, true)
			if want := (changes{1, 3, 1, 1, 3}); got != want {
				t.Errorf("rolled-back New-Order changed %+v, want %+v (all the valid lines' work)", got, want)
			}
		})
	}
}

// TestProceduresOfAnotherVersion: a database whose functions another storbench
// version created (here a New-Order function with the old two result columns) is
// refused when the session prepares its calls, naming the fix, not at the first call.
func TestProceduresOfAnotherVersion(t *testing.T) {
	ts := startTemplate(t)
	db := ts.clone(t)
	ctx := t.Context()
	for _, stmt := range []string{
		`DROP FUNCTION storbench_new_order`,
		`CREATE FUNCTION storbench_new_order(w int, d int, c int, items int[], supply int[], qty int[],
			OUT order_id int, OUT total_cents bigint) LANGUAGE sql AS 'SELECT 1, 2::bigint'`,
	} {
		if _, err := db.conn.Exec(ctx, stmt); err != nil {
			t.Fatal(err)
		}
	}
	s, err := db.Connect(ctx, engine.Procedures)
	if err == nil {
		s.Close()
		t.Fatal("a procedures session opened on another version's functions")
	}
	if !errors.Is(err, input.ErrInvalid) || !strings.Contains(err.Error(), "another storbench version") || !strings.Contains(err.Error(), "--mode sql") {
		t.Errorf("error %q: want an input error naming the other version and the fix", err)
	}
}
