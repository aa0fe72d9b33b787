package postgres

import (
	"context"
	_ "embed"
	"errors"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/storbench/storbench/internal/tpcc"
)

// The statements of the sql mode, one per file (sql/sqlmode/).
var (
	//go:embed sql/sqlmode/no_district.sql
	sqlNODistrict string
	//go:embed sql/sqlmode/no_warehouse.sql
	sqlNOWarehouse string
	//go:embed sql/sqlmode/no_customer.sql
	sqlNOCustomer string
	//go:embed sql/sqlmode/no_item.sql
	sqlNOItem string
	//go:embed sql/sqlmode/no_stock.sql
	sqlNOStock string
	//go:embed sql/sqlmode/no_order.sql
	sqlNOOrder string
	//go:embed sql/sqlmode/no_new_order.sql
	sqlNONewOrder string
	//go:embed sql/sqlmode/no_order_line.sql
	sqlNOOrderLine string

	//go:embed sql/sqlmode/customers_by_name.sql
	sqlCustomersByName string

	//go:embed sql/sqlmode/pay_warehouse.sql
	sqlPayWarehouse string
	//go:embed sql/sqlmode/pay_district.sql
	sqlPayDistrict string
	//go:embed sql/sqlmode/pay_customer.sql
	sqlPayCustomer string
	//go:embed sql/sqlmode/pay_history.sql
	sqlPayHistory string

	//go:embed sql/sqlmode/os_customer.sql
	sqlOSCustomer string
	//go:embed sql/sqlmode/os_order.sql
	sqlOSOrder string
	//go:embed sql/sqlmode/os_lines.sql
	sqlOSLines string

	//go:embed sql/sqlmode/dl_lock.sql
	sqlDLLock string
	//go:embed sql/sqlmode/dl_new_order.sql
	sqlDLNewOrder string
	//go:embed sql/sqlmode/dl_order.sql
	sqlDLOrder string
	//go:embed sql/sqlmode/dl_order_lines.sql
	sqlDLOrderLines string
	//go:embed sql/sqlmode/dl_customer.sql
	sqlDLCustomer string

	//go:embed sql/sqlmode/stock_level.sql
	sqlStockLevel string
)

