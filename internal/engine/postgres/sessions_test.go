package postgres

import (
	"context"
	"errors"
	"fmt"
	"net"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/storbench/storbench/internal/engine"
	"github.com/storbench/storbench/internal/engine/rawconn"
	"github.com/storbench/storbench/internal/instance/postgres/pgserver"
	"github.com/storbench/storbench/internal/load"
	"github.com/storbench/storbench/internal/testsupport/pgtest"
	"github.com/storbench/storbench/internal/tpcc"
)

// The tests share one server and one freshly built 2-warehouse database, used as a
// template: each test works on its own copy (CREATE DATABASE ... TEMPLATE copies the
// files, far faster than a load).

const (
	testSeed       = 20240601
	testWarehouses = 2
)

var modes = []engine.Mode{engine.Procedures, engine.SQL}

type testServer struct {
	srv   *pgserver.Server
	mu    sync.Mutex
	count int
}

// startTemplate starts a server and builds the template database "tpcc".
func startTemplate(t testing.TB) *testServer {
	t.Helper()
	srv := pgtest.Start(t)
	ctx := context.Background()
	start := time.Now()
	if err := buildDatabase(ctx, srv.DSN("tpcc"), testSeed, testWarehouses); err != nil {
		t.Fatalf("build: %v", err)
	}
	t.Logf("built %d warehouses in %v", testWarehouses, time.Since(start).Round(time.Millisecond))
	return &testServer{srv: srv}
}

// clone copies the template into a new database and opens it.
func (ts *testServer) clone(t testing.TB) *DB {
	t.Helper()
	ctx := context.Background()
	ts.mu.Lock()
	ts.count++
	name := fmt.Sprintf("tpcc_%d", ts.count)
	ts.mu.Unlock()
	admin, err := pgx.Connect(ctx, ts.srv.DSN("postgres"))
	if err != nil {
		t.Fatal(err)
	}
	defer admin.Close(ctx)
	if _, err := admin.Exec(ctx, "CREATE DATABASE "+name+" TEMPLATE tpcc"); err != nil {
		t.Fatalf("clone: %v", err)
	}
	db, err := Open(ctx, ts.srv.DSN(name), engine.Existing)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(db.Close)
	return db.(*DB)
}

// buildDatabase creates and loads a database with storbench's own build.
func buildDatabase(ctx context.Context, dsn string, seed uint64, warehouses int) error {
	d, err := Open(ctx, dsn, engine.Existing)
	if err != nil {
		return err
	}
	defer d.Close()
	_, err = load.Build(ctx, d, load.Options{Warehouses: warehouses, Workers: 2, Seed: seed, Version: "test"})
	return err
}

func connect(t testing.TB, db *DB, mode engine.Mode) engine.Session {
	t.Helper()
	s, err := db.Connect(context.Background(), mode)
	if err != nil {
		t.Fatalf("connect %s: %v", mode, err)
	}
	t.Cleanup(s.Close)
	return s
}

// q runs a query returning one row.
func q(t *testing.T, db *DB, sql string, dest ...any) {
	t.Helper()
	if err := db.conn.QueryRow(context.Background(), sql).Scan(dest...); err != nil {
		t.Fatalf("%s: %v", sql, err)
	}
}

// qargs runs a query with arguments returning one row.
func qargs(t *testing.T, db *DB, sql string, argv []any, dest ...any) {
	t.Helper()
	if err := db.conn.QueryRow(context.Background(), sql, argv...).Scan(dest...); err != nil {
		t.Fatalf("%s %v: %v", sql, argv, err)
	}
}

// digests fingerprints every table's contents except timestamps, which differ between
// runs (only whether ol_delivery_d is set counts).
var digestQueries = []struct{ table, cols string }{
	{"warehouse", "w_id, w_ytd"},
	{"district", "d_w_id, d_id, d_ytd, d_next_o_id"},
	{"customer", "c_w_id, c_d_id, c_id, c_balance, c_ytd_payment, c_payment_cnt, c_delivery_cnt, c_data"},
	{"history", "h_c_w_id, h_c_d_id, h_c_id, h_d_id, h_w_id, h_amount, h_data"},
	{"new_order", "no_w_id, no_d_id, no_o_id"},
	{"orders", "o_w_id, o_d_id, o_id, o_c_id, o_carrier_id, o_ol_cnt, o_all_local"},
	{"order_line", "ol_w_id, ol_d_id, ol_o_id, ol_number, ol_i_id, ol_supply_w_id, ol_delivery_d IS NULL, ol_quantity, ol_amount, ol_dist_info"},
	{"stock", "s_w_id, s_i_id, s_quantity, s_ytd, s_order_cnt, s_remote_cnt"},
}

func digests(t *testing.T, db *DB) map[string]string {
	t.Helper()
	out := map[string]string{}
	for _, d := range digestQueries {
		var sum string
		// An order-free sum of 60 bits of each row's md5: no sort of 600k rows.
		q(t, db, fmt.Sprintf(`SELECT count(*) || ':' || coalesce(sum(('x' || left(md5(t::text), 15))::bit(60)::bigint), 0)
			FROM (SELECT %s FROM %s) t`, d.cols, d.table), &sum)
		out[d.table] = sum
	}
	return out
}

func TestSessions(t *testing.T) {
	ts := startTemplate(t)
	for _, mode := range modes {
		t.Run(string(mode), func(t *testing.T) {
			db := ts.clone(t)
			testSession(t, db, connect(t, db, mode))
			t.Run("DeliverySkip", func(t *testing.T) { testDeliverySkip(t, ts.clone(t), mode) })
		})
	}
	// The procedures mode with the I/O it falls back to over TLS (wire.go).
	t.Run("procedures-netconn", func(t *testing.T) {
		db := ts.clone(t)
		testSession(t, db, connectNetConn(t, db))
	})
	t.Run("Wire", func(t *testing.T) { testWire(t, ts) })
	t.Run("SQLConnection", func(t *testing.T) { testSQLConnection(t, ts) })
	t.Run("Equivalence", func(t *testing.T) { testEquivalence(t, ts) })
	t.Run("Concurrent", func(t *testing.T) {
		for _, mode := range modes {
			t.Run(string(mode), func(t *testing.T) { testConcurrent(t, ts, mode) })
		}
	})
	t.Run("StockLockOrder", func(t *testing.T) {
		for _, mode := range modes {
			t.Run(string(mode), func(t *testing.T) { testStockLockOrder(t, ts, mode) })
		}
	})
}

