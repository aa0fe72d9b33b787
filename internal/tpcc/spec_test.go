package tpcc

import "testing"

func TestSpecConstants(t *testing.T) {
	for _, tc := range []struct {
		name      string
		got, want int
	}{
		{"Items", Items, 100000},
		{"StockPerWarehouse", StockPerWarehouse, 100000},
		{"DistrictsPerWarehouse", DistrictsPerWarehouse, 10},
		{"CustomersPerDistrict", CustomersPerDistrict, 3000},
		{"OrdersPerDistrict", OrdersPerDistrict, 3000},
		{"NewOrdersPerDistrict", NewOrdersPerDistrict, 900},
		{"FirstUndeliveredOrder", FirstUndeliveredOrder, 2101},
		{"WarehouseYTDCents", WarehouseYTDCents, 30000000},
		{"DistrictYTDCents", DistrictYTDCents, 3000000},
		{"HistoryCents", HistoryCents, 1000},
		{"MinOrderLines", MinOrderLines, 5},
		{"MaxOrderLines", MaxOrderLines, 15},
		{"UnusedItemID", UnusedItemID, 100001},
	} {
		if tc.got != tc.want {
			t.Errorf("%s = %d, want %d", tc.name, tc.got, tc.want)
		}
	}
	// The initial money balances of 3.3.2.1/8/9: w_ytd = sum(d_ytd) = sum(h_amount).
	if WarehouseYTDCents != DistrictsPerWarehouse*DistrictYTDCents {
		t.Error("w_ytd != 10 * d_ytd")
	}
	if DistrictYTDCents != CustomersPerDistrict*HistoryCents {
		t.Error("d_ytd != 3000 * h_amount")
	}
}

func TestTransactionNames(t *testing.T) {
	want := [NumTransactions]string{"new_order", "payment", "order_status", "delivery", "stock_level"}
	for tx := Transaction(0); tx < NumTransactions; tx++ {
		if tx.String() != want[tx] {
			t.Errorf("Transaction(%d).String() = %q, want %q", tx, tx.String(), want[tx])
		}
	}
}

func TestPaces(t *testing.T) {
	// 5.2.5.7 keying and mean think times, 5.2.5.4 90th-percentile limits.
	want := [NumTransactions]Pacing{
		NewOrder:    {18, 12, 5},
		Payment:     {3, 12, 5},
		OrderStatus: {2, 10, 5},
		Delivery:    {2, 5, 5},
		StockLevel:  {2, 5, 20},
	}
	for tx := Transaction(0); tx < NumTransactions; tx++ {
		if Paces[tx] != want[tx] {
			t.Errorf("Paces[%s] = %+v, want %+v", tx, Paces[tx], want[tx])
		}
	}
}
