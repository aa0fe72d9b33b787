package sqldb

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"io/fs"
	"strconv"
	"time"

	"github.com/storbench/storbench/internal/engine"
	"github.com/storbench/storbench/internal/tpcc"
)

// The sql mode's statements: sqlmode/NAME.sql of the dialect, one statement each with
// ? placeholders, prepared once per session. Each takes its arguments in the order
// of the comment beside it (a placeholder is never reused: MySQL cannot number them)
// and returns the columns named there. Money crosses as integer cents and the tax and
// discount rates as integers of 1/10000, both ways: the statements convert where the
// engine stores decimals (MySQL), and SQLite's scaled columns need no conversion.
//
// A write transaction reads a row, then updates it (no UPDATE … RETURNING, which MySQL
// lacks). Its reads must lock what they read: SQLite's BEGIN IMMEDIATE holds the one
// write lock from the start; MySQL's reads of a write transaction say FOR UPDATE.
type stmtID int

const (
	// New-Order (2.4.2)
	noDistrict       stmtID = iota // w, d → d_tax (1/10000), d_next_o_id
	noDistrictUpdate               // w, d: d_next_o_id + 1
	noWarehouse                    // w → w_tax (1/10000)
	noCustomer                     // w, d, c → c_discount (1/10000), c_last, c_credit
	noItem                         // i → i_price (cents), i_name, i_data; no row: unused
	noStock                        // d, supply w, i → s_quantity, s_data, s_dist_<d>
	noStockUpdate                  // new s_quantity, qty, remote (0/1), supply w, i
	noOrder                        // o, d, w, c, ol_cnt, all_local
	noNewOrder                     // o, d, w
	noOrderLine                    // o, d, w, number, i, supply w, qty, amount (cents), dist_info

	// Payment (2.5.2) and Order-Status (2.6.2)
	customersByName     // w, d, c_last → c_id ordered by c_first, c_id
	payWarehouse        // w → w_name, w_street_1, w_street_2, w_city, w_state, w_zip
	payWarehouseUpdate  // cents, w
	payDistrict         // w, d → d_name, d_street_1, d_street_2, d_city, d_state, d_zip
	payDistrictUpdate   // cents, w, d
	payCustomer         // w, d, c → c_first … c_since, c_credit, c_credit_lim, c_discount, c_balance (14)
	payCustomerUpdate   // cents, cents, w, d, c
	payCustomerUpdateBC // cents, cents, c_data prefix, w, d, c
	payHistory          // c, c_d, c_w, d, w, cents, w_name, d_name

	osCustomer // w, d, c → c_balance (cents), c_first, c_middle, c_last
	osOrder    // w, d, c → o_id, o_entry_d, o_carrier_id of the latest order
	osLines    // w, d, o → ol_i_id, ol_supply_w_id, ol_quantity, ol_amount (cents), ol_delivery_d

	// Delivery (2.7.4)
	dlLock             // w: optional (no file: none); holds off other Deliveries of w
	dlNewOrder         // w, d → the oldest no_o_id; no row: the district is skipped
	dlNewOrderDelete   // w, d, o
	dlOrder            // w, d, o → o_c_id
	dlOrderUpdate      // carrier, w, d, o
	dlOrderLines       // w, d, o → sum(ol_amount) (cents)
	dlOrderLinesUpdate // w, d, o: ol_delivery_d = now
	dlCustomerUpdate   // cents, w, d, c

	// Stock-Level (2.8.2)
	stockLevel // w, d, threshold → count of distinct items

	numStmts
)