// testSession runs every transaction's tests on one session, in order (Order-Status
// reads what New-Order wrote).
func testSession(t *testing.T, db *DB, s engine.Session) {
	t.Run("NewOrder", func(t *testing.T) { testNewOrder(t, db, s) })
	t.Run("NewOrderRollback", func(t *testing.T) { testNewOrderRollback(t, db, s) })
	t.Run("PaymentByName", func(t *testing.T) { testPaymentByName(t, db, s) })
	t.Run("PaymentBadCredit", func(t *testing.T) { testPaymentBadCredit(t, db, s) })
	t.Run("OrderStatus", func(t *testing.T) { testOrderStatus(t, db, s) })
	t.Run("Delivery", func(t *testing.T) { testDelivery(t, db, s) })
	t.Run("StockLevel", func(t *testing.T) { testStockLevel(t, db, s) })
	t.Run("Errors", func(t *testing.T) { testErrors(t, db, s) })
	t.Run("Checks", func(t *testing.T) { testChecks(t, db) })
}

type stockRow struct{ quantity, ytd, orderCnt, remoteCnt int }

func readStock(t *testing.T, db *DB, w, i int) stockRow {
	t.Helper()
	var r stockRow
	qargs(t, db, `SELECT s_quantity, s_ytd, s_order_cnt, s_remote_cnt FROM stock WHERE s_w_id = $1 AND s_i_id = $2`,
		[]any{w, i}, &r.quantity, &r.ytd, &r.orderCnt, &r.remoteCnt)
	return r
}

// newOrderTotal returns the session's last New-Order total in cents (2.4.2.2).
func newOrderTotal(s engine.Session) int64 {
	switch s := s.(type) {
	case *procSession:
		return s.total
	case *sqlSession:
		return s.total
	}
	return -1
}

func testNewOrder(t *testing.T, db *DB, s engine.Session) {
	ctx := context.Background()
	const w, d, c = 1, 3, 42
	in := &tpcc.NewOrderInput{WID: w, DID: d, CID: c, Lines: []tpcc.OrderLine{
		{ItemID: 500, SupplyWID: 1, Quantity: 3},
		{ItemID: 77, SupplyWID: 2, Quantity: 10}, // remote
		{ItemID: 12345, SupplyWID: 1, Quantity: 7},
		{ItemID: 77, SupplyWID: 1, Quantity: 1},
		{ItemID: 12345, SupplyWID: 1, Quantity: 9}, // the same item twice: two lines, one stock row
		{ItemID: 99999, SupplyWID: 1, Quantity: 5},
	}, AllLocal: false, Remote: 1}

	var next int
	qargs(t, db, `SELECT d_next_o_id FROM district WHERE d_w_id = $1 AND d_id = $2`, []any{w, d}, &next)
	type key struct{ w, i int }
	before := map[key]stockRow{}
	for _, l := range in.Lines {
		before[key{l.SupplyWID, l.ItemID}] = readStock(t, db, l.SupplyWID, l.ItemID)
	}
	// Expected stock: the 2.4.2.2 rule applied line after line.
	want := map[key]stockRow{}
	for k, v := range before {
		want[k] = v
	}
	var sumCents int64
	prices := map[int]int64{}
	for _, l := range in.Lines {
		k := key{l.SupplyWID, l.ItemID}
		r := want[k]
		if r.quantity >= l.Quantity+10 {
			r.quantity -= l.Quantity
		} else {
			r.quantity = r.quantity - l.Quantity + 91
		}
		r.ytd += l.Quantity
		r.orderCnt++
		if l.SupplyWID != w {
			r.remoteCnt++
		}
		want[k] = r
		var p int64
		qargs(t, db, `SELECT (i_price * 100)::bigint FROM item WHERE i_id = $1`, []any{l.ItemID}, &p)
		prices[l.ItemID] = p
		sumCents += p * int64(l.Quantity)
	}

	rolledBack, err := s.NewOrder(ctx, in)
	if err != nil || rolledBack {
		t.Fatalf("NewOrder = %v, %v; want false, nil", rolledBack, err)
	}

	var after int
	qargs(t, db, `SELECT d_next_o_id FROM district WHERE d_w_id = $1 AND d_id = $2`, []any{w, d}, &after)
	if after != next+1 {
		t.Errorf("d_next_o_id = %d, want %d", after, next+1)
	}
	var oc, olCnt, allLocal int
	var carrierNull bool
	qargs(t, db, `SELECT o_c_id, o_ol_cnt, o_all_local, o_carrier_id IS NULL FROM orders
		WHERE o_w_id = $1 AND o_d_id = $2 AND o_id = $3 AND o_entry_d IS NOT NULL`,
		[]any{w, d, next}, &oc, &olCnt, &allLocal, &carrierNull)
	if oc != c || olCnt != len(in.Lines) || allLocal != 0 || !carrierNull {
		t.Errorf("order: c_id %d, ol_cnt %d, all_local %d, carrier null %v; want %d, %d, 0, true",
			oc, olCnt, allLocal, carrierNull, c, len(in.Lines))
	}
	var newOrders int
	qargs(t, db, `SELECT count(*) FROM new_order WHERE no_w_id = $1 AND no_d_id = $2 AND no_o_id = $3`,
		[]any{w, d, next}, &newOrders)
	if newOrders != 1 {
		t.Errorf("new_order rows for the order: %d, want 1", newOrders)
	}
	for n, l := range in.Lines {
		var item, supply, qty int
		var cents int64
		var distOK, deliveryNull bool
		qargs(t, db, fmt.Sprintf(`SELECT ol_i_id, ol_supply_w_id, ol_quantity, (ol_amount * 100)::bigint,
			ol_dist_info = (SELECT s_dist_%02d FROM stock WHERE s_w_id = ol_supply_w_id AND s_i_id = ol_i_id),
			ol_delivery_d IS NULL
			FROM order_line WHERE ol_w_id = $1 AND ol_d_id = $2 AND ol_o_id = $3 AND ol_number = $4`, d),
			[]any{w, d, next, n + 1}, &item, &supply, &qty, &cents, &distOK, &deliveryNull)
		if item != l.ItemID || supply != l.SupplyWID || qty != l.Quantity {
			t.Errorf("line %d: item %d, supply %d, qty %d; want %+v", n+1, item, supply, qty, l)
		}
		if want := prices[l.ItemID] * int64(l.Quantity); cents != want {
			t.Errorf("line %d: ol_amount %d cents, want %d", n+1, cents, want)
		}
		if !distOK || !deliveryNull {
			t.Errorf("line %d: dist_info matches s_dist_%02d %v, delivery_d null %v", n+1, d, distOK, deliveryNull)
		}
	}
	var lines int
	qargs(t, db, `SELECT count(*) FROM order_line WHERE ol_w_id = $1 AND ol_d_id = $2 AND ol_o_id = $3`,
		[]any{w, d, next}, &lines)
	if lines != len(in.Lines) {
		t.Errorf("order lines: %d, want %d", lines, len(in.Lines))
	}
	for k, wantRow := range want {
		if got := readStock(t, db, k.w, k.i); got != wantRow {
			t.Errorf("stock (%d, %d): %+v, want %+v (before %+v)", k.w, k.i, got, wantRow, before[k])
		}
	}
	// 2.4.2.2: total = sum(ol_amount) * (1 - c_discount) * (1 + w_tax + d_tax).
	var total int64
	qargs(t, db, `SELECT round($4::numeric / 100 * (1 - c_discount) * (1 + w_tax + d_tax) * 100)::bigint
		FROM customer, warehouse, district
		WHERE c_w_id = $1 AND c_d_id = $2 AND c_id = $3 AND w_id = $1 AND d_w_id = $1 AND d_id = $2`,
		[]any{w, d, c, sumCents}, &total)
	if got := newOrderTotal(s); got != total {
		t.Errorf("total = %d cents, want %d", got, total)
	}
}

