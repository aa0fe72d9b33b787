package sqldb

import (
	"context"
	"database/sql"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	_ "modernc.org/sqlite"

	"github.com/storbench/storbench/internal/engine"
	"github.com/storbench/storbench/internal/tpcc"
)

// The sql mode against SQLite's statements (../sqlite/sql) on a tiny hand-made
// database: one warehouse, two districts, a few customers, items, stock and orders.

// sqliteScaled mirrors package sqlite's scaled map (that package imports this one).
var sqliteScaled = map[string]int64{"w_tax": 10000, "w_ytd": 100, "d_tax": 10000, "d_ytd": 100,
	"c_credit_lim": 100, "c_discount": 10000, "c_balance": 100, "c_ytd_payment": 100,
	"h_amount": 100, "ol_amount": 100, "i_price": 100}

var testDialect = &Dialect{Engine: "sqlite", Driver: "sqlite", SQL: os.DirFS("../sqlite/sql"),
	Scaled: sqliteScaled, BeginWrite: "BEGIN IMMEDIATE", BeginRead: "BEGIN"}

const stamp = "2025-01-02 03:04:05"

// Money in cents, rates in 1/10000: the scaled columns.
var testData = []string{
	`INSERT INTO warehouse VALUES (1, 'WHOUSE', 's1', 's2', 'city', 'ST', '123411111', 1000, 30000000)`,
	`INSERT INTO district VALUES (1, 1, 'DIST1', 's1', 's2', 'city', 'ST', '123411111', 500, 3000000, 4)`,
	`INSERT INTO district VALUES (2, 1, 'DIST2', 's1', 's2', 'city', 'ST', '123411111', 2000, 3000000, 1)`,
	// District 1: three BARBARs (by c_first: 3 AAA, 4 BBB, 1 CCC), two ABLEABLEs
	// (6 AMY, 5 ZED); customer 2 has bad credit and a 499-character c_data.
	customer(1, "CCC", "BARBAR", "GC", "data1"),
	customer(2, "BOB", "OUGHTOUGHT", "BC", strings.Repeat("x", 499)),
	customer(3, "AAA", "BARBAR", "GC", "data3"),
	customer(4, "BBB", "BARBAR", "GC", "data4"),
	customer(5, "ZED", "ABLEABLE", "GC", "data5"),
	customer(6, "AMY", "ABLEABLE", "GC", "data6"),
	// Items 1..5 at 1.23, 2.23, …; stock quantities 50, 12, 10, 100, 15; item 1 also in
	// warehouse 2, for a remote line.
	`INSERT INTO item VALUES (1, 1, 'item1', 123, 'data'), (2, 2, 'item2', 223, 'data'),
		(3, 3, 'item3', 323, 'data'), (4, 4, 'item4', 423, 'data'), (5, 5, 'item5', 523, 'ORIGINAL')`,
	stock(1, 1, 50), stock(2, 1, 12), stock(3, 1, 10), stock(4, 1, 100), stock(5, 1, 15), stock(1, 2, 70),
	// District 1: order 1 delivered (customer 1), orders 2 (customer 2) and 3
	// (customer 1) new. District 2 has none.
	`INSERT INTO orders VALUES (1, 1, 1, 1, '` + stamp + `', 3, 2, 1), (2, 1, 1, 2, '` + stamp + `', NULL, 2, 1),
		(3, 1, 1, 1, '` + stamp + `', NULL, 1, 1)`,
	`INSERT INTO new_order VALUES (2, 1, 1), (3, 1, 1)`,
	`INSERT INTO order_line VALUES
		(1, 1, 1, 1, 4, 1, '` + stamp + `', 5, 0, 'dist'), (1, 1, 1, 2, 5, 1, '` + stamp + `', 5, 0, 'dist'),
		(2, 1, 1, 1, 2, 1, NULL, 5, 150, 'dist'), (2, 1, 1, 2, 3, 1, NULL, 5, 250, 'dist'),
		(3, 1, 1, 1, 1, 1, NULL, 5, 1000, 'dist')`,
}