var stmtNames = [numStmts]string{
	noDistrict: "no_district", noDistrictUpdate: "no_district_update", noWarehouse: "no_warehouse",
	noCustomer: "no_customer", noItem: "no_item", noStock: "no_stock", noStockUpdate: "no_stock_update",
	noOrder: "no_order", noNewOrder: "no_new_order", noOrderLine: "no_order_line",
	customersByName: "customers_by_name",
	payWarehouse:    "pay_warehouse", payWarehouseUpdate: "pay_warehouse_update",
	payDistrict: "pay_district", payDistrictUpdate: "pay_district_update",
	payCustomer: "pay_customer", payCustomerUpdate: "pay_customer_update",
	payCustomerUpdateBC: "pay_customer_update_bc", payHistory: "pay_history",
	osCustomer: "os_customer", osOrder: "os_order", osLines: "os_lines",
	dlLock: "dl_lock", dlNewOrder: "dl_new_order", dlNewOrderDelete: "dl_new_order_delete",
	dlOrder: "dl_order", dlOrderUpdate: "dl_order_update", dlOrderLines: "dl_order_lines",
	dlOrderLinesUpdate: "dl_order_lines_update", dlCustomerUpdate: "dl_customer_update",
	stockLevel: "stock_level",
}

// optional statements: a dialect without the file does without the step.
func optional(id stmtID) bool { return id == dlLock }

// MaxStatementsPerSession is the most statements one session prepares, in either
// mode: what a server's prepared-statement limit must allow per connection.
const MaxStatementsPerSession = max(int(numStmts), int(numProcs))

// StatementsPerSession is how many statements a session of mode prepares on this
// database (the sql mode's optional ones only where the dialect has their file).
func (db *DB) StatementsPerSession(mode engine.Mode) int {
	if mode == engine.Procedures {
		return int(numProcs)
	}
	n := 0
	for id, name := range stmtNames {
		if _, err := fs.Stat(db.dialect.SQL, "sqlmode/"+name+".sql"); err == nil || !optional(stmtID(id)) {
			n++
		}
	}
	return n
}

// Transaction control, sent unprepared (MySQL cannot prepare BEGIN).
const (
	sqlCommit   = "COMMIT"
	sqlRollback = "ROLLBACK"
)

// session runs each transaction as client-side statements between the dialect's BEGIN
// and COMMIT on one connection; every statement is prepared once. It computes amounts
// exactly in integer cents, as the PostgreSQL sql mode does, and leaves the same rows.
type session struct {
	prepared // the statements, by stmtID
	d        *Dialect
	inTx     bool // a transaction is open: an error rolls it back

	sink sql.RawBytes // columns read for display (2.x.3) and discarded
	ids  []int64
	buf  []byte

	line  [tpcc.MaxOrderLines]sqlLine
	order [tpcc.MaxOrderLines]int // New-Order lines in stock-lock order

	// Results: the last transaction's outputs, kept for tests and debugging.
	wTax, dTax, discount int64 // 1/10000
	oID, cID, id         int64
	total                int64 // New-Order's total in cents (2.4.2.2)
	quantity             int64 // a stock row's s_quantity
	wName, dName, credit string
	balance              int64 // the paid customer's c_balance after the payment, cents
	cents                int64 // a delivered order's amount
	count                int64 // Stock-Level's result
	lines                int   // Order-Status's order lines
}

// sqlLine is one New-Order line.
type sqlLine struct {
	item, supply, qty, remote int64
	price, amount             int64 // cents
	dist                      string
	iData, sData              string // i_data and s_data: the brand-generic (2.4.2.2)
	found                     bool   // the item exists (2.4.2.3)
}

// newSession prepares the sql mode's statements on conn. On error the caller still
// owns conn; otherwise Close closes it.
func newSession(ctx context.Context, conn *sql.Conn, d *Dialect) (*session, error) {
	files := make([]string, numStmts)
	for id, name := range stmtNames {
		files[id] = "sqlmode/" + name + ".sql"
	}
	p, err := prepare(ctx, conn, d, files, func(i int) bool { return optional(stmtID(i)) })
	if err != nil {
		return nil, err
	}
	return &session{prepared: p, d: d, ids: make([]int64, 0, 16), buf: make([]byte, 0, 64)}, nil
}