func testNewOrderRollback(t *testing.T, db *DB, s engine.Session) {
	ctx := context.Background()
	before := digests(t, db)
	in := &tpcc.NewOrderInput{WID: 1, DID: 5, CID: 7, Rollback: true, AllLocal: true, Lines: []tpcc.OrderLine{
		{ItemID: 1, SupplyWID: 1, Quantity: 5},
		{ItemID: 2, SupplyWID: 1, Quantity: 5},
		{ItemID: 3, SupplyWID: 1, Quantity: 5},
		{ItemID: 4, SupplyWID: 1, Quantity: 5},
		{ItemID: tpcc.UnusedItemID, SupplyWID: 1, Quantity: 5},
	}}
	rolledBack, err := s.NewOrder(ctx, in)
	if err != nil || !rolledBack {
		t.Fatalf("NewOrder = %v, %v; want true, nil", rolledBack, err)
	}
	after := digests(t, db)
	for table, sum := range before {
		if after[table] != sum {
			t.Errorf("rolled-back New-Order changed %s", table)
		}
	}
	// The session is still usable.
	in.Lines[4].ItemID = 5
	if rolledBack, err := s.NewOrder(ctx, in); err != nil || rolledBack {
		t.Fatalf("NewOrder after a rollback = %v, %v; want false, nil", rolledBack, err)
	}
}

type customerRow struct {
	balance, ytd            int64 // cents
	paymentCnt, deliveryCnt int
	data                    string
}

func readCustomer(t *testing.T, db *DB, w, d, c int) customerRow {
	t.Helper()
	var r customerRow
	qargs(t, db, `SELECT (c_balance * 100)::bigint, (c_ytd_payment * 100)::bigint, c_payment_cnt, c_delivery_cnt, c_data
		FROM customer WHERE c_w_id = $1 AND c_d_id = $2 AND c_id = $3`, []any{w, d, c},
		&r.balance, &r.ytd, &r.paymentCnt, &r.deliveryCnt, &r.data)
	return r
}

func ytd(t *testing.T, db *DB, w, d int) (wYTD, dYTD int64) {
	t.Helper()
	qargs(t, db, `SELECT (w_ytd * 100)::bigint, (d_ytd * 100)::bigint FROM warehouse, district
		WHERE w_id = $1 AND d_w_id = $1 AND d_id = $2`, []any{w, d}, &wYTD, &dYTD)
	return
}

func testPaymentByName(t *testing.T, db *DB, s engine.Session) {
	ctx := context.Background()
	const w, d, cw, cd = 1, 2, 2, 5 // a remote customer (2.5.1.2)
	const amount = 123456           // 1234.56
	// A name shared by 3 customers: ceil(3/2) = the 2nd by c_first.
	var last string
	qargs(t, db, `SELECT c_last FROM customer WHERE c_w_id = $1 AND c_d_id = $2
		GROUP BY c_last HAVING count(*) = 3 ORDER BY c_last LIMIT 1`, []any{cw, cd}, &last)
	rows, err := db.conn.Query(ctx, `SELECT c_id FROM customer WHERE c_w_id = $1 AND c_d_id = $2 AND c_last = $3
		ORDER BY c_first, c_id`, cw, cd, last)
	if err != nil {
		t.Fatal(err)
	}
	ids, err := pgx.CollectRows(rows, pgx.RowTo[int])
	if err != nil {
		t.Fatal(err)
	}
	before := map[int]customerRow{}
	for _, id := range ids {
		before[id] = readCustomer(t, db, cw, cd, id)
	}
	wYTD, dYTD := ytd(t, db, w, d)
	var histories int
	q(t, db, `SELECT count(*) FROM history`, &histories)

	in := &tpcc.PaymentInput{WID: w, DID: d, CWID: cw, CDID: cd, CLast: last, ByName: true, Amount: amount}
	if err := s.Payment(ctx, in); err != nil {
		t.Fatal(err)
	}

	paid := ids[1]
	for _, id := range ids {
		got, b := readCustomer(t, db, cw, cd, id), before[id]
		if id != paid {
			if got != b {
				t.Errorf("customer %d (not the middle one) changed", id)
			}
			continue
		}
		if got.balance != b.balance-amount || got.ytd != b.ytd+amount || got.paymentCnt != b.paymentCnt+1 {
			t.Errorf("customer %d: %+v, before %+v", id, got, b)
		}
	}
	if w2, d2 := ytd(t, db, w, d); w2 != wYTD+amount || d2 != dYTD+amount {
		t.Errorf("w_ytd %d -> %d, d_ytd %d -> %d; want +%d", wYTD, w2, dYTD, d2, amount)
	}
	var n int
	qargs(t, db, `SELECT count(*) FROM history h, warehouse, district
		WHERE h_c_id = $1 AND h_c_d_id = $2 AND h_c_w_id = $3 AND h_d_id = $4 AND h_w_id = $5
		  AND h_amount = 1234.56 AND h_date IS NOT NULL
		  AND w_id = $5 AND d_w_id = $5 AND d_id = $4 AND h_data = w_name || '    ' || d_name`,
		[]any{paid, cd, cw, d, w}, &n)
	var after int
	q(t, db, `SELECT count(*) FROM history`, &after)
	if n != 1 || after != histories+1 {
		t.Errorf("history: %d matching rows, %d new rows; want 1, 1", n, after-histories)
	}
}