func customer(id int, first, last, credit, data string) string {
	return fmt.Sprintf(`INSERT INTO customer VALUES (%d, 1, 1, '%s', 'OE', '%s', 's1', 's2', 'city', 'ST',
		'123411111', '0123456789012345', '%s', '%s', 5000000, 1000, -1000, 1000, 1, 0, '%s')`,
		id, first, last, stamp, credit, data)
}

func stock(item, w, qty int) string {
	return fmt.Sprintf(`INSERT INTO stock VALUES (%d, %d, %d, 'd01_%d', 'd02_%d', 'd03', 'd04', 'd05', 'd06',
		'd07', 'd08', 'd09', 'd10', 0, 0, 0, 'data')`, item, w, qty, item, item)
}

// script runs a file of statements separated by ";" at the end of a line.
func script(t testing.TB, db *sql.DB, name string) {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("../sqlite/sql", name))
	if err != nil {
		t.Fatal(err)
	}
	spec, err := engine.ParseSchema(engine.SpecSchema)
	if err != nil {
		t.Fatal(err)
	}
	for _, stmt := range strings.Split(spec.Expand(string(b)), ";\n") {
		if strings.TrimSpace(stmt) == "" {
			continue
		}
		if _, err := db.Exec(stmt); err != nil {
			t.Fatalf("%s: %v\n%s", name, err, stmt)
		}
	}
}

// newTestSession builds the tiny database in a temporary file and opens a session.
func newTestSession(t testing.TB) (*session, *sql.DB) {
	t.Helper()
	dsn := "file:" + filepath.Join(t.TempDir(), "tpcc.db") +
		"?_pragma=busy_timeout(5000)&_pragma=journal_mode(WAL)&_pragma=synchronous(FULL)"
	db, err := sql.Open("sqlite", dsn)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	script(t, db, "schema.sql")
	for _, q := range testData {
		if _, err := db.Exec(q); err != nil {
			t.Fatalf("%v\n%s", err, q)
		}
	}
	script(t, db, "indexes.sql")
	ctx := context.Background()
	conn, err := db.Conn(ctx)
	if err != nil {
		t.Fatal(err)
	}
	s, err := newSession(ctx, conn, testDialect)
	if err != nil {
		conn.Close()
		t.Fatal(err)
	}
	t.Cleanup(s.Close)
	return s, db
}

// query returns one row's columns as text ("NULL" for NULL).
func query(t *testing.T, db *sql.DB, q string, args ...any) []string {
	t.Helper()
	rows, err := db.Query(q, args...)
	if err != nil {
		t.Fatalf("%s: %v", q, err)
	}
	defer rows.Close()
	cols, _ := rows.Columns()
	if !rows.Next() {
		t.Fatalf("%s: no row (%v)", q, rows.Err())
	}
	vals := make([]sql.NullString, len(cols))
	dst := make([]any, len(cols))
	for i := range vals {
		dst[i] = &vals[i]
	}
	if err := rows.Scan(dst...); err != nil {
		t.Fatal(err)
	}
	out := make([]string, len(cols))
	for i, v := range vals {
		out[i] = "NULL"
		if v.Valid {
			out[i] = v.String
		}
	}
	return out
}

func expect(t *testing.T, db *sql.DB, q, want string, args ...any) {
	t.Helper()
	if got := strings.Join(query(t, db, q, args...), " "); got != want {
		t.Errorf("%s:\n got %q\nwant %q", q, got, want)
	}
}