// The prepared statements of the sql mode: parameter types explicit for integers (0,
// for texts, lets the server infer the column's text type), and what each result
// column is (see statement.results).
var (
	noDistrict  = statement{name: "sb_no_district", sql: sqlNODistrict, params: []uint32{oidInt4, oidInt4}, results: "ii"}
	noWarehouse = statement{name: "sb_no_warehouse", sql: sqlNOWarehouse, params: []uint32{oidInt4}, results: "i"}
	noCustomer  = statement{name: "sb_no_customer", sql: sqlNOCustomer, params: []uint32{oidInt4, oidInt4, oidInt4}, results: "i--"}
	noItem      = statement{name: "sb_no_item", sql: sqlNOItem, params: []uint32{oidInt4}, results: "i-t"}
	noStock     = statement{name: "sb_no_stock", sql: sqlNOStock, params: []uint32{oidInt4, oidInt4, oidInt4, oidInt4, oidInt4}, results: "-tt"}
	noOrder     = statement{name: "sb_no_order", sql: sqlNOOrder, params: []uint32{oidInt4, oidInt4, oidInt4, oidInt4, oidInt4, oidInt4}}
	noNewOrder  = statement{name: "sb_no_new_order", sql: sqlNONewOrder, params: []uint32{oidInt4, oidInt4, oidInt4}}
	noOrderLine = statement{name: "sb_no_order_line", sql: sqlNOOrderLine,
		params: []uint32{oidInt4, oidInt4, oidInt4, oidInt4, oidInt4, oidInt4, oidInt4, oidInt8, 0}}

	customersByName = statement{name: "sb_customers_by_name", sql: sqlCustomersByName, params: []uint32{oidInt4, oidInt4, 0}, results: "i"}

	payWarehouse = statement{name: "sb_pay_warehouse", sql: sqlPayWarehouse, params: []uint32{oidInt4, oidInt8}, results: "t-----"}
	payDistrict  = statement{name: "sb_pay_district", sql: sqlPayDistrict, params: []uint32{oidInt4, oidInt4, oidInt8}, results: "t-----"}
	payCustomer  = statement{name: "sb_pay_customer", sql: sqlPayCustomer,
		params: []uint32{oidInt4, oidInt4, oidInt4, oidInt4, oidInt4, oidInt8}, results: "--------------"}
	payHistory = statement{name: "sb_pay_history", sql: sqlPayHistory,
		params: []uint32{oidInt4, oidInt4, oidInt4, oidInt4, oidInt4, oidInt8, oidText, oidText}}

	osCustomer = statement{name: "sb_os_customer", sql: sqlOSCustomer, params: []uint32{oidInt4, oidInt4, oidInt4}, results: "----"}
	osOrder    = statement{name: "sb_os_order", sql: sqlOSOrder, params: []uint32{oidInt4, oidInt4, oidInt4}, results: "i--"}
	osLines    = statement{name: "sb_os_lines", sql: sqlOSLines, params: []uint32{oidInt4, oidInt4, oidInt4}, results: "-----"}

	dlLock       = statement{name: "sb_dl_lock", sql: sqlDLLock, params: []uint32{oidInt4}, results: "-"}
	dlNewOrder   = statement{name: "sb_dl_new_order", sql: sqlDLNewOrder, params: []uint32{oidInt4, oidInt4}, results: "i"}
	dlOrder      = statement{name: "sb_dl_order", sql: sqlDLOrder, params: []uint32{oidInt4, oidInt4, oidInt4, oidInt4}, results: "i"}
	dlOrderLines = statement{name: "sb_dl_order_lines", sql: sqlDLOrderLines, params: []uint32{oidInt4, oidInt4, oidInt4}, results: "i"}
	dlCustomer   = statement{name: "sb_dl_customer", sql: sqlDLCustomer, params: []uint32{oidInt4, oidInt4, oidInt4, oidInt8}}

	stockLevel = statement{name: "sb_stock_level", sql: sqlStockLevel, params: []uint32{oidInt4, oidInt4, oidInt4}, results: "i"}

	// Transaction control. Order-Status reads its customer, order and lines in one
	// snapshot.
	begin         = statement{name: "sb_begin", sql: "BEGIN"}
	beginSnapshot = statement{name: "sb_begin_snapshot", sql: "BEGIN ISOLATION LEVEL REPEATABLE READ, READ ONLY"}
	commit        = statement{name: "sb_commit", sql: "COMMIT"}
	rollback      = statement{name: "sb_rollback", sql: "ROLLBACK"}

	sqlStatements = []*statement{&noDistrict, &noWarehouse, &noCustomer, &noItem, &noStock, &noOrder, &noNewOrder,
		&noOrderLine, &customersByName, &payWarehouse, &payDistrict, &payCustomer, &payHistory, &osCustomer, &osOrder,
		&osLines, &dlLock, &dlNewOrder, &dlOrder, &dlOrderLines, &dlCustomer, &stockLevel, &begin, &beginSnapshot,
		&commit, &rollback}
)

// sqlSession runs each transaction as client-side statements between BEGIN and COMMIT,
// batched (batch.go): the statements of a batch whose arguments are known go in one
// round trip. Money crosses the wire as integer cents (and taxes as 1/10000) both ways,
// so the client computes exactly without decoding numerics.
type sqlSession struct {
	conn *wireConn

	line     [tpcc.MaxOrderLines]sqlLine
	order    [tpcc.MaxOrderLines]int // New-Order lines in stock-lock order
	district [tpcc.DistrictsPerWarehouse]sqlDistrict

	// Results: the last transaction's outputs, kept for tests and debugging.
	c, oID               int32
	wTax, dTax, discount int64 // 1/10000
	total                int64 // New-Order's total in cents (2.4.2.2)
	ids                  []int32
	lines, count         int32
}

