package postgres

import (
	"context"
	_ "embed"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgtype"

	"github.com/storbench/storbench/internal/tpcc"
)

// The calls of the procedures mode (sql/procedures/): each is one prepared statement,
// one round trip and one transaction (no BEGIN: the SELECT is its own transaction, so an
// error, or New-Order's SB001, rolls back everything the function did).
var (
	//go:embed sql/procedures/new_order.sql
	callNewOrder string
	//go:embed sql/procedures/payment.sql
	callPayment string
	//go:embed sql/procedures/order_status.sql
	callOrderStatus string
	//go:embed sql/procedures/delivery.sql
	callDelivery string
	//go:embed sql/procedures/stock_level.sql
	callStockLevel string
)

// The statements, with the parameter types of the functions in sql/functions.sql.
const (
	oidInt4  = pgtype.Int4OID
	oidInt4s = pgtype.Int4ArrayOID
	oidInt8  = pgtype.Int8OID
	oidBool  = pgtype.BoolOID
	oidText  = pgtype.TextOID
)

var (
	newOrderStmt = statement{name: "storbench_new_order", sql: callNewOrder, results: "iii",
		params: []uint32{oidInt4, oidInt4, oidInt4, oidInt4s, oidInt4s, oidInt4s}}
	paymentStmt = statement{name: "storbench_payment", sql: callPayment, results: "i",
		params: []uint32{oidInt4, oidInt4, oidInt4, oidInt4, oidInt4, oidBool, oidText, oidInt8}}
	orderStatusStmt = statement{name: "storbench_order_status", sql: callOrderStatus, results: "iii",
		params: []uint32{oidInt4, oidInt4, oidInt4, oidBool, oidText}}
	deliveryStmt = statement{name: "storbench_delivery", sql: callDelivery, results: "i",
		params: []uint32{oidInt4, oidInt4}}
	stockLevelStmt = statement{name: "storbench_stock_level", sql: callStockLevel, results: "i",
		params: []uint32{oidInt4, oidInt4, oidInt4}}

	procStatements = []*statement{&newOrderStmt, &paymentStmt, &orderStatusStmt, &deliveryStmt, &stockLevelStmt}
)

// procSession runs each transaction as one call of its storbench_ function over its own
// wire connection (wire.go). A call allocates nothing.
type procSession struct {
	conn *wireConn

	// New-Order's lines as the function's three arrays, reused.
	items, supply, qty []int32

	// Results: the last transaction's outputs, kept for tests and debugging.
	orderID, customerID, lines, count int32
	total                             int64 // New-Order's total in cents (2.4.2.2)
}

// newProcSession connects with cfg and prepares the five calls.
func newProcSession(ctx context.Context, cfg *pgx.ConnConfig) (*procSession, error) {
	conn, err := dialWire(ctx, cfg, procStatements)
	if err != nil {
		return nil, err
	}
	return &procSession{
		conn:   conn,
		items:  make([]int32, 0, tpcc.MaxOrderLines),
		supply: make([]int32, 0, tpcc.MaxOrderLines),
		qty:    make([]int32, 0, tpcc.MaxOrderLines),
	}, nil
}

// NewOrder implements engine.Session (2.4.2). The lines go as three arrays in input
// order; the function locks the stock rows in canonical order itself.
func (s *procSession) NewOrder(ctx context.Context, in *tpcc.NewOrderInput) (bool, error) {
	s.items, s.supply, s.qty = s.items[:0], s.supply[:0], s.qty[:0]
	for _, l := range in.Lines {
		s.items = append(s.items, int32(l.ItemID))
		s.supply = append(s.supply, int32(l.SupplyWID))
		s.qty = append(s.qty, int32(l.Quantity))
	}
	b := s.conn.bind(&newOrderStmt)
	b = appendInt4(b, int32(in.WID))
	b = appendInt4(b, int32(in.DID))
	b = appendInt4(b, int32(in.CID))
	b = appendInt4Array(b, s.items)
	b = appendInt4Array(b, s.supply)
	b = appendInt4Array(b, s.qty)
	if err := s.conn.call(ctx, &newOrderStmt, b); err != nil {
		// 2.4.2.3: the unused item rolled the call back; that is the expected outcome.
		if isPgCode(err, errUnusedItem) {
			return true, nil
		}
		return false, err
	}
	s.orderID, s.total = int32(s.conn.row[0]), s.conn.row[1]
	in.SetBrands(s.conn.row[2])
	return false, nil
}

// Payment implements engine.Session (2.5.2).
func (s *procSession) Payment(ctx context.Context, in *tpcc.PaymentInput) error {
	b := s.conn.bind(&paymentStmt)
	b = appendInt4(b, int32(in.WID))
	b = appendInt4(b, int32(in.DID))
	b = appendInt4(b, int32(in.CWID))
	b = appendInt4(b, int32(in.CDID))
	b = appendInt4(b, int32(in.CID))
	b = appendBool(b, in.ByName)
	b = appendText(b, in.CLast)
	b = appendInt8(b, in.Amount)
	if err := s.conn.call(ctx, &paymentStmt, b); err != nil {
		return err
	}
	s.customerID = int32(s.conn.row[0])
	return nil
}

// OrderStatus implements engine.Session (2.6.2).
func (s *procSession) OrderStatus(ctx context.Context, in *tpcc.OrderStatusInput) error {
	b := s.conn.bind(&orderStatusStmt)
	b = appendInt4(b, int32(in.WID))
	b = appendInt4(b, int32(in.DID))
	b = appendInt4(b, int32(in.CID))
	b = appendBool(b, in.ByName)
	b = appendText(b, in.CLast)
	if err := s.conn.call(ctx, &orderStatusStmt, b); err != nil {
		return err
	}
	s.customerID, s.orderID, s.lines = int32(s.conn.row[0]), int32(s.conn.row[1]), int32(s.conn.row[2])
	return nil
}

// Delivery implements engine.Session (2.7.4).
func (s *procSession) Delivery(ctx context.Context, in *tpcc.DeliveryInput) (int, error) {
	b := s.conn.bind(&deliveryStmt)
	b = appendInt4(b, int32(in.WID))
	b = appendInt4(b, int32(in.CarrierID))
	if err := s.conn.call(ctx, &deliveryStmt, b); err != nil {
		return 0, err
	}
	s.count = int32(s.conn.row[0])
	return int(s.count), nil
}

// StockLevel implements engine.Session (2.8.2).
func (s *procSession) StockLevel(ctx context.Context, in *tpcc.StockLevelInput) (int, error) {
	b := s.conn.bind(&stockLevelStmt)
	b = appendInt4(b, int32(in.WID))
	b = appendInt4(b, int32(in.DID))
	b = appendInt4(b, int32(in.Threshold))
	if err := s.conn.call(ctx, &stockLevelStmt, b); err != nil {
		return 0, err
	}
	s.count = int32(s.conn.row[0])
	return int(s.count), nil
}

// Close implements engine.Session.
func (s *procSession) Close() { s.conn.Close() }