func TestNewOrder(t *testing.T) {
	s, db := newTestSession(t)
	ctx := t.Context()
	in := &tpcc.NewOrderInput{WID: 1, DID: 1, CID: 1, Lines: []tpcc.OrderLine{
		{ItemID: 2, SupplyWID: 1, Quantity: 5}, // 12 < 5+10: 12-5+91 = 98
		{ItemID: 1, SupplyWID: 2, Quantity: 3}, // remote: 70-3 = 67
		{ItemID: 2, SupplyWID: 1, Quantity: 4}, // the same stock again: 98-4 = 94
		{ItemID: 5, SupplyWID: 1, Quantity: 5}, // 15 >= 5+10: 10
	}}
	rolledBack, err := s.NewOrder(ctx, in)
	if err != nil || rolledBack {
		t.Fatalf("NewOrder = %v, %v", rolledBack, err)
	}
	expect(t, db, `SELECT d_next_o_id FROM district WHERE d_w_id = 1 AND d_id = 1`, "5")
	expect(t, db, `SELECT o_c_id, o_carrier_id, o_ol_cnt, o_all_local, length(o_entry_d) FROM orders WHERE o_w_id = 1 AND o_d_id = 1 AND o_id = 4`,
		"1 NULL 4 0 19")
	expect(t, db, `SELECT count(*) FROM new_order WHERE no_w_id = 1 AND no_d_id = 1 AND no_o_id = 4`, "1")
	expect(t, db, `SELECT group_concat(ol_number || ':' || ol_i_id || ':' || ol_supply_w_id || ':' || ol_quantity || ':' ||
			ol_amount || ':' || ol_dist_info || ':' || coalesce(ol_delivery_d, 'NULL'), ' ')
		FROM (SELECT * FROM order_line WHERE ol_w_id = 1 AND ol_d_id = 1 AND ol_o_id = 4 ORDER BY ol_number)`,
		"1:2:1:5:1115:d01_2:NULL 2:1:2:3:369:d01_1:NULL 3:2:1:4:892:d01_2:NULL 4:5:1:5:2615:d01_5:NULL")
	expect(t, db, `SELECT s_quantity, s_ytd, s_order_cnt, s_remote_cnt FROM stock WHERE s_w_id = 1 AND s_i_id = 2`, "94 9 2 0")
	expect(t, db, `SELECT s_quantity, s_ytd, s_order_cnt, s_remote_cnt FROM stock WHERE s_w_id = 2 AND s_i_id = 1`, "67 3 1 1")
	expect(t, db, `SELECT s_quantity, s_ytd, s_order_cnt, s_remote_cnt FROM stock WHERE s_w_id = 1 AND s_i_id = 5`, "10 5 1 0")
	expect(t, db, `SELECT s_quantity FROM stock WHERE s_w_id = 1 AND s_i_id = 1`, "50")
	// sum 4991 cents × (1 - 0.10) × (1 + 0.10 + 0.05) = 5165.685 → 5166
	if s.total != 5166 {
		t.Errorf("total = %d cents, want 5166", s.total)
	}

	// A second order in the same district takes the next id, all local.
	in.Lines = in.Lines[:1]
	in.Lines[0].Quantity = 1
	if _, err := s.NewOrder(ctx, in); err != nil {
		t.Fatal(err)
	}
	expect(t, db, `SELECT d_next_o_id, (SELECT o_all_local FROM orders WHERE o_w_id = 1 AND o_d_id = 1 AND o_id = 5) FROM district WHERE d_w_id = 1 AND d_id = 1`, "6 1")
}