// NewOrder implements engine.Session (2.4.2): the district's next order id, the
// warehouse's and district's taxes, the customer's discount, then each line in stock-
// lock order: its item, its stock read and updated; then the order, its new_order row
// and its lines. An unused item (2.4.2.3) finds no item row: its line is skipped, the
// other lines and the order are entered all the same, and the whole transaction rolls
// back at the end, so a rolled-back New-Order does the same work as the others.
func (s *session) NewOrder(ctx context.Context, in *tpcc.NewOrderInput) (bool, error) {
	n := len(in.Lines)
	if n > len(s.line) {
		return false, fmt.Errorf("new-order with %d lines: at most %d", n, len(s.line))
	}
	w, d, c := int64(in.WID), int64(in.DID), int64(in.CID)
	allLocal := int64(1)
	for i, l := range in.Lines {
		ln := &s.line[i]
		ln.item, ln.supply, ln.qty, ln.remote = int64(l.ItemID), int64(l.SupplyWID), int64(l.Quantity), 0
		if l.SupplyWID != in.WID { // 2.4.2.2: s_remote_cnt, o_all_local
			ln.remote, allLocal = 1, 0
		}
	}
	if err := s.begin(ctx, s.d.BeginWrite); err != nil {
		return false, err
	}
	if err := s.row(ctx, noDistrict, s.a(w, d), s.to(&s.dTax, &s.oID)); err != nil {
		return false, s.abort(ctx, fmt.Errorf("district (%d, %d): %w", w, d, err))
	}
	if err := s.exec(ctx, noDistrictUpdate, s.a(w, d)); err != nil {
		return false, s.abort(ctx, err)
	}
	if err := s.row(ctx, noWarehouse, s.a(w), s.to(&s.wTax)); err != nil {
		return false, s.abort(ctx, fmt.Errorf("warehouse %d: %w", w, err))
	}
	if err := s.row(ctx, noCustomer, s.a(w, d, c), s.to(&s.discount, &s.sink, &s.sink)); err != nil {
		return false, s.abort(ctx, fmt.Errorf("customer (%d, %d, %d): %w", w, d, c, err))
	}
	var sum int64
	unused := false
	for _, i := range in.LockOrder(s.order[:0]) {
		ln := &s.line[i]
		err := s.row(ctx, noItem, s.a(ln.item), s.to(&ln.price, &s.sink, &ln.iData))
		ln.found = err == nil
		if errors.Is(err, sql.ErrNoRows) { // 2.4.2.3: an unused item id
			unused = true
			continue
		}
		if err != nil {
			return false, s.abort(ctx, err)
		}
		ln.amount = ln.price * ln.qty // 2.4.2.2: ol_amount = ol_quantity * i_price
		sum += ln.amount
		err = s.row(ctx, noStock, s.a(d, ln.supply, ln.item), s.to(&s.quantity, &ln.sData, &ln.dist))
		if errors.Is(err, sql.ErrNoRows) {
			err = fmt.Errorf("stock of item %d in warehouse %d is missing", ln.item, ln.supply)
		}
		if err != nil {
			return false, s.abort(ctx, err)
		}
		// 2.4.2.2: s_quantity - ol_quantity if that leaves at least 10, else + 91.
		q := s.quantity - ln.qty
		if s.quantity < ln.qty+10 {
			q += 91
		}
		if err := s.exec(ctx, noStockUpdate, s.a(q, ln.qty, ln.remote, ln.supply, ln.item)); err != nil {
			return false, s.abort(ctx, err)
		}
	}
	// 2.4.2.2: total = sum(ol_amount) * (1 - c_discount) * (1 + w_tax + d_tax), in
	// cents, rounded half up (for display: nothing stores it).
	const scale = 10000 * 10000
	s.total = (sum*(10000-s.discount)*(10000+s.wTax+s.dTax) + scale/2) / scale

	if err := s.exec(ctx, noOrder, s.a(s.oID, d, w, c, int64(n), allLocal)); err != nil {
		return false, s.abort(ctx, err)
	}
	if err := s.exec(ctx, noNewOrder, s.a(s.oID, d, w)); err != nil {
		return false, s.abort(ctx, err)
	}
	for i := range n {
		ln := &s.line[i]
		if !ln.found {
			continue
		}
		err := s.exec(ctx, noOrderLine, s.a(s.oID, d, w, int64(i+1), ln.item, ln.supply, ln.qty, ln.amount, ln.dist))
		if err != nil {
			return false, s.abort(ctx, err)
		}
	}
	if unused {
		// 2.4.2.3: the unused item rolls back everything, d_next_o_id included.
		return true, s.rollback(ctx)
	}
	if err := s.commit(ctx); err != nil {
		return false, err
	}
	for i := range n { // 2.4.2.2: the brand-generic of each line, for the terminal
		in.Lines[i].BrandGeneric = tpcc.BrandGeneric(s.line[i].iData, s.line[i].sData)
	}
	return false, nil
}