func testPaymentBadCredit(t *testing.T, db *DB, s engine.Session) {
	ctx := context.Background()
	const w, d = 1, 4
	const amount = 100 // 1.00
	var c int
	qargs(t, db, `SELECT min(c_id) FROM customer WHERE c_w_id = $1 AND c_d_id = $2 AND c_credit = 'BC'`, []any{w, d}, &c)
	var good int
	qargs(t, db, `SELECT min(c_id) FROM customer WHERE c_w_id = $1 AND c_d_id = $2 AND c_credit = 'GC'`, []any{w, d}, &good)
	b, bGood := readCustomer(t, db, w, d, c), readCustomer(t, db, w, d, good)
	for _, id := range []int{c, good} {
		if err := s.Payment(ctx, &tpcc.PaymentInput{WID: w, DID: d, CWID: w, CDID: d, CID: id, Amount: amount}); err != nil {
			t.Fatal(err)
		}
	}
	got := readCustomer(t, db, w, d, c)
	// 2.5.2.2: the payment prepended to c_data, 500 characters kept.
	want := fmt.Sprintf("%d %d %d %d %d 1.00|", c, d, w, d, w) + b.data
	if len(want) > 500 {
		want = want[:500]
	}
	if got.data != want {
		t.Errorf("BC c_data = %.60q…, want %.60q…", got.data, want)
	}
	if got.balance != b.balance-amount || got.paymentCnt != b.paymentCnt+1 {
		t.Errorf("BC customer: %+v, before %+v", got, b)
	}
	if gotGood := readCustomer(t, db, w, d, good); gotGood.data != bGood.data || gotGood.balance != bGood.balance-amount {
		t.Errorf("GC customer: c_data changed or balance %d, before %d", gotGood.balance, bGood.balance)
	}
}

// lastOrderStatus returns what the session's last Order-Status found.
func lastOrderStatus(s engine.Session) (customer, order, lines int) {
	switch s := s.(type) {
	case *procSession:
		return int(s.customerID), int(s.orderID), int(s.lines)
	case *sqlSession:
		return int(s.c), int(s.oID), int(s.lines)
	}
	return -1, -1, -1
}

func testOrderStatus(t *testing.T, db *DB, s engine.Session) {
	ctx := context.Background()
	const w, d = 1, 3
	// By id: customer 42 placed an order in testNewOrder, its latest.
	if err := s.OrderStatus(ctx, &tpcc.OrderStatusInput{WID: w, DID: d, CID: 42}); err != nil {
		t.Fatal(err)
	}
	var wantOrder, wantLines int
	qargs(t, db, `SELECT o_id, o_ol_cnt FROM orders WHERE o_w_id = $1 AND o_d_id = $2 AND o_c_id = 42
		ORDER BY o_id DESC LIMIT 1`, []any{w, d}, &wantOrder, &wantLines)
	if c, o, n := lastOrderStatus(s); c != 42 || o != wantOrder || n != wantLines {
		t.Errorf("by id: customer %d, order %d, %d lines; want 42, %d, %d", c, o, n, wantOrder, wantLines)
	}
	// By name: a name shared by 4 customers: ceil(4/2) = the 2nd by c_first.
	var last string
	qargs(t, db, `SELECT c_last FROM customer WHERE c_w_id = $1 AND c_d_id = $2
		GROUP BY c_last HAVING count(*) = 4 ORDER BY c_last LIMIT 1`, []any{w, d}, &last)
	var wantC int
	qargs(t, db, `SELECT c_id FROM customer WHERE c_w_id = $1 AND c_d_id = $2 AND c_last = $3
		ORDER BY c_first, c_id OFFSET 1 LIMIT 1`, []any{w, d, last}, &wantC)
	qargs(t, db, `SELECT o_id, o_ol_cnt FROM orders WHERE o_w_id = $1 AND o_d_id = $2 AND o_c_id = $3
		ORDER BY o_id DESC LIMIT 1`, []any{w, d, wantC}, &wantOrder, &wantLines)
	if err := s.OrderStatus(ctx, &tpcc.OrderStatusInput{WID: w, DID: d, CLast: last, ByName: true}); err != nil {
		t.Fatal(err)
	}
	if c, o, n := lastOrderStatus(s); c != wantC || o != wantOrder || n != wantLines {
		t.Errorf("by name: customer %d, order %d, %d lines; want %d, %d, %d", c, o, n, wantC, wantOrder, wantLines)
	}
}