func TestNewOrderRollback(t *testing.T) {
	s, db := newTestSession(t)
	in := &tpcc.NewOrderInput{WID: 1, DID: 1, CID: 1, Rollback: true, Lines: []tpcc.OrderLine{
		{ItemID: 1, SupplyWID: 1, Quantity: 5},
		{ItemID: tpcc.UnusedItemID, SupplyWID: 1, Quantity: 5},
	}}
	rolledBack, err := s.NewOrder(context.Background(), in)
	if err != nil || !rolledBack {
		t.Fatalf("NewOrder = %v, %v; want rolled back", rolledBack, err)
	}
	expect(t, db, `SELECT d_next_o_id FROM district WHERE d_w_id = 1 AND d_id = 1`, "4")
	expect(t, db, `SELECT count(*), (SELECT count(*) FROM new_order), (SELECT count(*) FROM order_line) FROM orders`, "3 2 5")
	expect(t, db, `SELECT s_quantity, s_order_cnt FROM stock WHERE s_w_id = 1 AND s_i_id = 1`, "50 0")
	// The session is usable: no transaction was left open.
	in.Lines = in.Lines[:1]
	if rolledBack, err := s.NewOrder(context.Background(), in); err != nil || rolledBack {
		t.Fatalf("NewOrder after a rollback = %v, %v", rolledBack, err)
	}
	expect(t, db, `SELECT d_next_o_id FROM district WHERE d_w_id = 1 AND d_id = 1`, "5")
}

func TestPayment(t *testing.T) {
	s, db := newTestSession(t)
	ctx := t.Context()
	// By name, paid at district 2 for a customer of district 1: BARBAR has 3
	// customers; the 2nd by c_first (AAA, BBB, CCC) is customer 4.
	in := &tpcc.PaymentInput{WID: 1, DID: 2, CWID: 1, CDID: 1, CLast: "BARBAR", ByName: true, Amount: 12345}
	if err := s.Payment(ctx, in); err != nil {
		t.Fatal(err)
	}
	expect(t, db, `SELECT c_balance, c_ytd_payment, c_payment_cnt, c_data FROM customer WHERE c_w_id = 1 AND c_d_id = 1 AND c_id = 4`,
		"-13345 13345 2 data4")
	expect(t, db, `SELECT sum(c_payment_cnt) FROM customer`, "7")
	expect(t, db, `SELECT w_ytd FROM warehouse WHERE w_id = 1`, "30012345")
	expect(t, db, `SELECT d_ytd FROM district WHERE d_w_id = 1 AND d_id = 2`, "3012345")
	expect(t, db, `SELECT d_ytd FROM district WHERE d_w_id = 1 AND d_id = 1`, "3000000")
	expect(t, db, `SELECT h_c_id, h_c_d_id, h_c_w_id, h_d_id, h_w_id, h_amount, h_data, length(h_date) FROM history`,
		"4 1 1 2 1 12345 WHOUSE    DIST2 19")
	if s.balance != -13345 {
		t.Errorf("balance = %d, want -13345", s.balance)
	}

	// Two ABLEABLEs (AMY 6, ZED 5): ceil(2/2) = the 1st, customer 6.
	in = &tpcc.PaymentInput{WID: 1, DID: 1, CWID: 1, CDID: 1, CLast: "ABLEABLE", ByName: true, Amount: 100}
	if err := s.Payment(ctx, in); err != nil {
		t.Fatal(err)
	}
	expect(t, db, `SELECT c_id FROM customer WHERE c_payment_cnt = 2 AND c_last = 'ABLEABLE'`, "6")

	// By id, bad credit: c_data gets the payment prepended, 500 characters kept.
	in = &tpcc.PaymentInput{WID: 1, DID: 2, CWID: 1, CDID: 1, CID: 2, Amount: 500000}
	if err := s.Payment(ctx, in); err != nil {
		t.Fatal(err)
	}
	prefix := "2 1 1 2 1 5000.00|"
	expect(t, db, `SELECT c_balance, c_ytd_payment, length(c_data), c_data FROM customer WHERE c_w_id = 1 AND c_d_id = 1 AND c_id = 2`,
		"-501000 501000 500 "+prefix+strings.Repeat("x", 500-len(prefix)))
	expect(t, db, `SELECT w_ytd, (SELECT sum(h_amount) FROM history) FROM warehouse`, "30512445 512445")

	// An unknown name fails, rolls back and leaves the session usable.
	in = &tpcc.PaymentInput{WID: 1, DID: 1, CWID: 1, CDID: 1, CLast: "NOBODY", ByName: true, Amount: 100}
	if err := s.Payment(ctx, in); err == nil || !strings.Contains(err.Error(), "no customer named NOBODY") {
		t.Fatalf("Payment to nobody: %v", err)
	}
	expect(t, db, `SELECT w_ytd, (SELECT count(*) FROM history) FROM warehouse`, "30512445 3")
	in = &tpcc.PaymentInput{WID: 1, DID: 1, CWID: 1, CDID: 1, CID: 1, Amount: 100}
	if err := s.Payment(ctx, in); err != nil {
		t.Fatal(err)
	}
	expect(t, db, `SELECT w_ytd, (SELECT count(*) FROM history) FROM warehouse`, "30512545 4")
}

