package tpcc

import (
	"embed"
	"fmt"
)

//go:embed checks/*.sql
var checkSQL embed.FS

// Check is one consistency condition of 3.3.2. Its query returns the violating keys
// (at most five) with the total count of violations in the first column; no row means
// the condition holds. The queries are portable SQL, written as joins of grouped
// aggregates so they run as hash aggregates (seconds, not minutes, on a few warehouses).
// Each finds its violations in a CTE and orders them starting with the count column:
// ordered by the keys alone, PostgreSQL, which expects many violations, walks
// order_line and orders by index to skip a sort, ~1.7x slower than hash joins.
type Check struct {
	ID   string // "3.3.2.1"
	Name string
	// BeforeDeliveryOnly marks 3.3.2.11, which holds only until the first Delivery.
	BeforeDeliveryOnly bool
	Query              string
}

var checkList = []struct {
	n      int
	name   string
	before bool
}{
	{1, "w_ytd = sum(d_ytd)", false},
	{2, "d_next_o_id - 1 = max(o_id) = max(no_o_id)", false},
	{3, "new_order ids are contiguous", false},
	{4, "sum(o_ol_cnt) = order_line rows per district", false},
	{5, "o_carrier_id null iff new_order row", false},
	{6, "o_ol_cnt = order_line rows per order", false},
	{7, "ol_delivery_d null iff o_carrier_id null", false},
	{8, "w_ytd = sum(h_amount)", false},
	{9, "d_ytd = sum(h_amount)", false},
	{10, "c_balance = delivered - paid", false},
	{11, "orders - new_orders = 2100 per district", true},
	{12, "c_balance + c_ytd_payment = delivered", false},
}

// Checks returns the consistency conditions in spec order; all includes 3.3.2.11.
func Checks(all bool) []Check {
	var out []Check
	for _, c := range checkList {
		if c.before && !all {
			continue
		}
		q, err := checkSQL.ReadFile(fmt.Sprintf("checks/%02d.sql", c.n))
		if err != nil {
			panic(err) // embedded at build time: cannot happen
		}
		out = append(out, Check{
			ID:                 fmt.Sprintf("3.3.2.%d", c.n),
			Name:               c.name,
			BeforeDeliveryOnly: c.before,
			Query:              string(q),
		})
	}
	return out
}