// sqlLine is one New-Order line's results.
type sqlLine struct {
	price        int64  // cents
	amount       int64  // cents
	dist         string // s_dist_XX, becomes ol_dist_info
	iData, sData string // i_data and s_data: the brand-generic (2.4.2.2)
	found        bool
}

// sqlDistrict is one Delivery district's results.
type sqlDistrict struct {
	oID, cID  int32
	cents     int64
	delivered bool
}

// newSQLModeSession connects with cfg and prepares the statements.
func newSQLModeSession(ctx context.Context, cfg *pgx.ConnConfig) (*sqlSession, error) {
	conn, err := dialWire(ctx, cfg, sqlStatements)
	if err != nil {
		return nil, err
	}
	return &sqlSession{conn: conn, ids: make([]int32, 0, 16)}, nil
}

// NewOrder implements engine.Session (2.4.2). First batch: BEGIN, the district, the
// warehouse, the customer, every line's item and every line's stock (in canonical
// order). The second inserts the order, its new_order row and its lines, and commits;
// or, when an item was unused (2.4.2.3: it finds no item row, and its stock update no
// row), inserts them all the same, less that line, and rolls back: a rolled-back
// New-Order does the same work as the others.
func (s *sqlSession) NewOrder(ctx context.Context, in *tpcc.NewOrderInput) (bool, error) {
	n := len(in.Lines)
	if n > len(s.line) {
		return false, fmt.Errorf("new-order with %d lines: at most %d", n, len(s.line))
	}
	w, d := in.WID, in.DID
	allLocal := 1
	for _, l := range in.Lines {
		if l.SupplyWID != w { // 2.4.2.2: o_all_local
			allLocal = 0
		}
	}
	order := in.LockOrder(s.order[:0])

	c := s.conn
	c.queue(&begin)
	c.queue(&noDistrict, num(w), num(d))
	c.queue(&noWarehouse, num(w))
	c.queue(&noCustomer, num(w), num(d), num(in.CID))
	for _, l := range in.Lines {
		c.queue(&noItem, num(l.ItemID))
	}
	for _, i := range order {
		l := &in.Lines[i]
		remote := 0
		if l.SupplyWID != w { // 2.4.2.2: s_remote_cnt
			remote = 1
		}
		c.queue(&noStock, num(l.SupplyWID), num(l.ItemID), num(l.Quantity), num(remote), num(d))
	}
	missing, err := s.readNewOrder(c.sendBatch(ctx), in, order)
	if err != nil {
		return false, s.abort(ctx, err)
	}

	c.queue(&noOrder, num(s.oID), num(d), num(w), num(in.CID), num(n), num(allLocal))
	c.queue(&noNewOrder, num(s.oID), num(d), num(w))
	for i, l := range in.Lines {
		if ln := &s.line[i]; ln.found {
			c.queue(&noOrderLine, num(s.oID), num(d), num(w), num(i+1), num(l.ItemID), num(l.SupplyWID),
				num(l.Quantity), num(ln.amount), str(ln.dist))
		}
	}
	if missing {
		c.queue(&rollback) // 2.4.2.3: everything rolls back, d_next_o_id included
	} else {
		c.queue(&commit)
	}
	if err := c.sendBatch(ctx).close(); err != nil {
		return false, s.abort(ctx, err)
	}
	if !missing {
		for i := range n { // 2.4.2.2: the brand-generic of each line, for the terminal
			in.Lines[i].BrandGeneric = tpcc.BrandGeneric(s.line[i].iData, s.line[i].sData)
		}
	}
	return missing, nil
}