func testDelivery(t *testing.T, db *DB, s engine.Session) {
	ctx := context.Background()
	const w, carrier = 1, 7
	type delivery struct {
		order, customer int
		cents           int64
		before          customerRow
	}
	var ds [tpcc.DistrictsPerWarehouse + 1]delivery
	for d := 1; d <= tpcc.DistrictsPerWarehouse; d++ {
		x := &ds[d]
		qargs(t, db, `SELECT min(no_o_id) FROM new_order WHERE no_w_id = $1 AND no_d_id = $2`, []any{w, d}, &x.order)
		qargs(t, db, `SELECT o_c_id, (SELECT (sum(ol_amount) * 100)::bigint FROM order_line
			WHERE ol_w_id = o_w_id AND ol_d_id = o_d_id AND ol_o_id = o_id)
			FROM orders WHERE o_w_id = $1 AND o_d_id = $2 AND o_id = $3`, []any{w, d, x.order}, &x.customer, &x.cents)
		x.before = readCustomer(t, db, w, d, x.customer)
	}
	var newOrders int
	qargs(t, db, `SELECT count(*) FROM new_order WHERE no_w_id = $1`, []any{w}, &newOrders)

	skipped, err := s.Delivery(ctx, &tpcc.DeliveryInput{WID: w, CarrierID: carrier})
	if err != nil || skipped != 0 {
		t.Fatalf("Delivery = %d, %v; want 0, nil", skipped, err)
	}

	var after int
	qargs(t, db, `SELECT count(*) FROM new_order WHERE no_w_id = $1`, []any{w}, &after)
	if after != newOrders-tpcc.DistrictsPerWarehouse {
		t.Errorf("new_order rows %d -> %d, want -10", newOrders, after)
	}
	for d := 1; d <= tpcc.DistrictsPerWarehouse; d++ {
		x := &ds[d]
		var left, carrierID, undated int
		qargs(t, db, `SELECT (SELECT count(*) FROM new_order WHERE no_w_id = $1 AND no_d_id = $2 AND no_o_id = $3),
			(SELECT o_carrier_id FROM orders WHERE o_w_id = $1 AND o_d_id = $2 AND o_id = $3),
			(SELECT count(*) FROM order_line WHERE ol_w_id = $1 AND ol_d_id = $2 AND ol_o_id = $3 AND ol_delivery_d IS NULL)`,
			[]any{w, d, x.order}, &left, &carrierID, &undated)
		if left != 0 || carrierID != carrier || undated != 0 {
			t.Errorf("district %d order %d: new_order rows %d, carrier %d, undated lines %d; want 0, %d, 0",
				d, x.order, left, carrierID, undated, carrier)
		}
		got := readCustomer(t, db, w, d, x.customer)
		if got.balance != x.before.balance+x.cents || got.deliveryCnt != x.before.deliveryCnt+1 {
			t.Errorf("district %d customer %d: balance %d, deliveries %d; want %d, %d", d, x.customer,
				got.balance, got.deliveryCnt, x.before.balance+x.cents, x.before.deliveryCnt+1)
		}
	}

}

// testDeliverySkip: a district without undelivered orders is skipped (2.7.4.2).
func testDeliverySkip(t *testing.T, db *DB, mode engine.Mode) {
	ctx := context.Background()
	s := connect(t, db, mode)
	if _, err := db.conn.Exec(ctx, `DELETE FROM new_order WHERE no_w_id = 2 AND no_d_id IN (4, 9)`); err != nil {
		t.Fatal(err)
	}
	skipped, err := s.Delivery(ctx, &tpcc.DeliveryInput{WID: 2, CarrierID: 1})
	if err != nil || skipped != 2 {
		t.Errorf("Delivery with two empty districts = %d, %v; want 2, nil", skipped, err)
	}
}

func testStockLevel(t *testing.T, db *DB, s engine.Session) {
	ctx := context.Background()
	for _, in := range []tpcc.StockLevelInput{{WID: 1, DID: 3, Threshold: 20}, {WID: 2, DID: 7, Threshold: 15}, {WID: 1, DID: 1, Threshold: 10}} {
		got, err := s.StockLevel(ctx, &in)
		if err != nil {
			t.Fatal(err)
		}
		var want int
		qargs(t, db, `SELECT count(*) FROM (SELECT DISTINCT ol_i_id FROM order_line, district
			WHERE d_w_id = $1 AND d_id = $2 AND ol_w_id = $1 AND ol_d_id = $2
			  AND ol_o_id BETWEEN d_next_o_id - 20 AND d_next_o_id - 1
			  AND (SELECT s_quantity FROM stock WHERE s_w_id = $1 AND s_i_id = ol_i_id) < $3) x`,
			[]any{in.WID, in.DID, in.Threshold}, &want)
		if got != want || got < 0 || got > 20*tpcc.MaxOrderLines {
			t.Errorf("StockLevel(%+v) = %d, want %d", in, got, want)
		}
	}
}

// testErrors: a failed transaction returns its error, leaves nothing behind, and the
// session stays usable.
func testErrors(t *testing.T, db *DB, s engine.Session) {
	ctx := context.Background()
	before := digests(t, db)
	// A customer that does not exist, after the warehouse and district were updated: a
	// data error, not a lost connection (the procedures raise P0002, the sql mode finds
	// no row itself).
	err := s.Payment(ctx, &tpcc.PaymentInput{WID: 1, DID: 1, CWID: 1, CDID: 1, CID: 999999, Amount: 100})
	if err == nil {
		t.Error("Payment of a missing customer succeeded")
	} else if f := db.Classify(err); f.Retry || f.Lost || (f.Kind != "P0002" && f.Kind != "client") {
		t.Errorf("Classify(%v) = %+v, want kind P0002 or client, not lost", err, f)
	}
	_, err = s.NewOrder(ctx, &tpcc.NewOrderInput{WID: 1, DID: 2, CID: 999999, AllLocal: true, Lines: []tpcc.OrderLine{
		{ItemID: 1, SupplyWID: 1, Quantity: 5}, {ItemID: 2, SupplyWID: 1, Quantity: 5}}})
	if err == nil {
		t.Error("New-Order of a missing customer succeeded")
	} else if f := db.Classify(err); f.Retry || f.Lost || (f.Kind != "P0002" && f.Kind != "client") {
		t.Errorf("Classify(%v) = %+v, want kind P0002 or client, not lost", err, f)
	}
	// A server error in the middle of the work: a quantity beyond smallint.
	_, err = s.NewOrder(ctx, &tpcc.NewOrderInput{WID: 1, DID: 1, CID: 1, AllLocal: true, Lines: []tpcc.OrderLine{
		{ItemID: 1, SupplyWID: 1, Quantity: 5}, {ItemID: 2, SupplyWID: 1, Quantity: 40000}}})
	if err == nil {
		t.Error("New-Order with quantity 40000 succeeded")
	} else if f := db.Classify(err); f.Retry || f.Lost || f.Kind != "22003" {
		t.Errorf("Classify(%v) = %+v, want kind 22003", err, f)
	}
	after := digests(t, db)
	for table, sum := range before {
		if after[table] != sum {
			t.Errorf("failed transactions changed %s", table)
		}
	}
	if err := s.Payment(ctx, &tpcc.PaymentInput{WID: 1, DID: 1, CWID: 1, CDID: 1, CID: 1, Amount: 100}); err != nil {
		t.Errorf("Payment after errors: %v", err)
	}
}

