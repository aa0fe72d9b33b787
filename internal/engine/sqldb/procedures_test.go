package sqldb

import (
	"context"
	"errors"
	"fmt"
	"os"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/go-sql-driver/mysql"

	"github.com/storbench/storbench/internal/engine"
	"github.com/storbench/storbench/internal/testsupport/mariadbtest"
	"github.com/storbench/storbench/internal/tpcc"
)

// The procedures mode against MySQL's statements (../mysql/sql) on a throwaway
// MariaDB. Package mysql imports this one, so the dialect is written out here.

// mysqlDialect is package mysql's dialect for MariaDB, less its LOAD DATA loader.
var mysqlDialect = &Dialect{Engine: "mysql", Driver: "mysql", SQL: os.DirFS("../mysql/sql"),
	BeginWrite: "START TRANSACTION", BeginRead: "START TRANSACTION READ ONLY", Procedures: true,
	Classify: func(err error) engine.Failure {
		var me *mysql.MySQLError
		if errors.As(err, &me) && (me.Number == 1213 || me.Number == 1205) { // deadlock, lock wait timeout
			return engine.Failure{Retry: true, Kind: "retry"}
		}
		return engine.Failure{Kind: "other"}
	}}

// openMariaDB starts a server and opens its empty database with the session settings
// of package mysql (strict, UTC).
func openMariaDB(t *testing.T) *DB {
	t.Helper()
	db, _ := openMariaDBServer(t)
	return db
}

// openMariaDBServer is openMariaDB, with the server.
func openMariaDBServer(t *testing.T) (*DB, *mariadbtest.Server) {
	t.Helper()
	srv := mariadbtest.Start(t)
	cfg, err := mysql.ParseDSN(srv.DSN)
	if err != nil {
		t.Fatal(err)
	}
	cfg.Params = map[string]string{"sql_mode": "'STRICT_ALL_TABLES,NO_ENGINE_SUBSTITUTION'", "time_zone": "'+00:00'"}
	db, err := Open(context.Background(), mysqlDialect, cfg.FormatDSN(), srv.URL)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(db.Close)
	return db, srv
}

// A tiny database like session_test.go's, in exact decimals: two warehouses, district
// 1 of warehouse 1 with orders 1 (delivered), 2 and 3 (new), three BARBARs (by c_first:
// 3 AAA, 4 BBB, 1 CCC) and a bad-credit customer 2; item 1 also stocked in warehouse 2.
var mysqlTestData = []string{
	`INSERT INTO warehouse VALUES (1, 'WHOUSE', 's1', 's2', 'city', 'ST', '123411111', 0.1000, 300000.00),
		(2, 'WH2', 's1', 's2', 'city', 'ST', '123411111', 0.0500, 300000.00)`,
	`INSERT INTO district VALUES (1, 1, 'DIST1', 's1', 's2', 'city', 'ST', '123411111', 0.0500, 30000.00, 4),
		(2, 1, 'DIST2', 's1', 's2', 'city', 'ST', '123411111', 0.2000, 30000.00, 1),
		(1, 2, 'W2DIST1', 's1', 's2', 'city', 'ST', '123411111', 0.0100, 30000.00, 1)`,
	mysqlCustomer(1, "CCC", "BARBAR", "GC", "data1"),
	mysqlCustomer(2, "BOB", "OUGHTOUGHT", "BC", strings.Repeat("x", 499)),
	mysqlCustomer(3, "AAA", "BARBAR", "GC", "data3"),
	mysqlCustomer(4, "BBB", "BARBAR", "GC", "data4"),
	`INSERT INTO item VALUES (1, 1, 'item1', 1.23, 'data'), (2, 2, 'item2', 2.23, 'data'), (3, 3, 'item3', 3.23, 'data')`,
	mysqlStock(1, 1, 50), mysqlStock(2, 1, 12), mysqlStock(3, 1, 10), mysqlStock(1, 2, 70),
	`INSERT INTO orders VALUES (1, 1, 1, 1, '` + stamp + `', 3, 2, 1), (2, 1, 1, 2, '` + stamp + `', NULL, 2, 1),
		(3, 1, 1, 1, '` + stamp + `', NULL, 1, 1)`,
	`INSERT INTO new_order VALUES (2, 1, 1), (3, 1, 1)`,
	`INSERT INTO order_line VALUES
		(1, 1, 1, 1, 1, 1, '` + stamp + `', 5, 0, 'dist'), (1, 1, 1, 2, 2, 1, '` + stamp + `', 5, 0, 'dist'),
		(2, 1, 1, 1, 2, 1, NULL, 5, 1.50, 'dist'), (2, 1, 1, 2, 3, 1, NULL, 5, 2.50, 'dist'),
		(3, 1, 1, 1, 1, 1, NULL, 5, 10.00, 'dist')`,
}