// readNewOrder reads the first New-Order batch: it reports whether an item was unused
// and computes the lines' amounts and the order's total.
func (s *sqlSession) readNewOrder(r *reply, in *tpcc.NewOrderInput, order []int) (bool, error) {
	r.exec() // BEGIN
	if r.one(&noDistrict) {
		s.dTax, s.oID = r.int(0), int32(r.int(1))
	} else if r.err == nil {
		return false, s.noRow(r, "district (%d, %d)", in.WID, in.DID)
	}
	if r.one(&noWarehouse) {
		s.wTax = r.int(0)
	} else if r.err == nil {
		return false, s.noRow(r, "warehouse %d", in.WID)
	}
	if r.one(&noCustomer) {
		s.discount = r.int(0)
	} else if r.err == nil {
		return false, s.noRow(r, "customer (%d, %d, %d)", in.WID, in.DID, in.CID)
	}
	missing := false
	var sum int64
	for i, l := range in.Lines {
		ln := &s.line[i]
		ln.found = r.one(&noItem)
		if !ln.found { // 2.4.2.3: an unused item id
			missing = true
			continue
		}
		ln.price, ln.iData = r.int(0), r.text(2)
		ln.amount = ln.price * int64(l.Quantity) // 2.4.2.2: ol_amount = qty * i_price
		sum += ln.amount
	}
	for _, i := range order {
		ln := &s.line[i]
		if r.one(&noStock) {
			ln.sData, ln.dist = r.text(1), r.text(2)
		} else if ln.found && r.err == nil {
			l := &in.Lines[i]
			return false, s.noRow(r, "stock of item %d in warehouse %d", l.ItemID, l.SupplyWID)
		}
		// The unused item has no stock either.
	}
	if err := r.close(); err != nil {
		return false, err
	}
	// 2.4.2.2: total = sum(ol_amount) * (1 - c_discount) * (1 + w_tax + d_tax), in
	// cents, rounded half up like numeric's round().
	const scale = 10000 * 10000
	s.total = (sum*(10000-s.discount)*(10000+s.wTax+s.dTax) + scale/2) / scale
	return missing, nil
}

// noRow ends a batch in which a row the transaction needs is missing: the error says
// which (a client error: the connection stays usable).
func (s *sqlSession) noRow(r *reply, format string, a ...any) error {
	if err := r.close(); err != nil {
		return err
	}
	return fmt.Errorf("no row: "+format, a...)
}

// Payment implements engine.Session (2.5.2). First batch: BEGIN, the warehouse, the
// district, and the customer (by id) or the customers of that name. Second: the
// customer by name, the history row, COMMIT.
func (s *sqlSession) Payment(ctx context.Context, in *tpcc.PaymentInput) error {
	c := s.conn
	s.c = int32(in.CID)
	c.queue(&begin)
	c.queue(&payWarehouse, num(in.WID), num(in.Amount))
	c.queue(&payDistrict, num(in.WID), num(in.DID), num(in.Amount))
	if in.ByName {
		c.queue(&customersByName, num(in.CWID), num(in.CDID), str(in.CLast))
	} else {
		c.queue(&payCustomer, num(in.CWID), num(in.CDID), num(in.CID), num(in.DID), num(in.WID), num(in.Amount))
	}
	wName, dName, err := s.readPayment(c.sendBatch(ctx), in)
	if err != nil {
		return s.abort(ctx, err)
	}

	if in.ByName {
		c.queue(&payCustomer, num(in.CWID), num(in.CDID), num(s.c), num(in.DID), num(in.WID), num(in.Amount))
	}
	c.queue(&payHistory, num(s.c), num(in.CDID), num(in.CWID), num(in.DID), num(in.WID), num(in.Amount),
		str(wName), str(dName))
	c.queue(&commit)
	r := c.sendBatch(ctx)
	if in.ByName && !r.one(&payCustomer) && r.err == nil {
		err = s.noRow(r, "customer (%d, %d, %d)", in.CWID, in.CDID, s.c)
	} else {
		err = r.close()
	}
	if err != nil {
		return s.abort(ctx, err)
	}
	return nil
}

