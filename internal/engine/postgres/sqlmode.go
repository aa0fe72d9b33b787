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

// Transaction control. Order-Status reads its customer, order and lines in one snapshot.
const (
	sqlBegin         = "BEGIN"
	sqlBeginSnapshot = "BEGIN ISOLATION LEVEL REPEATABLE READ, READ ONLY"
	sqlCommit        = "COMMIT"
	sqlRollback      = "ROLLBACK"
)

// sqlSession runs each transaction as client-side statements between BEGIN and COMMIT,
// batched: the statements of a batch whose arguments are known go in one round trip.
// Money crosses the wire as integer cents (and taxes as 1/10000) both ways, so the
// client computes exactly without decoding numerics.
type sqlSession struct {
	conn *pgx.Conn

	// Arguments, reached through the slices below (see int4Arg).
	w, d, c, cw, cd, carrier, threshold int4Arg
	oID, olCnt, allLocal                int4Arg
	cLast, wName, dName                 textArg
	cents                               int8Arg
	line                                [tpcc.MaxOrderLines]sqlLine
	order                               [tpcc.MaxOrderLines]int // New-Order lines in stock-lock order
	district                            [tpcc.DistrictsPerWarehouse]sqlDistrict

	wArgs, wdArgs, wdcArgs, orderArgs, newOrderArgs []any
	payWarehouseArgs, payDistrictArgs, byNameArgs   []any
	payCustomerArgs, payHistoryArgs, stockLevelArgs []any
	skip                                            []any // nil destinations: values read, not decoded
	dst                                             []any // scratch destinations

	// Results: the last transaction's outputs, kept for tests and debugging.
	wTax, dTax, discount int32 // 1/10000
	total                int64 // New-Order's total in cents (2.4.2.2)
	ids                  []int32
	id, lines, count     int32
	amount               int64 // an order line's amount in cents
}

// sqlLine is one New-Order line's arguments and results.
type sqlLine struct {
	number, item, supply, qty, remote int4Arg
	price                             int32 // cents
	amount                            int8Arg
	dist                              textArg // s_dist_XX, becomes ol_dist_info
	iData, sData                      string  // i_data and s_data: the brand-generic (2.4.2.2)
	found                             bool
	itemArgs, stockArgs, lineArgs     []any
}

// sqlDistrict is one Delivery district's arguments and results.
type sqlDistrict struct {
	d, oID, cID                       int4Arg
	cents                             int8Arg
	delivered                         bool
	newOrderArgs, orderArgs, lineArgs []any
	customerArgs                      []any
}