func mysqlCustomer(id int, first, last, credit, data string) string {
	return fmt.Sprintf(`INSERT INTO customer VALUES (%d, 1, 1, '%s', 'OE', '%s', 's1', 's2', 'city', 'ST',
		'123411111', '0123456789012345', '%s', '%s', 50000.00, 0.1000, -10.00, 10.00, 1, 0, '%s')`,
		id, first, last, stamp, credit, data)
}

func mysqlStock(item, w, qty int) string {
	return fmt.Sprintf(`INSERT INTO stock VALUES (%d, %d, %d, 'd01_%d_%d', 'd02', 'd03', 'd04', 'd05', 'd06',
		'd07', 'd08', 'd09', 'd10', 0, 0, 0, 'data')`, item, w, qty, item, w)
}

// openTinyMariaDB starts a server with the tiny database and the procedures.
func openTinyMariaDB(t *testing.T) *DB {
	t.Helper()
	db, _ := openTinyMariaDBServer(t)
	return db
}

// openTinyMariaDBServer is openTinyMariaDB, with the server.
func openTinyMariaDBServer(t *testing.T) (*DB, *mariadbtest.Server) {
	t.Helper()
	ctx := context.Background()
	db, srv := openMariaDBServer(t)
	spec, err := engine.ParseSchema(engine.SpecSchema)
	if err != nil {
		t.Fatal(err)
	}
	if err := db.CreateTables(ctx, spec); err != nil {
		t.Fatal(err)
	}
	for _, q := range mysqlTestData {
		if _, err := db.pool.ExecContext(ctx, q); err != nil {
			t.Fatalf("%v\n%s", err, q)
		}
	}
	if err := db.script(ctx, "indexes.sql", spec); err != nil {
		t.Fatal(err)
	}
	if err := db.createProcedures(ctx); err != nil {
		t.Fatal(err)
	}
	return db, srv
}

