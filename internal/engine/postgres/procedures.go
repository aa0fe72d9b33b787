package postgres

import (
	"context"
	_ "embed"

	"github.com/jackc/pgx/v5"

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

// procSession runs each transaction as one call of its storbench_ function. Arguments
// and results are session fields reached through argument and destination slices built
// once (see int4Arg), so a call allocates nothing of its own.
type procSession struct {
	conn *pgx.Conn

	// Arguments.
	w, d, c, cw, cd, carrier, threshold int4Arg
	byName                              boolArg
	cLast                               textArg
	cents                               int8Arg
	items, supply, qty                  int4Array

	newOrderArgs, paymentArgs, orderStatusArgs, deliveryArgs, stockLevelArgs []any

	// Results: the last transaction's outputs, kept for tests and debugging.
	orderID, customerID, lines, count int32
	total                             int64 // New-Order's total in cents (2.4.2.2)

	newOrderDst, paymentDst, orderStatusDst, countDst []any
}

func newProcSession(conn *pgx.Conn) *procSession {
	s := &procSession{conn: conn}
	for _, a := range []*int4Array{&s.items, &s.supply, &s.qty} {
		a.v = make([]int32, 0, tpcc.MaxOrderLines)
	}
	s.newOrderArgs = args(&s.w, &s.d, &s.c, &s.items, &s.supply, &s.qty)
	s.paymentArgs = args(&s.w, &s.d, &s.cw, &s.cd, &s.c, &s.byName, &s.cLast, &s.cents)
	s.orderStatusArgs = args(&s.w, &s.d, &s.c, &s.byName, &s.cLast)
	s.deliveryArgs = args(&s.w, &s.carrier)
	s.stockLevelArgs = args(&s.w, &s.d, &s.threshold)
	s.newOrderDst = args(&s.orderID, &s.total)
	s.paymentDst = args(&s.customerID)
	s.orderStatusDst = args(&s.customerID, &s.orderID, &s.lines)
	s.countDst = args(&s.count)
	return s
}

// NewOrder implements engine.Session (2.4.2). The lines go as three arrays in input
// order; the function sorts the stock updates itself.
func (s *procSession) NewOrder(ctx context.Context, in *tpcc.NewOrderInput) (bool, error) {
	s.w, s.d, s.c = int4Arg(in.WID), int4Arg(in.DID), int4Arg(in.CID)
	s.items.v, s.supply.v, s.qty.v = s.items.v[:0], s.supply.v[:0], s.qty.v[:0]
	for _, l := range in.Lines {
		s.items.v = append(s.items.v, int32(l.ItemID))
		s.supply.v = append(s.supply.v, int32(l.SupplyWID))
		s.qty.v = append(s.qty.v, int32(l.Quantity))
	}
	err := s.conn.QueryRow(ctx, callNewOrder, s.newOrderArgs...).Scan(s.newOrderDst...)
	if err != nil {
		// 2.4.2.3: the unused item rolled the call back; that is the expected outcome.
		if isPgCode(err, errUnusedItem) {
			return true, nil
		}
		return false, err
	}
	return false, nil
}

// Payment implements engine.Session (2.5.2).
func (s *procSession) Payment(ctx context.Context, in *tpcc.PaymentInput) error {
	s.w, s.d, s.cw, s.cd = int4Arg(in.WID), int4Arg(in.DID), int4Arg(in.CWID), int4Arg(in.CDID)
	s.c, s.byName, s.cLast, s.cents = int4Arg(in.CID), boolArg(in.ByName), textArg(in.CLast), int8Arg(in.Amount)
	return s.conn.QueryRow(ctx, callPayment, s.paymentArgs...).Scan(s.paymentDst...)
}

// OrderStatus implements engine.Session (2.6.2).
func (s *procSession) OrderStatus(ctx context.Context, in *tpcc.OrderStatusInput) error {
	s.w, s.d, s.c = int4Arg(in.WID), int4Arg(in.DID), int4Arg(in.CID)
	s.byName, s.cLast = boolArg(in.ByName), textArg(in.CLast)
	return s.conn.QueryRow(ctx, callOrderStatus, s.orderStatusArgs...).Scan(s.orderStatusDst...)
}

// Delivery implements engine.Session (2.7.4).
func (s *procSession) Delivery(ctx context.Context, in *tpcc.DeliveryInput) (int, error) {
	s.w, s.carrier = int4Arg(in.WID), int4Arg(in.CarrierID)
	if err := s.conn.QueryRow(ctx, callDelivery, s.deliveryArgs...).Scan(s.countDst...); err != nil {
		return 0, err
	}
	return int(s.count), nil
}

// StockLevel implements engine.Session (2.8.2).
func (s *procSession) StockLevel(ctx context.Context, in *tpcc.StockLevelInput) (int, error) {
	s.w, s.d, s.threshold = int4Arg(in.WID), int4Arg(in.DID), int4Arg(in.Threshold)
	if err := s.conn.QueryRow(ctx, callStockLevel, s.stockLevelArgs...).Scan(s.countDst...); err != nil {
		return 0, err
	}
	return int(s.count), nil
}

// Close implements engine.Session.
func (s *procSession) Close() { s.conn.Close(context.Background()) }