func TestOrderStatus(t *testing.T) {
	s, _ := newTestSession(t)
	ctx := t.Context()
	for _, tc := range []struct {
		in           tpcc.OrderStatusInput
		c, o         int64
		lines        int
		errSubstring string
	}{
		{in: tpcc.OrderStatusInput{WID: 1, DID: 1, CID: 1}, c: 1, o: 3, lines: 1}, // latest of orders 1 and 3
		{in: tpcc.OrderStatusInput{WID: 1, DID: 1, CID: 2}, c: 2, o: 2, lines: 2},
		{in: tpcc.OrderStatusInput{WID: 1, DID: 1, CLast: "BARBAR", ByName: true}, c: 4, o: 0, lines: 0}, // no order
		{in: tpcc.OrderStatusInput{WID: 1, DID: 1, CLast: "OUGHTOUGHT", ByName: true}, c: 2, o: 2, lines: 2},
		{in: tpcc.OrderStatusInput{WID: 1, DID: 2, CID: 1}, errSubstring: "customer (1, 2, 1)"},
	} {
		err := s.OrderStatus(ctx, &tc.in)
		if tc.errSubstring != "" {
			if err == nil || !strings.Contains(err.Error(), tc.errSubstring) {
				t.Errorf("OrderStatus(%+v) = %v, want an error about %s", tc.in, err, tc.errSubstring)
			}
			continue
		}
		if err != nil {
			t.Fatalf("OrderStatus(%+v): %v", tc.in, err)
		}
		if s.cID != tc.c || s.oID != tc.o || s.lines != tc.lines {
			t.Errorf("OrderStatus(%+v): customer %d, order %d, %d lines; want %d, %d, %d", tc.in, s.cID, s.oID, s.lines, tc.c, tc.o, tc.lines)
		}
	}
	// After the failed one, the session still works.
	if err := s.OrderStatus(ctx, &tpcc.OrderStatusInput{WID: 1, DID: 1, CID: 1}); err != nil {
		t.Fatal(err)
	}
}