// terminateNewest ends the newest client backend of db's database other than db's own
// connection: the session a test just opened.
func terminateNewest(t *testing.T, db *DB) {
	t.Helper()
	var ok bool
	q(t, db, `SELECT pg_terminate_backend(pid, 5000) FROM pg_stat_activity
		WHERE datname = current_database() AND backend_type = 'client backend' AND pid <> pg_backend_pid()
		ORDER BY backend_start DESC LIMIT 1`, &ok)
	if !ok {
		t.Fatal("pg_terminate_backend failed")
	}
}

// testSQLConnection: the sql mode's connection ends (errConnLost) when, and only when,
// pgx closed it.
func testSQLConnection(t *testing.T, ts *testServer) {
	db := ts.clone(t)
	ctx := context.Background()
	payment := &tpcc.PaymentInput{WID: 1, DID: 1, CWID: 1, CDID: 1, CID: 1, Amount: 100}
	t.Run("RawIO", func(t *testing.T) {
		isRaw := func(nc net.Conn) bool { _, ok := nc.(*rawconn.Conn); return ok }
		if nc := connect(t, db, engine.SQL).(*sqlSession).conn.nc; !isRaw(nc) {
			t.Errorf("the sql mode's connection reads and writes through a %T, not raw I/O", nc)
		}
	})
	t.Run("Canceled", func(t *testing.T) {
		s := connect(t, db, engine.SQL)
		canceled, cancel := context.WithCancel(ctx)
		cancel()
		err := s.Payment(canceled, payment)
		if f := db.Classify(err); !errors.Is(err, context.Canceled) || f != (engine.Failure{Kind: "canceled"}) {
			t.Errorf("Payment with a canceled context = %v (%+v); want canceled, not lost", err, f)
		}
		if err := s.Payment(ctx, payment); err != nil {
			t.Errorf("Payment after a canceled call: %v", err)
		}
	})
	t.Run("CanceledDuringCall", func(t *testing.T) {
		_, err := paymentCanceledWhileBlocked(t, db, connect(t, db, engine.SQL), payment)
		// pgx closes a connection whose statement the context interrupted.
		if f := db.Classify(err); !errors.Is(err, context.Canceled) || f != (engine.Failure{Kind: "canceled", Lost: true}) {
			t.Errorf("Payment canceled during the call = %v (%+v); want canceled, lost", err, f)
		}
	})
	t.Run("Terminated", func(t *testing.T) {
		s := connect(t, db, engine.SQL)
		terminateNewest(t, db)
		for range 2 {
			if err := s.Payment(ctx, payment); err == nil || !db.Classify(err).Lost {
				t.Errorf("Payment on a terminated backend = %v (%+v); want a lost connection", err, db.Classify(err))
			}
		}
	})
}