// readPayment reads the first Payment batch and returns the warehouse's and the
// district's names (2.5.2.2: they make h_data; the addresses are read for display).
func (s *sqlSession) readPayment(r *reply, in *tpcc.PaymentInput) (wName, dName string, err error) {
	r.exec() // BEGIN
	if r.one(&payWarehouse) {
		wName = r.text(0)
	} else if r.err == nil {
		return "", "", s.noRow(r, "warehouse %d", in.WID)
	}
	if r.one(&payDistrict) {
		dName = r.text(0)
	} else if r.err == nil {
		return "", "", s.noRow(r, "district (%d, %d)", in.WID, in.DID)
	}
	if in.ByName {
		if err := s.middleCustomer(r, in.CWID, in.CDID, in.CLast); err != nil {
			return "", "", err
		}
	} else if !r.one(&payCustomer) && r.err == nil { // its name, address, credit and new balance, for display
		return "", "", s.noRow(r, "customer (%d, %d, %d)", in.CWID, in.CDID, in.CID)
	}
	return wName, dName, r.close()
}

// middleCustomer reads the customers of one last name, ordered by c_first, and sets
// s.c to the id at position ceil(n/2) (2.5.2.2, 2.6.2.2).
func (s *sqlSession) middleCustomer(r *reply, w, d int, last string) error {
	s.ids = s.ids[:0]
	for r.next(&customersByName) {
		s.ids = append(s.ids, int32(r.int(0)))
	}
	if r.err != nil {
		return r.close()
	}
	if len(s.ids) == 0 {
		return s.noRow(r, "customer named %s in district (%d, %d)", last, w, d)
	}
	s.c = s.ids[(len(s.ids)-1)/2]
	return nil
}

// OrderStatus implements engine.Session (2.6.2): in one repeatable-read, read-only
// transaction, the customer (by name: a first batch finds its id), its latest order
// and that order's lines.
func (s *sqlSession) OrderStatus(ctx context.Context, in *tpcc.OrderStatusInput) error {
	c := s.conn
	s.c = int32(in.CID)
	c.queue(&beginSnapshot)
	if in.ByName {
		c.queue(&customersByName, num(in.WID), num(in.DID), str(in.CLast))
		r := c.sendBatch(ctx)
		r.exec()
		err := s.middleCustomer(r, in.WID, in.DID, in.CLast)
		if err == nil {
			err = r.close()
		}
		if err != nil {
			return s.abort(ctx, err)
		}
	}
	c.queue(&osCustomer, num(in.WID), num(in.DID), num(s.c))
	c.queue(&osOrder, num(in.WID), num(in.DID), num(s.c))
	c.queue(&osLines, num(in.WID), num(in.DID), num(s.c))
	c.queue(&commit)
	r := c.sendBatch(ctx)
	if !in.ByName {
		r.exec() // BEGIN
	}
	// 2.6.2.2: balance and name, for display.
	if !r.one(&osCustomer) && r.err == nil {
		return s.abort(ctx, s.noRow(r, "customer (%d, %d, %d)", in.WID, in.DID, s.c))
	}
	s.oID = 0
	if r.one(&osOrder) {
		s.oID = int32(r.int(0))
	}
	s.lines = 0
	for r.next(&osLines) { // item, supply warehouse, quantity, amount, delivery date: for display
		s.lines++
	}
	if err := r.close(); err != nil {
		return s.abort(ctx, err)
	}
	return nil
}