// TestProceduresTiny runs each procedure once on the tiny database and checks the
// rows it leaves and its result row.
func TestProceduresTiny(t *testing.T) {
	ctx := context.Background()
	db := openTinyMariaDB(t)
	// A rebuild drops what the first creation left.
	if err := db.createProcedures(ctx); err != nil {
		t.Fatal(err)
	}
	es, err := db.Connect(ctx, engine.Procedures)
	if err != nil {
		t.Fatal(err)
	}
	defer es.Close()
	s := es.(*procSession)
	pool := db.pool
	// New-Order: three lines, the second from warehouse 2 (remote) and two of item 1.
	// Line 1: item 2 × 5 (12 - 5 < 10: + 91); line 2: item 1 × 2 from warehouse 2;
	// line 3: item 1 × 3. Stock is locked in (warehouse, item) order: (1,1), (1,2), (2,1).
	no := &tpcc.NewOrderInput{WID: 1, DID: 1, CID: 1, Lines: []tpcc.OrderLine{
		{ItemID: 2, SupplyWID: 1, Quantity: 5}, {ItemID: 1, SupplyWID: 2, Quantity: 2}, {ItemID: 1, SupplyWID: 1, Quantity: 3}}}
	rolledBack, err := s.NewOrder(ctx, no)
	if err != nil || rolledBack {
		t.Fatalf("NewOrder: %v %v", rolledBack, err)
	}
	// (11.15 + 2.46 + 3.69) * 0.9 * 1.15 = 17.9055
	if s.orderID != 4 || s.total != 1791 {
		t.Errorf("order %d total %d, want 4 and 1791", s.orderID, s.total)
	}
	expect(t, pool, "SELECT d_next_o_id FROM district WHERE d_w_id = 1 AND d_id = 1", "5")
	expect(t, pool, "SELECT o_c_id, o_carrier_id, o_ol_cnt, o_all_local FROM orders WHERE o_id = 4", "1 NULL 3 0")
	expect(t, pool, "SELECT COUNT(*) FROM new_order WHERE no_o_id = 4", "1")
	expect(t, pool, `SELECT GROUP_CONCAT(CONCAT_WS(':', ol_number, ol_i_id, ol_supply_w_id, ol_quantity, ol_amount, ol_dist_info,
		IFNULL(ol_delivery_d, 'NULL')) ORDER BY ol_number) FROM order_line WHERE ol_o_id = 4`,
		"1:2:1:5:11.15:d01_2_1:NULL,2:1:2:2:2.46:d01_1_2:NULL,3:1:1:3:3.69:d01_1_1:NULL")
	expect(t, pool, `SELECT GROUP_CONCAT(CONCAT_WS(':', s_w_id, s_i_id, s_quantity, s_ytd, s_order_cnt, s_remote_cnt) ORDER BY s_w_id, s_i_id)
		FROM stock`, "1:1:47:3:1:0,1:2:98:5:1:0,1:3:10:0:0:0,2:1:68:2:1:1")

	// 2.4.2.3: an unused item on the last line rolls everything back.
	bad := &tpcc.NewOrderInput{WID: 1, DID: 1, CID: 1, Rollback: true, Lines: []tpcc.OrderLine{
		{ItemID: 3, SupplyWID: 1, Quantity: 1}, {ItemID: tpcc.UnusedItemID, SupplyWID: 1, Quantity: 1}}}
	if rolledBack, err := s.NewOrder(ctx, bad); err != nil || !rolledBack {
		t.Fatalf("NewOrder with an unused item: rolled back %v, %v", rolledBack, err)
	}
	expect(t, pool, "SELECT d_next_o_id FROM district WHERE d_w_id = 1 AND d_id = 1", "5")
	expect(t, pool, "SELECT s_quantity, s_order_cnt FROM stock WHERE s_w_id = 1 AND s_i_id = 3", "10 0")

	// Payment by name: BARBAR are 3 AAA, 4 BBB, 1 CCC; ceil(3/2) = 2nd: customer 4.
	if err := s.Payment(ctx, &tpcc.PaymentInput{WID: 1, DID: 1, CWID: 1, CDID: 1, ByName: true, CLast: "BARBAR", Amount: 12345}); err != nil {
		t.Fatal(err)
	}
	if s.customerID != 4 {
		t.Errorf("paid customer %d, want 4", s.customerID)
	}
	expect(t, pool, "SELECT c_balance, c_ytd_payment, c_payment_cnt, c_data FROM customer WHERE c_id = 4", "-133.45 133.45 2 data4")
	// A bad-credit customer by id from warehouse 2's point of view: c_data gets the
	// payment prepended, 500 characters kept.
	if err := s.Payment(ctx, &tpcc.PaymentInput{WID: 2, DID: 1, CWID: 1, CDID: 1, CID: 2, Amount: 500}); err != nil {
		t.Fatal(err)
	}
	expect(t, pool, "SELECT c_balance, c_ytd_payment, LEFT(c_data, 16), LENGTH(c_data) FROM customer WHERE c_id = 2",
		"-15.00 15.00 2 1 1 1 2 5.00|x 500")
	expect(t, pool, "SELECT w_ytd FROM warehouse WHERE w_id = 2", "300005.00")
	expect(t, pool, "SELECT GROUP_CONCAT(d_ytd ORDER BY d_w_id, d_id) FROM district", "30123.45,30000.00,30005.00")
	expect(t, pool, "SELECT GROUP_CONCAT(CONCAT_WS(':', h_c_id, h_c_w_id, h_w_id, h_amount, h_data) ORDER BY h_c_id) FROM history",
		"2:1:2:5.00:WH2    W2DIST1,4:1:1:123.45:WHOUSE    DIST1")
	expect(t, pool, "SELECT COUNT(*) FROM history WHERE h_date > UTC_TIMESTAMP() - INTERVAL 1 MINUTE", "2")

	// Order-Status: customer 1's latest order is 4 (3 lines); customer 4 has none.
	if err := s.OrderStatus(ctx, &tpcc.OrderStatusInput{WID: 1, DID: 1, CID: 1}); err != nil {
		t.Fatal(err)
	}
	if s.customerID != 1 || s.orderID != 4 || s.lines != 3 {
		t.Errorf("order status: customer %d order %d lines %d, want 1 4 3", s.customerID, s.orderID, s.lines)
	}
	if err := s.OrderStatus(ctx, &tpcc.OrderStatusInput{WID: 1, DID: 1, ByName: true, CLast: "BARBAR"}); err != nil {
		t.Fatal(err)
	}
	if s.customerID != 4 || s.orderID != 0 || s.lines != 0 {
		t.Errorf("order status by name: customer %d order %d lines %d, want 4 0 0", s.customerID, s.orderID, s.lines)
	}
	if err := s.OrderStatus(ctx, &tpcc.OrderStatusInput{WID: 1, DID: 1, ByName: true, CLast: "NOSUCHNAME"}); err == nil {
		t.Error("order status of an unknown name: no error")
	}

	// Delivery: district 1's oldest new order (2, customer 2, 4.00), then 3 (customer
	// 1, 10.00); the other 9 districts are skipped.
	for i, want := range []string{"-11.00 1", "0.00 1"} {
		skipped, err := s.Delivery(ctx, &tpcc.DeliveryInput{WID: 1, CarrierID: 7})
		if err != nil || skipped != 9 {
			t.Fatalf("delivery %d: skipped %d, %v", i, skipped, err)
		}
		expect(t, pool, fmt.Sprint("SELECT c_balance, c_delivery_cnt FROM customer WHERE c_id = ", 2-i), want)
	}
	expect(t, pool, "SELECT GROUP_CONCAT(o_id, ':', IFNULL(o_carrier_id, 'NULL') ORDER BY o_id) FROM orders", "1:3,2:7,3:7,4:NULL")
	expect(t, pool, "SELECT GROUP_CONCAT(no_o_id) FROM new_order", "4")
	expect(t, pool, "SELECT COUNT(*) FROM order_line WHERE ol_o_id IN (2, 3) AND ol_delivery_d > UTC_TIMESTAMP() - INTERVAL 1 MINUTE", "3")

	// Stock-Level: the items of orders 1..4 below 20 in warehouse 1: item 3 (10).
	if n, err := s.StockLevel(ctx, &tpcc.StockLevelInput{WID: 1, DID: 1, Threshold: 20}); err != nil || n != 1 {
		t.Errorf("stock level: %d, %v; want 1", n, err)
	}
	if n, err := s.StockLevel(ctx, &tpcc.StockLevelInput{WID: 1, DID: 1, Threshold: 50}); err != nil || n != 2 {
		t.Errorf("stock level below 50: %d, %v; want 2", n, err)
	}

	// A deadlock inside a call rolls the call back and reaches the client as 1213, for
	// the driver to retry. The other transaction has written more rows, so InnoDB
	// picks the call as the victim.
	other, err := db.pool.Conn(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer other.Close()
	for _, q := range []string{"START TRANSACTION", "UPDATE customer SET c_payment_cnt = c_payment_cnt + 1",
		"UPDATE stock SET s_ytd = s_ytd + 1 WHERE s_w_id = 1 AND s_i_id IN (2, 3)"} {
		if _, err := other.ExecContext(ctx, q); err != nil {
			t.Fatal(err)
		}
	}
	done := make(chan error)
	go func() {
		_, err := s.NewOrder(ctx, &tpcc.NewOrderInput{WID: 1, DID: 1, CID: 1, Lines: []tpcc.OrderLine{
			{ItemID: 2, SupplyWID: 1, Quantity: 1}, {ItemID: 1, SupplyWID: 1, Quantity: 1}}})
		done <- err
	}()
	time.Sleep(500 * time.Millisecond) // the call has locked stock (1, 1) and waits for (1, 2)
	_, otherErr := other.ExecContext(ctx, "UPDATE stock SET s_ytd = s_ytd + 1 WHERE s_w_id = 1 AND s_i_id = 1")
	if _, rerr := other.ExecContext(ctx, "ROLLBACK"); rerr != nil {
		t.Fatal(rerr)
	}
	var me *mysql.MySQLError
	if err := <-done; !errors.As(err, &me) || me.Number != 1213 {
		t.Errorf("New-Order in a deadlock: %v, want error 1213 (the other transaction's: %v)", err, otherErr)
	}
	expect(t, pool, "SELECT d_next_o_id FROM district WHERE d_w_id = 1 AND d_id = 1", "5")
	expect(t, pool, "SELECT s_ytd FROM stock WHERE s_w_id = 1 AND s_i_id = 1", "3")

	// Drop finds the five procedures.
	names, err := db.dropProcedures(ctx)
	want := []string{"storbench_delivery", "storbench_new_order", "storbench_order_status", "storbench_payment", "storbench_stock_level"}
	if err != nil || !slices.Equal(names, want) {
		t.Errorf("dropProcedures: %v %v, want %v", names, err, want)
	}
}