func TestDelivery(t *testing.T) {
	s, db := newTestSession(t)
	ctx := t.Context()
	// District 1 delivers order 2 (customer 2, 150 + 250 cents); 2..10 have none.
	skipped, err := s.Delivery(ctx, &tpcc.DeliveryInput{WID: 1, CarrierID: 7})
	if err != nil || skipped != 9 {
		t.Fatalf("Delivery = %d, %v; want 9 skipped", skipped, err)
	}
	expect(t, db, `SELECT group_concat(no_o_id) FROM new_order`, "3")
	expect(t, db, `SELECT o_carrier_id FROM orders WHERE o_w_id = 1 AND o_d_id = 1 AND o_id = 2`, "7")
	expect(t, db, `SELECT o_carrier_id FROM orders WHERE o_w_id = 1 AND o_d_id = 1 AND o_id = 3`, "NULL")
	expect(t, db, `SELECT count(*), min(length(ol_delivery_d)) FROM order_line WHERE ol_o_id = 2 AND ol_delivery_d IS NOT NULL`, "2 19")
	expect(t, db, `SELECT count(*) FROM order_line WHERE ol_o_id = 3 AND ol_delivery_d IS NULL`, "1")
	expect(t, db, `SELECT c_balance, c_delivery_cnt FROM customer WHERE c_w_id = 1 AND c_d_id = 1 AND c_id = 2`, "-600 1")

	// Then order 3 (customer 1, 1000 cents), then nothing.
	if skipped, err := s.Delivery(ctx, &tpcc.DeliveryInput{WID: 1, CarrierID: 1}); err != nil || skipped != 9 {
		t.Fatalf("second Delivery = %d, %v", skipped, err)
	}
	expect(t, db, `SELECT c_balance, c_delivery_cnt FROM customer WHERE c_w_id = 1 AND c_d_id = 1 AND c_id = 1`, "0 1")
	if skipped, err := s.Delivery(ctx, &tpcc.DeliveryInput{WID: 1, CarrierID: 1}); err != nil || skipped != 10 {
		t.Fatalf("third Delivery = %d, %v; want 10 skipped", skipped, err)
	}
	expect(t, db, `SELECT count(*), (SELECT count(*) FROM orders WHERE o_carrier_id IS NULL),
		(SELECT count(*) FROM order_line WHERE ol_delivery_d IS NULL) FROM new_order`, "0 0 0")
}

func TestStockLevel(t *testing.T) {
	s, _ := newTestSession(t)
	ctx := context.Background()
	// District 1's orders 1..3 hold items 4, 5, 2, 3, 1 with stock 100, 15, 12, 10, 50.
	for _, tc := range []struct{ d, threshold, want int }{
		{1, 10, 0}, {1, 11, 1}, {1, 13, 2}, {1, 16, 3}, {1, 20, 3}, {2, 20, 0},
	} {
		n, err := s.StockLevel(ctx, &tpcc.StockLevelInput{WID: 1, DID: tc.d, Threshold: tc.threshold})
		if err != nil || n != tc.want {
			t.Errorf("StockLevel(d %d, threshold %d) = %d, %v; want %d", tc.d, tc.threshold, n, err, tc.want)
		}
	}
	// A new order for item 3 restocks it (10 - 1 < 10: + 91) and enters the last 20.
	no := &tpcc.NewOrderInput{WID: 1, DID: 1, CID: 1, Lines: []tpcc.OrderLine{{ItemID: 3, SupplyWID: 1, Quantity: 1}}}
	if _, err := s.NewOrder(ctx, no); err != nil {
		t.Fatal(err)
	}
	if n, err := s.StockLevel(ctx, &tpcc.StockLevelInput{WID: 1, DID: 1, Threshold: 13}); err != nil || n != 1 {
		t.Errorf("StockLevel after restocking item 3 = %d, %v; want 1", n, err)
	}
}

// Benchmarks of the client side (the database is tiny): b.ReportAllocs shows what a
// transaction allocates, mostly in database/sql and the driver.
func BenchmarkNewOrder(b *testing.B) {
	s, _ := newTestSession(b)
	ctx := context.Background()
	in := &tpcc.NewOrderInput{WID: 1, DID: 1, CID: 1}
	for i := range 10 {
		in.Lines = append(in.Lines, tpcc.OrderLine{ItemID: i%5 + 1, SupplyWID: 1, Quantity: 5})
	}
	b.ReportAllocs()
	for b.Loop() {
		if _, err := s.NewOrder(ctx, in); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkPayment(b *testing.B) {
	s, _ := newTestSession(b)
	ctx := context.Background()
	in := &tpcc.PaymentInput{WID: 1, DID: 1, CWID: 1, CDID: 1, CLast: "BARBAR", ByName: true, Amount: 12345}
	b.ReportAllocs()
	for b.Loop() {
		if err := s.Payment(ctx, in); err != nil {
			b.Fatal(err)
		}
	}
}