// Payment implements engine.Session (2.5.2): the warehouse and the district (their
// names make h_data; their year-to-date grows), the customer by id or by name, paid
// (a bad-credit customer's c_data records the payment), and the history row.
func (s *session) Payment(ctx context.Context, in *tpcc.PaymentInput) error {
	w, d, cw, cd := int64(in.WID), int64(in.DID), int64(in.CWID), int64(in.CDID)
	cents := in.Amount
	if err := s.begin(ctx, s.d.BeginWrite); err != nil {
		return err
	}
	sk := &s.sink
	if err := s.row(ctx, payWarehouse, s.a(w), s.to(&s.wName, sk, sk, sk, sk, sk)); err != nil {
		return s.abort(ctx, fmt.Errorf("warehouse %d: %w", w, err))
	}
	if err := s.exec(ctx, payWarehouseUpdate, s.a(cents, w)); err != nil {
		return s.abort(ctx, err)
	}
	if err := s.row(ctx, payDistrict, s.a(w, d), s.to(&s.dName, sk, sk, sk, sk, sk)); err != nil {
		return s.abort(ctx, fmt.Errorf("district (%d, %d): %w", w, d, err))
	}
	if err := s.exec(ctx, payDistrictUpdate, s.a(cents, w, d)); err != nil {
		return s.abort(ctx, err)
	}
	s.cID = int64(in.CID)
	if in.ByName {
		c, err := s.middleCustomer(ctx, cw, cd, in.CLast)
		if err != nil {
			return s.abort(ctx, err)
		}
		s.cID = c
	}
	c := s.cID
	err := s.row(ctx, payCustomer, s.a(cw, cd, c),
		s.to(sk, sk, sk, sk, sk, sk, sk, sk, sk, sk, &s.credit, sk, sk, &s.balance))
	if err != nil {
		return s.abort(ctx, fmt.Errorf("customer (%d, %d, %d): %w", cw, cd, c, err))
	}
	s.balance -= cents
	if s.credit == "BC" {
		// 2.5.2.2: "C_ID C_D_ID C_W_ID D_ID W_ID H_AMOUNT|" before c_data, 500 kept.
		b := strconv.AppendInt(s.buf[:0], c, 10)
		b = strconv.AppendInt(append(b, ' '), cd, 10)
		b = strconv.AppendInt(append(b, ' '), cw, 10)
		b = strconv.AppendInt(append(b, ' '), d, 10)
		b = strconv.AppendInt(append(b, ' '), w, 10)
		b = append(tpcc.AppendCents(append(b, ' '), cents), '|')
		s.buf = b
		err = s.exec(ctx, payCustomerUpdateBC, s.a(cents, cents, string(b), cw, cd, c))
	} else {
		err = s.exec(ctx, payCustomerUpdate, s.a(cents, cents, cw, cd, c))
	}
	if err != nil {
		return s.abort(ctx, err)
	}
	if err := s.exec(ctx, payHistory, s.a(c, cd, cw, d, w, cents, s.wName, s.dName)); err != nil {
		return s.abort(ctx, err)
	}
	return s.commit(ctx)
}