// Delivery implements engine.Session (2.7.4), the 10 districts in one transaction.
// First batch: BEGIN and each district's oldest new_order row, deleted. Second: the
// delivered orders' carrier and customer, their lines dated and summed. Third: the
// customers' balances, COMMIT. Returns the districts skipped for want of an order.
func (s *sqlSession) Delivery(ctx context.Context, in *tpcc.DeliveryInput) (int, error) {
	c := s.conn
	w := in.WID
	c.queue(&begin)
	c.queue(&dlLock, num(w))
	for d := range s.district {
		c.queue(&dlNewOrder, num(w), num(d+1))
	}
	r := c.sendBatch(ctx)
	r.exec() // BEGIN
	r.exec() // the warehouse's Delivery lock
	skipped := 0
	for i := range s.district {
		t := &s.district[i]
		t.delivered = r.one(&dlNewOrder)
		if t.delivered {
			t.oID = int32(r.int(0))
		} else { // 2.7.4.2: no order to deliver: skipped
			skipped++
		}
	}
	if err := r.close(); err != nil {
		return 0, s.abort(ctx, err)
	}

	if skipped < len(s.district) {
		for i := range s.district {
			if t := &s.district[i]; t.delivered {
				c.queue(&dlOrder, num(w), num(i+1), num(t.oID), num(in.CarrierID))
				c.queue(&dlOrderLines, num(w), num(i+1), num(t.oID))
			}
		}
		if err := s.readDelivered(c.sendBatch(ctx), w); err != nil {
			return 0, s.abort(ctx, err)
		}
	}

	for i := range s.district {
		if t := &s.district[i]; t.delivered {
			c.queue(&dlCustomer, num(w), num(i+1), num(t.cID), num(t.cents))
		}
	}
	c.queue(&commit)
	if err := c.sendBatch(ctx).close(); err != nil {
		return 0, s.abort(ctx, err)
	}
	return skipped, nil
}

// readDelivered reads the second Delivery batch: each delivered order's customer and
// the sum of its lines' amounts.
func (s *sqlSession) readDelivered(r *reply, w int) error {
	for i := range s.district {
		t := &s.district[i]
		if !t.delivered {
			continue
		}
		if !r.one(&dlOrder) {
			if r.err != nil {
				return r.close()
			}
			return s.noRow(r, "order %d of district (%d, %d)", t.oID, w, i+1)
		}
		t.cID = int32(r.int(0))
		t.cents = 0
		for r.next(&dlOrderLines) {
			t.cents += r.int(0) // 2.7.4.2: sum(ol_amount)
		}
	}
	return r.close()
}

// StockLevel implements engine.Session (2.8.2): one statement, no explicit transaction
// (isolation level 1 suffices, 2.8.2.1).
func (s *sqlSession) StockLevel(ctx context.Context, in *tpcc.StockLevelInput) (int, error) {
	c := s.conn
	c.queue(&stockLevel, num(in.WID), num(in.DID), num(in.Threshold))
	r := c.sendBatch(ctx)
	if r.one(&stockLevel) {
		s.count = int32(r.int(0))
	} else if r.err == nil {
		return 0, s.abort(ctx, s.noRow(r, "stock level of district (%d, %d)", in.WID, in.DID))
	}
	if err := r.close(); err != nil {
		return 0, s.abort(ctx, err)
	}
	return int(s.count), nil
}

// abort ends the transaction a failed batch left open, so the session stays usable,
// and returns the batch's error (Classify reads its SQLSTATE). When the connection is
// gone the error wraps errConnLost: it ended (an I/O error, a FATAL error, a context
// that interrupted a batch), or the rollback failed and abort ended it (the session's
// state is then unknown). A context already done before a batch was sent leaves the
// connection open, and the error is ctx's alone.
func (s *sqlSession) abort(ctx context.Context, err error) error {
	c := s.conn
	if c.broken == nil && c.txStatus != 'I' {
		rctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 10*time.Second)
		c.queue(&rollback)
		rerr := c.sendBatch(rctx).close()
		// Stop watching rctx before canceling it: its cancellation would interrupt
		// the connection's next I/O.
		c.watch(context.Background())
		cancel()
		if rerr != nil {
			err = errors.Join(err, fmt.Errorf("rollback: %w", rerr))
			if c.broken == nil {
				c.end(fmt.Errorf("%w: rollback failed: %w", errConnLost, rerr))
			}
		}
	}
	if c.broken != nil && !errors.Is(err, errConnLost) {
		return fmt.Errorf("%w: %w", errConnLost, err)
	}
	return err
}

// Close implements engine.Session.
func (s *sqlSession) Close() { s.conn.Close() }
