// Package tpcc holds what the TPC-C specification (v5.11) says, free of any database
// engine: the constants, the random input rules, the initial data, the transaction
// inputs, the mix, the input audit and the consistency conditions.
package tpcc

// Spec constants. These are not knobs: changing one makes the workload something other
// than TPC-C, and the consistency conditions and audit assume them.
const (
	Items                 = 100000 // 1.3.1, 4.3.3.1: item table rows, loaded once
	StockPerWarehouse     = 100000 // 4.3.3.1
	DistrictsPerWarehouse = 10     // 4.3.3.1
	CustomersPerDistrict  = 3000   // 4.3.3.1
	OrdersPerDistrict     = 3000   // 4.3.3.1
	NewOrdersPerDistrict  = 900    // 4.3.3.1: orders 2101..3000 are undelivered
	FirstUndeliveredOrder = OrdersPerDistrict - NewOrdersPerDistrict + 1

	WarehouseYTDCents = 30000000 // 4.3.3.1: w_ytd 300000.00
	DistrictYTDCents  = 3000000  // 4.3.3.1: d_ytd 30000.00
	HistoryCents      = 1000     // 4.3.3.1: h_amount 10.00

	MinOrderLines = 5  // 2.4.1.3
	MaxOrderLines = 15 // 2.4.1.3
)

// Transaction names the five transaction types.
type Transaction int

const (
	NewOrder Transaction = iota
	Payment
	OrderStatus
	Delivery
	StockLevel
	NumTransactions
)

var transactionNames = [NumTransactions]string{"new_order", "payment", "order_status", "delivery", "stock_level"}

// String returns the snake_case name used in results and JSON.
func (t Transaction) String() string { return transactionNames[t] }

// Pacing is a transaction type's keying time, mean think time and 90th-percentile
// response-time limit in seconds (5.2.5.7, 5.2.5.4).
type Pacing struct {
	Keying, MeanThink, P90Limit float64
}

// Paces is indexed by Transaction.
var Paces = [NumTransactions]Pacing{
	NewOrder:    {Keying: 18, MeanThink: 12, P90Limit: 5},
	Payment:     {Keying: 3, MeanThink: 12, P90Limit: 5},
	OrderStatus: {Keying: 2, MeanThink: 10, P90Limit: 5},
	Delivery:    {Keying: 2, MeanThink: 5, P90Limit: 5},
	StockLevel:  {Keying: 2, MeanThink: 5, P90Limit: 20},
}