// middleCustomer reads the customers of one last name, ordered by c_first, and returns
// the id at position ceil(n/2) (2.5.2.2, 2.6.2.2).
func (s *session) middleCustomer(ctx context.Context, w, d int64, last string) (int64, error) {
	rows, err := s.stmt[customersByName].QueryContext(ctx, s.a(w, d, last)...)
	if err != nil {
		return 0, wrap(customersByName, err)
	}
	s.ids = s.ids[:0]
	for rows.Next() {
		if err := rows.Scan(&s.id); err != nil {
			rows.Close()
			return 0, wrap(customersByName, err)
		}
		s.ids = append(s.ids, s.id)
	}
	if err := rows.Close(); err != nil {
		return 0, wrap(customersByName, err)
	}
	if err := rows.Err(); err != nil {
		return 0, wrap(customersByName, err)
	}
	if len(s.ids) == 0 {
		return 0, fmt.Errorf("no customer named %s in district (%d, %d)", last, w, d)
	}
	return s.ids[(len(s.ids)-1)/2], nil
}

// OrderStatus implements engine.Session (2.6.2): in one read transaction (one
// snapshot), the customer (by name: the middle one), its latest order and that
// order's lines.
func (s *session) OrderStatus(ctx context.Context, in *tpcc.OrderStatusInput) error {
	w, d := int64(in.WID), int64(in.DID)
	if err := s.begin(ctx, s.d.BeginRead); err != nil {
		return err
	}
	s.cID = int64(in.CID)
	if in.ByName {
		c, err := s.middleCustomer(ctx, w, d, in.CLast)
		if err != nil {
			return s.abort(ctx, err)
		}
		s.cID = c
	}
	c, sk := s.cID, &s.sink
	// 2.6.2.2: balance and name, for display.
	if err := s.row(ctx, osCustomer, s.a(w, d, c), s.to(sk, sk, sk, sk)); err != nil {
		return s.abort(ctx, fmt.Errorf("customer (%d, %d, %d): %w", w, d, c, err))
	}
	s.oID, s.lines = 0, 0
	err := s.row(ctx, osOrder, s.a(w, d, c), s.to(&s.oID, sk, sk))
	if errors.Is(err, sql.ErrNoRows) { // a customer without orders: nothing to show
		return s.commit(ctx)
	}
	if err != nil {
		return s.abort(ctx, err)
	}
	rows, err := s.stmt[osLines].QueryContext(ctx, s.a(w, d, s.oID)...)
	if err != nil {
		return s.abort(ctx, wrap(osLines, err))
	}
	s.dst = append(s.dst[:0], sk, sk, sk, sk, sk)
	for rows.Next() { // item, supply warehouse, quantity, amount, delivery date: for display
		if err := rows.Scan(s.dst...); err != nil {
			rows.Close()
			return s.abort(ctx, wrap(osLines, err))
		}
		s.lines++
	}
	if err := rows.Close(); err != nil {
		return s.abort(ctx, wrap(osLines, err))
	}
	if err := rows.Err(); err != nil {
		return s.abort(ctx, wrap(osLines, err))
	}
	return s.commit(ctx)
}

// Delivery implements engine.Session (2.7.4), the 10 districts in one transaction:
// each district's oldest new_order row is deleted, its order gets the carrier, its
// lines the delivery date, and its customer the order's amount. Returns the districts
// skipped for want of an order.
func (s *session) Delivery(ctx context.Context, in *tpcc.DeliveryInput) (int, error) {
	w, carrier := int64(in.WID), int64(in.CarrierID)
	if err := s.begin(ctx, s.d.BeginWrite); err != nil {
		return 0, err
	}
	if s.stmt[dlLock] != nil {
		if err := s.exec(ctx, dlLock, s.a(w)); err != nil {
			return 0, s.abort(ctx, err)
		}
	}
	skipped := 0
	for d := int64(1); d <= tpcc.DistrictsPerWarehouse; d++ {
		err := s.row(ctx, dlNewOrder, s.a(w, d), s.to(&s.oID))
		if errors.Is(err, sql.ErrNoRows) { // 2.7.4.2: no order to deliver: skipped
			skipped++
			continue
		}
		if err != nil {
			return 0, s.abort(ctx, err)
		}
		o := s.oID
		if err := s.exec(ctx, dlNewOrderDelete, s.a(w, d, o)); err != nil {
			return 0, s.abort(ctx, err)
		}
		if err := s.row(ctx, dlOrder, s.a(w, d, o), s.to(&s.cID)); err != nil {
			return 0, s.abort(ctx, fmt.Errorf("order (%d, %d, %d): %w", w, d, o, err))
		}
		if err := s.exec(ctx, dlOrderUpdate, s.a(carrier, w, d, o)); err != nil {
			return 0, s.abort(ctx, err)
		}
		if err := s.row(ctx, dlOrderLines, s.a(w, d, o), s.to(&s.cents)); err != nil {
			return 0, s.abort(ctx, err)
		}
		if err := s.exec(ctx, dlOrderLinesUpdate, s.a(w, d, o)); err != nil {
			return 0, s.abort(ctx, err)
		}
		if err := s.exec(ctx, dlCustomerUpdate, s.a(s.cents, w, d, s.cID)); err != nil {
			return 0, s.abort(ctx, err)
		}
	}
	return skipped, s.commit(ctx)
}