// paymentCanceledWhileBlocked runs a Payment that waits for the warehouse row another
// transaction holds and cancels it after 200 ms; it returns the call's time and error.
func paymentCanceledWhileBlocked(t *testing.T, db *DB, s engine.Session, payment *tpcc.PaymentInput) (time.Duration, error) {
	t.Helper()
	ctx := context.Background()
	tx, err := db.conn.Begin(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer tx.Rollback(ctx)
	if _, err := tx.Exec(ctx, "SELECT FROM warehouse WHERE w_id = 1 FOR UPDATE"); err != nil {
		t.Fatal(err)
	}
	callCtx, cancel := context.WithCancel(ctx)
	timer := time.AfterFunc(200*time.Millisecond, cancel)
	defer timer.Stop()
	start := time.Now()
	err = s.Payment(callCtx, payment)
	return time.Since(start), err
}

// testChecks runs the consistency conditions of 3.3.2 (all but 3.3.2.11, which holds
// only before the first Delivery).
func testChecks(t *testing.T, db *DB) {
	ctx := context.Background()
	for _, c := range tpcc.Checks(false) {
		n, keys, err := db.Check(ctx, c.Query)
		if err != nil {
			t.Errorf("%s: %v", c.ID, err)
		} else if n != 0 {
			t.Errorf("%s %s: %d violations: %s", c.ID, c.Name, n, strings.Join(keys, "; "))
		}
	}
}

// workload is a fixed sequence of transaction inputs.
type workload []func(ctx context.Context, s engine.Session) (string, error)

// fixedWorkload draws n transactions from the deck with the spec's input rules, plus
// forced rollbacks and an order naming one item twice.
func fixedWorkload(n int) workload {
	r := tpcc.NewRand(7, 1)
	in := tpcc.NewInputs(r, tpcc.RunConstants(tpcc.NewRand(7, 2), tpcc.LoadConstants(testSeed).CLast), testWarehouses)
	deck := tpcc.NewDeck(tpcc.NewRand(7, 3))
	var out workload
	newOrders := 0
	for i := range n {
		w := 1 + i%testWarehouses
		switch deck.Next() {
		case tpcc.NewOrder:
			var no tpcc.NewOrderInput
			in.NewOrder(w, &no)
			newOrders++
			if newOrders%25 == 0 { // more rollbacks than 1% (2.4.1.4) to exercise them
				no.Rollback = true
				no.Lines[len(no.Lines)-1].ItemID = tpcc.UnusedItemID
			}
			if newOrders == 3 {
				no.Lines[1].ItemID, no.Lines[1].SupplyWID = no.Lines[0].ItemID, no.Lines[0].SupplyWID
			}
			out = append(out, func(ctx context.Context, s engine.Session) (string, error) {
				rb, err := s.NewOrder(ctx, &no)
				if rb {
					return "new-order rolled back", err
				}
				return fmt.Sprintf("new-order total %d", newOrderTotal(s)), err
			})
		case tpcc.Payment:
			var p tpcc.PaymentInput
			in.Payment(w, &p)
			out = append(out, func(ctx context.Context, s engine.Session) (string, error) {
				return "payment", s.Payment(ctx, &p)
			})
		case tpcc.OrderStatus:
			var o tpcc.OrderStatusInput
			in.OrderStatus(w, &o)
			out = append(out, func(ctx context.Context, s engine.Session) (string, error) {
				err := s.OrderStatus(ctx, &o)
				c, order, lines := lastOrderStatus(s)
				return fmt.Sprintf("order-status %d %d %d", c, order, lines), err
			})
		case tpcc.Delivery:
			var d tpcc.DeliveryInput
			in.Delivery(w, &d)
			out = append(out, func(ctx context.Context, s engine.Session) (string, error) {
				skipped, err := s.Delivery(ctx, &d)
				return fmt.Sprintf("delivery skipped %d", skipped), err
			})
		case tpcc.StockLevel:
			var sl tpcc.StockLevelInput
			in.StockLevel(w, 1+i%tpcc.DistrictsPerWarehouse, &sl)
			out = append(out, func(ctx context.Context, s engine.Session) (string, error) {
				n, err := s.StockLevel(ctx, &sl)
				return fmt.Sprintf("stock-level %d", n), err
			})
		}
	}
	return out
}

// testEquivalence runs the same inputs in both modes on two copies of one database:
// every result and every table must come out the same.
func testEquivalence(t *testing.T, ts *testServer) {
	ctx := context.Background()
	work := fixedWorkload(600)
	var results [2][]string
	var sums [2]map[string]string
	for m, mode := range modes {
		db := ts.clone(t)
		s := connect(t, db, mode)
		start := time.Now()
		for i, tx := range work {
			res, err := tx(ctx, s)
			if err != nil {
				t.Fatalf("%s: transaction %d (%s): %v", mode, i, res, err)
			}
			results[m] = append(results[m], res)
		}
		t.Logf("%s: %d transactions in %v", mode, len(work), time.Since(start).Round(time.Millisecond))
		sums[m] = digests(t, db)
		testChecks(t, db)
	}
	for i := range results[0] {
		if results[0][i] != results[1][i] {
			t.Errorf("transaction %d: %s: %q, %s: %q", i, modes[0], results[0][i], modes[1], results[1][i])
		}
	}
	rollbacks := 0
	for _, r := range results[0] {
		if r == "new-order rolled back" {
			rollbacks++
		}
	}
	if rollbacks == 0 {
		t.Error("the workload had no rolled-back New-Order")
	}
	for _, d := range digestQueries {
		if sums[0][d.table] != sums[1][d.table] {
			t.Errorf("%s differs: %s %s, %s %s", d.table, modes[0], sums[0][d.table], modes[1], sums[1][d.table])
		}
	}
}

// mixUser runs the transaction mix on one session and warehouse, as a virtual user
// without keying and think times.
type mixUser struct {
	s       engine.Session
	in      *tpcc.Inputs
	deck    *tpcc.Deck
	w, dist int // warehouse, Stock-Level district
	no      tpcc.NewOrderInput
	p       tpcc.PaymentInput
	o       tpcc.OrderStatusInput
	d       tpcc.DeliveryInput
	sl      tpcc.StockLevelInput
}

func newMixUser(s engine.Session, seed uint64, w, dist int) *mixUser {
	r := tpcc.NewRand(seed, 9)
	return &mixUser{s: s, in: tpcc.NewInputs(r, tpcc.RunConstants(r, tpcc.LoadConstants(testSeed).CLast), testWarehouses),
		deck: tpcc.NewDeck(r), w: w, dist: dist}
}

// next runs the next transaction of the deck.
func (u *mixUser) next(ctx context.Context) error {
	var err error
	switch u.deck.Next() {
	case tpcc.NewOrder:
		u.in.NewOrder(u.w, &u.no)
		_, err = u.s.NewOrder(ctx, &u.no)
	case tpcc.Payment:
		u.in.Payment(u.w, &u.p)
		err = u.s.Payment(ctx, &u.p)
	case tpcc.OrderStatus:
		u.in.OrderStatus(u.w, &u.o)
		err = u.s.OrderStatus(ctx, &u.o)
	case tpcc.Delivery:
		u.in.Delivery(u.w, &u.d)
		_, err = u.s.Delivery(ctx, &u.d)
	case tpcc.StockLevel:
		u.in.StockLevel(u.w, u.dist, &u.sl)
		_, err = u.s.StockLevel(ctx, &u.sl)
	}
	return err
}

// testConcurrent runs several sessions at once on one warehouse: no deadlock, no error,
// and the consistency conditions hold afterwards.
func testConcurrent(t *testing.T, ts *testServer, mode engine.Mode) {
	ctx := context.Background()
	db := ts.clone(t)
	const users, each = 8, 150
	mus := make([]*mixUser, users)
	for u := range users {
		mus[u] = newMixUser(connect(t, db, mode), uint64(u), 1, 1+u%tpcc.DistrictsPerWarehouse)
	}
	for _, err := range concurrently(users, each, func(u int) error { return mus[u].next(ctx) }) {
		t.Errorf("%v (%+v)", err, db.Classify(err))
	}
	testChecks(t, db)
	testConcurrentDeliveries(t, db, mode)
}

// concurrently runs step(u) each times for every user u, users in parallel, and
// returns the errors (a user stops at its first).
func concurrently(users, each int, step func(u int) error) []error {
	errs := make(chan error, users)
	for u := range users {
		go func() {
			for range each {
				if err := step(u); err != nil {
					errs <- err
					return
				}
			}
			errs <- nil
		}()
	}
	var out []error
	for range users {
		if err := <-errs; err != nil {
			out = append(out, err)
		}
	}
	return out
}

// testConcurrentDeliveries: Deliveries of one warehouse running at the same time never
// skip a district that still has undelivered orders.
func testConcurrentDeliveries(t *testing.T, db *DB, mode engine.Mode) {
	ctx := context.Background()
	const users, each = 4, 20
	var skipped atomic.Int64
	sessions := make([]engine.Session, users)
	for u := range users {
		sessions[u] = connect(t, db, mode)
	}
	for _, err := range concurrently(users, each, func(u int) error {
		n, err := sessions[u].Delivery(ctx, &tpcc.DeliveryInput{WID: 1, CarrierID: 1 + u})
		skipped.Add(int64(n))
		return err
	}) {
		t.Fatalf("concurrent Delivery: %v", err)
	}
	if n := skipped.Load(); n != 0 {
		t.Errorf("%d districts skipped by concurrent Deliveries of one warehouse (each district still has undelivered orders)", n)
	}
	testChecks(t, db)
}

// BenchmarkSessions measures each transaction type in each mode on one session. Besides
// ns/op (wall time, server included) it reports the client's own CPU per transaction
// (cpu-µs/op: this process's user + system time; the server is another process).
//
//	go test ./internal/engine/postgres/ -run '^$' -bench . -benchmem
func BenchmarkSessions(b *testing.B) {
	ts := startTemplate(b)
	for _, mode := range modes {
		db := ts.clone(b)
		s := connect(b, db, mode)
		r := tpcc.NewRand(1, 1)
		in := tpcc.NewInputs(r, tpcc.RunConstants(r, tpcc.LoadConstants(testSeed).CLast), testWarehouses)
		var no tpcc.NewOrderInput
		var p tpcc.PaymentInput
		var o tpcc.OrderStatusInput
		var d tpcc.DeliveryInput
		var sl tpcc.StockLevelInput
		txs := []struct {
			name string
			run  func(ctx context.Context) error
		}{
			{"NewOrder", func(ctx context.Context) error { in.NewOrder(1, &no); _, err := s.NewOrder(ctx, &no); return err }},
			{"Payment", func(ctx context.Context) error { in.Payment(1, &p); return s.Payment(ctx, &p) }},
			{"OrderStatus", func(ctx context.Context) error { in.OrderStatus(1, &o); return s.OrderStatus(ctx, &o) }},
			{"Delivery", func(ctx context.Context) error { in.Delivery(1, &d); _, err := s.Delivery(ctx, &d); return err }},
			{"StockLevel", func(ctx context.Context) error {
				in.StockLevel(1, 3, &sl)
				_, err := s.StockLevel(ctx, &sl)
				return err
			}},
		}
		for _, tx := range txs {
			b.Run(string(mode)+"/"+tx.name, func(b *testing.B) {
				ctx := context.Background()
				for range 20 { // prepare statements, settle plans
					if err := tx.run(ctx); err != nil {
						b.Fatal(err)
					}
				}
				b.ReportAllocs()
				cpu := processCPU()
				b.ResetTimer()
				for range b.N {
					if err := tx.run(ctx); err != nil {
						b.Fatal(err)
					}
				}
				b.StopTimer()
				b.ReportMetric(float64((processCPU()-cpu).Microseconds())/float64(b.N), "cpu-µs/op")
			})
		}
	}
}

// BenchmarkSessionsConcurrent runs the transaction mix on 4 sessions at once, as a
// 4-user run does, but without the driver: cpu-µs/op is the sessions' own client CPU
// per transaction, the part of a run's "client CPU" that the engine accounts for.
func BenchmarkSessionsConcurrent(b *testing.B) {
	ts := startTemplate(b)
	ctx := context.Background()
	const users = 4
	for _, mode := range modes {
		db := ts.clone(b)
		mus := make([]*mixUser, users)
		for i := range mus {
			mus[i] = newMixUser(connect(b, db, mode), uint64(i), 1+i%testWarehouses, 1+i)
		}
		b.Run(string(mode), func(b *testing.B) {
			var left atomic.Int64
			left.Store(int64(b.N))
			errs := make(chan error, users)
			cpu := processCPU()
			b.ResetTimer()
			for _, mu := range mus {
				go func() {
					for left.Add(-1) >= 0 {
						if err := mu.next(ctx); err != nil {
							errs <- err
							return
						}
					}
					errs <- nil
				}()
			}
			for range users {
				if err := <-errs; err != nil {
					b.Error(err)
				}
			}
			b.StopTimer()
			b.ReportMetric(float64((processCPU()-cpu).Microseconds())/float64(b.N), "cpu-µs/op")
		})
	}
}

func processCPU() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// testStockLockOrder: New-Orders of different districts naming the same items in
// different orders. Without the canonical stock order they deadlock within a few tries.
func testStockLockOrder(t *testing.T, ts *testServer, mode engine.Mode) {
	ctx := context.Background()
	db := ts.clone(t)
	const users, each = 6, 40
	errs := make(chan error, users)
	for u := range users {
		s := connect(t, db, mode)
		go func() {
			r := tpcc.NewRand(uint64(u), 11)
			no := tpcc.NewOrderInput{WID: 1, DID: 1 + u, CID: 1, AllLocal: true}
			for range each {
				no.Lines = no.Lines[:0]
				for _, i := range r.Perm(12) {
					no.Lines = append(no.Lines, tpcc.OrderLine{ItemID: i, SupplyWID: 1, Quantity: 1})
				}
				if _, err := s.NewOrder(ctx, &no); err != nil {
					errs <- err
					return
				}
			}
			errs <- nil
		}()
	}
	for range users {
		if err := <-errs; err != nil {
			t.Errorf("%v (%+v)", err, db.Classify(err))
		}
	}
	var cnt int
	q(t, db, `SELECT s_order_cnt FROM stock WHERE s_w_id = 1 AND s_i_id = 7`, &cnt)
	if cnt != users*each {
		t.Errorf("s_order_cnt of item 7 = %d, want %d", cnt, users*each)
	}
}