func newSQLModeSession(conn *pgx.Conn) *sqlSession {
	s := &sqlSession{conn: conn, ids: make([]int32, 0, 16), skip: make([]any, 16), dst: make([]any, 0, 16)}
	s.wArgs = args(&s.w)
	s.wdArgs = args(&s.w, &s.d)
	s.wdcArgs = args(&s.w, &s.d, &s.c)
	s.orderArgs = args(&s.oID, &s.d, &s.w, &s.c, &s.olCnt, &s.allLocal)
	s.newOrderArgs = args(&s.oID, &s.d, &s.w)
	for i := range s.line {
		l := &s.line[i]
		l.itemArgs = args(&l.item)
		l.stockArgs = args(&l.supply, &l.item, &l.qty, &l.remote, &s.d)
		l.lineArgs = args(&s.oID, &s.d, &s.w, &l.number, &l.item, &l.supply, &l.qty, &l.amount, &l.dist)
	}
	s.payWarehouseArgs = args(&s.w, &s.cents)
	s.payDistrictArgs = args(&s.w, &s.d, &s.cents)
	s.byNameArgs = args(&s.cw, &s.cd, &s.cLast)
	s.payCustomerArgs = args(&s.cw, &s.cd, &s.c, &s.d, &s.w, &s.cents)
	s.payHistoryArgs = args(&s.c, &s.cd, &s.cw, &s.d, &s.w, &s.cents, &s.wName, &s.dName)
	for i := range s.district {
		t := &s.district[i]
		t.d = int4Arg(i + 1)
		t.newOrderArgs = args(&s.w, &t.d)
		t.orderArgs = args(&s.w, &t.d, &t.oID, &s.carrier)
		t.lineArgs = args(&s.w, &t.d, &t.oID)
		t.customerArgs = args(&s.w, &t.d, &t.cID, &t.cents)
	}
	s.stockLevelArgs = args(&s.w, &s.d, &s.threshold)
	return s
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
	s.w, s.d, s.c = int4Arg(in.WID), int4Arg(in.DID), int4Arg(in.CID)
	s.olCnt, s.allLocal = int4Arg(n), 1
	for i, l := range in.Lines {
		ln := &s.line[i]
		ln.number, ln.item, ln.supply, ln.qty = int4Arg(i+1), int4Arg(l.ItemID), int4Arg(l.SupplyWID), int4Arg(l.Quantity)
		ln.remote = 0
		if l.SupplyWID != in.WID { // 2.4.2.2: s_remote_cnt, o_all_local
			ln.remote, s.allLocal = 1, 0
		}
	}
	order := in.LockOrder(s.order[:0])

	var b pgx.Batch
	b.Queue(sqlBegin)
	b.Queue(sqlNODistrict, s.wdArgs...)
	b.Queue(sqlNOWarehouse, s.wArgs...)
	b.Queue(sqlNOCustomer, s.wdcArgs...)
	for i := range n {
		b.Queue(sqlNOItem, s.line[i].itemArgs...)
	}
	for _, i := range order {
		b.Queue(sqlNOStock, s.line[i].stockArgs...)
	}
	missing, err := s.readNewOrder(s.conn.SendBatch(ctx, &b), n, order)
	if err != nil {
		return false, s.abort(ctx, err)
	}

	b = pgx.Batch{}
	b.Queue(sqlNOOrder, s.orderArgs...)
	b.Queue(sqlNONewOrder, s.newOrderArgs...)
	for i := range n {
		if s.line[i].found {
			b.Queue(sqlNOOrderLine, s.line[i].lineArgs...)
		}
	}
	if missing {
		b.Queue(sqlRollback) // 2.4.2.3: everything rolls back, d_next_o_id included
	} else {
		b.Queue(sqlCommit)
	}
	if err := s.conn.SendBatch(ctx, &b).Close(); err != nil {
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
func (s *sqlSession) readNewOrder(br pgx.BatchResults, n int, order []int) (missing bool, err error) {
	defer func() {
		if cerr := br.Close(); err == nil {
			err = cerr
		}
	}()
	if _, err = br.Exec(); err != nil {
		return false, err
	}
	if err = br.QueryRow().Scan(&s.dTax, &s.oID); err != nil {
		return false, fmt.Errorf("district: %w", err)
	}
	if err = br.QueryRow().Scan(&s.wTax); err != nil {
		return false, fmt.Errorf("warehouse: %w", err)
	}
	if err = br.QueryRow().Scan(append(s.dst[:0], &s.discount, nil, nil)...); err != nil {
		return false, fmt.Errorf("customer: %w", err)
	}
	var sum int64
	for i := range n {
		ln := &s.line[i]
		err = br.QueryRow().Scan(append(s.dst[:0], &ln.price, nil, &ln.iData)...)
		ln.found = err == nil
		if errors.Is(err, pgx.ErrNoRows) { // 2.4.2.3: an unused item id
			missing, err = true, nil
			continue
		}
		if err != nil {
			return false, err
		}
		ln.amount = int8Arg(int64(ln.price) * int64(ln.qty)) // 2.4.2.2: ol_amount = qty * i_price
		sum += int64(ln.amount)
	}
	for _, i := range order {
		ln := &s.line[i]
		err = br.QueryRow().Scan(append(s.dst[:0], nil, &ln.sData, &ln.dist)...)
		if errors.Is(err, pgx.ErrNoRows) {
			if !ln.found {
				err = nil // the unused item has no stock either
				continue
			}
			return false, fmt.Errorf("stock of item %d in warehouse %d is missing", ln.item, ln.supply)
		}
		if err != nil {
			return false, err
		}
	}
	// 2.4.2.2: total = sum(ol_amount) * (1 - c_discount) * (1 + w_tax + d_tax), in
	// cents, rounded half up like numeric's round().
	const scale = 10000 * 10000
	s.total = (sum*int64(10000-s.discount)*int64(10000+s.wTax+s.dTax) + scale/2) / scale
	return missing, nil
}

// Payment implements engine.Session (2.5.2). First batch: BEGIN, the warehouse, the
// district, and the customer (by id) or the customers of that name. Second: the
// customer by name, the history row, COMMIT.
func (s *sqlSession) Payment(ctx context.Context, in *tpcc.PaymentInput) error {
	s.w, s.d, s.cw, s.cd = int4Arg(in.WID), int4Arg(in.DID), int4Arg(in.CWID), int4Arg(in.CDID)
	s.c, s.cLast, s.cents = int4Arg(in.CID), textArg(in.CLast), int8Arg(in.Amount)

	var b pgx.Batch
	b.Queue(sqlBegin)
	b.Queue(sqlPayWarehouse, s.payWarehouseArgs...)
	b.Queue(sqlPayDistrict, s.payDistrictArgs...)
	if in.ByName {
		b.Queue(sqlCustomersByName, s.byNameArgs...)
	} else {
		b.Queue(sqlPayCustomer, s.payCustomerArgs...)
	}
	if err := s.readPayment(s.conn.SendBatch(ctx, &b), in.ByName); err != nil {
		return s.abort(ctx, err)
	}

	b = pgx.Batch{}
	if in.ByName {
		b.Queue(sqlPayCustomer, s.payCustomerArgs...)
	}
	b.Queue(sqlPayHistory, s.payHistoryArgs...)
	b.Queue(sqlCommit)
	br := s.conn.SendBatch(ctx, &b)
	var err error
	if in.ByName {
		err = s.readPaidCustomer(br)
	}
	if cerr := br.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return s.abort(ctx, err)
	}
	return nil
}

func (s *sqlSession) readPayment(br pgx.BatchResults, byName bool) (err error) {
	defer func() {
		if cerr := br.Close(); err == nil {
			err = cerr
		}
	}()
	if _, err = br.Exec(); err != nil {
		return err
	}
	// 2.5.2.2: w_name and d_name make h_data; the addresses are read for display.
	if err = br.QueryRow().Scan(append(s.dst[:0], &s.wName, nil, nil, nil, nil, nil)...); err != nil {
		return fmt.Errorf("warehouse: %w", err)
	}
	if err = br.QueryRow().Scan(append(s.dst[:0], &s.dName, nil, nil, nil, nil, nil)...); err != nil {
		return fmt.Errorf("district: %w", err)
	}
	if byName {
		id, err := s.middleCustomer(br)
		if err != nil {
			return err
		}
		s.c = int4Arg(id)
		return nil
	}
	return s.readPaidCustomer(br)
}

// readPaidCustomer reads the paid customer's row (2.5.2.2: its name, address, credit
// and new balance, for display).
func (s *sqlSession) readPaidCustomer(br pgx.BatchResults) error {
	if err := br.QueryRow().Scan(s.skip[:14]...); err != nil {
		return fmt.Errorf("customer %d: %w", s.c, err)
	}
	return nil
}

// middleCustomer reads the customers of one last name, ordered by c_first, and returns
// the id at position ceil(n/2) (2.5.2.2, 2.6.2.2).
func (s *sqlSession) middleCustomer(br pgx.BatchResults) (int32, error) {
	rows, err := br.Query()
	if err != nil {
		return 0, err
	}
	s.ids = s.ids[:0]
	for rows.Next() {
		if err := rows.Scan(&s.id); err != nil {
			rows.Close()
			return 0, err
		}
		s.ids = append(s.ids, s.id)
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return 0, err
	}
	if len(s.ids) == 0 {
		return 0, fmt.Errorf("no customer named %s in district (%d, %d)", s.cLast, s.cw, s.cd)
	}
	return s.ids[(len(s.ids)-1)/2], nil
}

// OrderStatus implements engine.Session (2.6.2): in one repeatable-read, read-only
// transaction, the customer (by name: a first batch finds its id), its latest order
// and that order's lines.
func (s *sqlSession) OrderStatus(ctx context.Context, in *tpcc.OrderStatusInput) error {
	s.w, s.d, s.c = int4Arg(in.WID), int4Arg(in.DID), int4Arg(in.CID)
	s.cw, s.cd, s.cLast = s.w, s.d, textArg(in.CLast)

	var b pgx.Batch
	b.Queue(sqlBeginSnapshot)
	if in.ByName {
		b.Queue(sqlCustomersByName, s.byNameArgs...)
		br := s.conn.SendBatch(ctx, &b)
		_, err := br.Exec()
		var id int32
		if err == nil {
			id, err = s.middleCustomer(br)
		}
		if cerr := br.Close(); err == nil {
			err = cerr
		}
		if err != nil {
			return s.abort(ctx, err)
		}
		s.c = int4Arg(id)
		b = pgx.Batch{}
	}
	b.Queue(sqlOSCustomer, s.wdcArgs...)
	b.Queue(sqlOSOrder, s.wdcArgs...)
	b.Queue(sqlOSLines, s.wdcArgs...)
	b.Queue(sqlCommit)
	if err := s.readOrderStatus(s.conn.SendBatch(ctx, &b), !in.ByName); err != nil {
		return s.abort(ctx, err)
	}
	return nil
}

func (s *sqlSession) readOrderStatus(br pgx.BatchResults, begin bool) (err error) {
	defer func() {
		if cerr := br.Close(); err == nil {
			err = cerr
		}
	}()
	if begin {
		if _, err = br.Exec(); err != nil {
			return err
		}
	}
	// 2.6.2.2: balance and name, for display.
	if err = br.QueryRow().Scan(s.skip[:4]...); err != nil {
		return fmt.Errorf("customer %d: %w", s.c, err)
	}
	s.oID = 0
	err = br.QueryRow().Scan(append(s.dst[:0], &s.oID, nil, nil)...)
	if err != nil && !errors.Is(err, pgx.ErrNoRows) {
		return err
	}
	rows, err := br.Query()
	if err != nil {
		return err
	}
	s.lines = 0
	for rows.Next() { // item, supply warehouse, quantity, amount, delivery date: for display
		s.lines++
	}
	rows.Close()
	return rows.Err()
}

// Delivery implements engine.Session (2.7.4), the 10 districts in one transaction.
// First batch: BEGIN and each district's oldest new_order row, deleted. Second: the
// delivered orders' carrier and customer, their lines dated and summed. Third: the
// customers' balances, COMMIT. Returns the districts skipped for want of an order.
func (s *sqlSession) Delivery(ctx context.Context, in *tpcc.DeliveryInput) (int, error) {
	s.w, s.carrier = int4Arg(in.WID), int4Arg(in.CarrierID)

	var b pgx.Batch
	b.Queue(sqlBegin)
	b.Queue(sqlDLLock, s.wArgs...)
	for i := range s.district {
		b.Queue(sqlDLNewOrder, s.district[i].newOrderArgs...)
	}
	skipped, err := s.readOldest(s.conn.SendBatch(ctx, &b))
	if err != nil {
		return 0, s.abort(ctx, err)
	}

	if skipped < len(s.district) {
		b = pgx.Batch{}
		for i := range s.district {
			if t := &s.district[i]; t.delivered {
				b.Queue(sqlDLOrder, t.orderArgs...)
				b.Queue(sqlDLOrderLines, t.lineArgs...)
			}
		}
		if err := s.readDelivered(s.conn.SendBatch(ctx, &b)); err != nil {
			return 0, s.abort(ctx, err)
		}
	}

	b = pgx.Batch{}
	for i := range s.district {
		if t := &s.district[i]; t.delivered {
			b.Queue(sqlDLCustomer, t.customerArgs...)
		}
	}
	b.Queue(sqlCommit)
	if err := s.conn.SendBatch(ctx, &b).Close(); err != nil {
		return 0, s.abort(ctx, err)
	}
	return skipped, nil
}

func (s *sqlSession) readOldest(br pgx.BatchResults) (skipped int, err error) {
	defer func() {
		if cerr := br.Close(); err == nil {
			err = cerr
		}
	}()
	for range 2 { // BEGIN, the warehouse's Delivery lock
		if _, err = br.Exec(); err != nil {
			return 0, err
		}
	}
	for i := range s.district {
		t := &s.district[i]
		err = br.QueryRow().Scan(&t.oID)
		t.delivered = err == nil
		if errors.Is(err, pgx.ErrNoRows) { // 2.7.4.2: no order to deliver: skipped
			skipped++
			err = nil
			continue
		}
		if err != nil {
			return 0, err
		}
	}
	return skipped, nil
}

func (s *sqlSession) readDelivered(br pgx.BatchResults) (err error) {
	defer func() {
		if cerr := br.Close(); err == nil {
			err = cerr
		}
	}()
	for i := range s.district {
		t := &s.district[i]
		if !t.delivered {
			continue
		}
		if err = br.QueryRow().Scan(&t.cID); err != nil {
			return fmt.Errorf("order %d of district (%d, %d): %w", t.oID, s.w, t.d, err)
		}
		rows, err := br.Query()
		if err != nil {
			return err
		}
		t.cents = 0
		for rows.Next() {
			if err := rows.Scan(&s.amount); err != nil {
				rows.Close()
				return err
			}
			t.cents += int8Arg(s.amount) // 2.7.4.2: sum(ol_amount)
		}
		rows.Close()
		if err := rows.Err(); err != nil {
			return err
		}
	}
	return nil
}

// StockLevel implements engine.Session (2.8.2): one statement, no explicit transaction
// (isolation level 1 suffices, 2.8.2.1).
func (s *sqlSession) StockLevel(ctx context.Context, in *tpcc.StockLevelInput) (int, error) {
	s.w, s.d, s.threshold = int4Arg(in.WID), int4Arg(in.DID), int4Arg(in.Threshold)
	if err := s.conn.QueryRow(ctx, sqlStockLevel, s.stockLevelArgs...).Scan(&s.count); err != nil {
		return 0, s.abort(ctx, err)
	}
	return int(s.count), nil
}

// abort ends the transaction a failed statement left open, so the session stays usable,
// and returns the statement's error (Classify reads its SQLSTATE). When the connection
// is gone the error wraps errConnLost: pgx closed the connection (an I/O error, a
// FATAL error, a context that interrupted a statement), or the rollback failed and
// abort closed it (the session's state is then unknown). A context already done before
// a statement started leaves the connection open, and the error is ctx's alone.
func (s *sqlSession) abort(ctx context.Context, err error) error {
	if !s.conn.IsClosed() && s.conn.PgConn().TxStatus() != 'I' {
		rctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 10*time.Second)
		defer cancel()
		if _, rerr := s.conn.Exec(rctx, sqlRollback); rerr != nil {
			err = errors.Join(err, fmt.Errorf("rollback: %w", rerr))
			s.conn.Close(rctx)
		}
	}
	if s.conn.IsClosed() {
		return fmt.Errorf("%w: %w", errConnLost, err)
	}
	return err
}

// Close implements engine.Session.
func (s *sqlSession) Close() { s.conn.Close(context.Background()) }