// StockLevel implements engine.Session (2.8.2): one statement (isolation level 1
// suffices, 2.8.2.1), in a read-only transaction where the dialect asks for one.
func (s *session) StockLevel(ctx context.Context, in *tpcc.StockLevelInput) (int, error) {
	if s.d.StockLevelInTransaction {
		if err := s.begin(ctx, s.d.BeginRead); err != nil {
			return 0, err
		}
	}
	err := s.row(ctx, stockLevel, s.a(int64(in.WID), int64(in.DID), int64(in.Threshold)), s.to(&s.count))
	if err != nil {
		return 0, s.abort(ctx, err)
	}
	if s.d.StockLevelInTransaction {
		if err := s.commit(ctx); err != nil {
			return 0, err
		}
	}
	return int(s.count), nil
}

// row runs a statement that returns at most one row and scans it into dst;
// sql.ErrNoRows (unwrapped) when it returns none.
func (s *session) row(ctx context.Context, id stmtID, args, dst []any) error {
	rows, err := s.stmt[id].QueryContext(ctx, args...)
	if err != nil {
		return wrap(id, err)
	}
	if !rows.Next() {
		err := rows.Err()
		if cerr := rows.Close(); err == nil {
			err = cerr
		}
		if err != nil {
			return wrap(id, err)
		}
		return sql.ErrNoRows
	}
	err = rows.Scan(dst...)
	if cerr := rows.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return wrap(id, err)
	}
	return nil
}

// exec runs a statement that returns no rows.
func (s *session) exec(ctx context.Context, id stmtID, args []any) error {
	if _, err := s.stmt[id].ExecContext(ctx, args...); err != nil {
		return wrap(id, err)
	}
	return nil
}

func wrap(id stmtID, err error) error { return fmt.Errorf("%s: %w", stmtNames[id], err) }

// begin starts a transaction with the dialect's BEGIN.
func (s *session) begin(ctx context.Context, stmt string) error {
	if _, err := s.conn.ExecContext(ctx, stmt); err != nil {
		return fmt.Errorf("%s: %w", stmt, err)
	}
	s.inTx = true
	return nil
}

// commit ends the transaction; a failed COMMIT is rolled back.
func (s *session) commit(ctx context.Context) error {
	if _, err := s.conn.ExecContext(ctx, sqlCommit); err != nil {
		return s.abort(ctx, fmt.Errorf("commit: %w", err))
	}
	s.inTx = false
	return nil
}

// rollback ends the transaction: as the spec asks (2.4.2.3), or after an error. It
// runs even when ctx is done, so that no transaction stays open on the connection.
func (s *session) rollback(ctx context.Context) error {
	s.inTx = false
	rctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 10*time.Second)
	defer cancel()
	if _, err := s.conn.ExecContext(rctx, sqlRollback); err != nil {
		return fmt.Errorf("rollback: %w", err)
	}
	return nil
}

// abort rolls back the transaction a failed statement left open, so the session stays
// usable, and returns the statement's error (Classify reads it). The rollback's own
// failure (the engine may have rolled back already) is joined to the error.
func (s *session) abort(ctx context.Context, err error) error {
	if !s.inTx {
		return err
	}
	if rerr := s.rollback(ctx); rerr != nil {
		err = errors.Join(err, rerr)
	}
	return err
}
