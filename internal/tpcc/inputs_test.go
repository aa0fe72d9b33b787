package tpcc

import (
	"testing"
)

// A run's constants, deliberately different per field so that swapping them between
// fields (a known deviation) moves the distributions away from their exact laws.
var testRunConstants = Constants{CLast: 201, CID: 517, ItemID: 6007}

const inputDraws = 200000

// inputRun draws inputDraws of each transaction for users spread over `warehouses`,
// checks every input against its rules, and returns the collected stats and the
// histograms of the NURand fields.
type inputRun struct {
	stats            InputStats
	noCID, payCID    []int // c_id histograms, index c_id-1
	osCID            []int
	payLast, osLast  []int // c_last number histograms
	items            []int // ol_i_id histogram, index ol_i_id-1, excluding unused ids
	lineCounts       [MaxOrderLines + 1]int
	quantities       [11]int
	remoteSupply     []int // per supplying warehouse
	remoteCustomerW  []int
	remoteCDIDOther  int // remote payments whose c_d_id differs from d_id
	districts        [DistrictsPerWarehouse + 1]int
	amountMin        int64
	amountMax        int64
	amountSum        int64
	carriers, thresh map[int]int
}

func runInputs(t *testing.T, warehouses int, draws int) *inputRun {
	t.Helper()
	nameNum := map[string]int{}
	for n := range 1000 {
		nameNum[LastName(n)] = n
	}
	in := NewInputs(NewRand(2024, 1), testRunConstants, warehouses)
	res := &inputRun{
		noCID: make([]int, CustomersPerDistrict), payCID: make([]int, CustomersPerDistrict), osCID: make([]int, CustomersPerDistrict),
		payLast: make([]int, 1000), osLast: make([]int, 1000), items: make([]int, Items),
		remoteSupply: make([]int, warehouses+1), remoteCustomerW: make([]int, warehouses+1),
		amountMin: 1 << 62, carriers: map[int]int{}, thresh: map[int]int{},
	}
	checkCID := func(what string, c int) {
		if c < 1 || c > CustomersPerDistrict {
			t.Fatalf("%s c_id = %d, want 1..%d", what, c, CustomersPerDistrict)
		}
	}
	checkDID := func(what string, d int) {
		if d < 1 || d > DistrictsPerWarehouse {
			t.Fatalf("%s d_id = %d, want 1..%d", what, d, DistrictsPerWarehouse)
		}
	}

	var no NewOrderInput
	for i := range draws {
		home := i%warehouses + 1
		in.NewOrder(home, &no)
		if no.WID != home {
			t.Fatalf("new-order w_id = %d, want home %d", no.WID, home)
		}
		checkDID("new-order", no.DID)
		res.districts[no.DID]++
		checkCID("new-order", no.CID)
		res.noCID[no.CID-1]++
		n := len(no.Lines)
		if n < MinOrderLines || n > MaxOrderLines {
			t.Fatalf("new-order has %d lines, want 5..15", n)
		}
		res.lineCounts[n]++
		remote := 0
		for j, l := range no.Lines {
			if no.Rollback && j == n-1 {
				if l.ItemID != UnusedItemID {
					t.Fatalf("rollback new-order's last line has item %d, want the unused %d", l.ItemID, UnusedItemID)
				}
			} else {
				if l.ItemID < 1 || l.ItemID > Items {
					t.Fatalf("line %d of %d (rollback %v): item %d, want 1..%d", j+1, n, no.Rollback, l.ItemID, Items)
				}
				res.items[l.ItemID-1]++
			}
			if l.Quantity < 1 || l.Quantity > 10 {
				t.Fatalf("quantity %d, want 1..10", l.Quantity)
			}
			res.quantities[l.Quantity]++
			if l.SupplyWID < 1 || l.SupplyWID > warehouses {
				t.Fatalf("supply w_id %d, want 1..%d", l.SupplyWID, warehouses)
			}
			if l.SupplyWID != home {
				remote++
				res.remoteSupply[l.SupplyWID]++
			}
		}
		if remote != no.Remote {
			t.Fatalf("Remote = %d but %d lines have a remote supply warehouse", no.Remote, remote)
		}
		if no.AllLocal != (remote == 0) {
			t.Fatalf("AllLocal = %v with %d remote lines", no.AllLocal, remote)
		}
		res.stats.CountNewOrder(&no, no.Rollback)
	}

	var p PaymentInput
	for i := range draws {
		home := i%warehouses + 1
		in.Payment(home, &p)
		if p.WID != home {
			t.Fatalf("payment w_id = %d, want home %d", p.WID, home)
		}
		checkDID("payment", p.DID)
		checkDID("payment customer", p.CDID)
		if p.CWID < 1 || p.CWID > warehouses {
			t.Fatalf("payment c_w_id %d, want 1..%d", p.CWID, warehouses)
		}
		if p.Remote() {
			if p.CWID == p.WID {
				t.Fatal("remote payment in the home warehouse")
			}
			res.remoteCustomerW[p.CWID]++
			if p.CDID != p.DID {
				res.remoteCDIDOther++
			}
		} else if p.CDID != p.DID {
			t.Fatalf("home payment with c_d_id %d != d_id %d (2.5.1.2)", p.CDID, p.DID)
		}
		if p.ByName {
			num, ok := nameNum[p.CLast]
			if !ok || p.CID != 0 {
				t.Fatalf("payment by name: c_last %q, c_id %d", p.CLast, p.CID)
			}
			res.payLast[num]++
		} else {
			if p.CLast != "" {
				t.Fatalf("payment by id carries c_last %q", p.CLast)
			}
			checkCID("payment", p.CID)
			res.payCID[p.CID-1]++
		}
		if p.Amount < 100 || p.Amount > 500000 {
			t.Fatalf("payment amount %d cents, want 100..500000", p.Amount)
		}
		res.amountMin, res.amountMax = min(res.amountMin, p.Amount), max(res.amountMax, p.Amount)
		res.amountSum += p.Amount
		res.stats.CountPayment(&p)
	}

	var o OrderStatusInput
	for i := range draws {
		home := i%warehouses + 1
		in.OrderStatus(home, &o)
		if o.WID != home {
			t.Fatalf("order-status w_id = %d, want home %d", o.WID, home)
		}
		checkDID("order-status", o.DID)
		if o.ByName {
			num, ok := nameNum[o.CLast]
			if !ok || o.CID != 0 {
				t.Fatalf("order-status by name: c_last %q, c_id %d", o.CLast, o.CID)
			}
			res.osLast[num]++
		} else {
			if o.CLast != "" {
				t.Fatalf("order-status by id carries c_last %q", o.CLast)
			}
			checkCID("order-status", o.CID)
			res.osCID[o.CID-1]++
		}
		res.stats.CountOrderStatus(&o)
	}

	var d DeliveryInput
	var s StockLevelInput
	for i := range 20000 {
		home := i%warehouses + 1
		in.Delivery(home, &d)
		if d.WID != home || d.CarrierID < 1 || d.CarrierID > 10 {
			t.Fatalf("delivery %+v for home %d", d, home)
		}
		res.carriers[d.CarrierID]++
		dist := i%DistrictsPerWarehouse + 1
		in.StockLevel(home, dist, &s)
		if s.WID != home || s.DID != dist || s.Threshold < 10 || s.Threshold > 20 {
			t.Fatalf("stock-level %+v for (%d, %d)", s, home, dist)
		}
		res.thresh[s.Threshold]++
	}
	return res
}

func TestInputsTenWarehouses(t *testing.T) {
	const warehouses = 10
	r := runInputs(t, warehouses, inputDraws)
	s := r.stats

	// 5.5.1.5 targets, with margins well inside the allowed variability.
	within(t, "rollback %", pct(int(s.Rollbacks), int(s.NewOrders)), 0.9, 1.1)
	within(t, "lines per order", float64(s.OrderLines)/float64(s.NewOrders), 9.95, 10.05)
	within(t, "remote lines %", pct(int(s.RemoteLines), int(s.OrderLines)), 0.95, 1.05)
	within(t, "remote payments %", pct(int(s.RemotePayments), int(s.Payments)), 14.5, 15.5)
	// Standard error at 200k draws is ~0.11%: a 1-point bias is caught.
	within(t, "payments by name %", pct(int(s.PaymentsByName), int(s.Payments)), 59.5, 60.5)
	within(t, "order-status by name %", pct(int(s.OrderStatusesByName), int(s.OrderStatuses)), 59.5, 60.5)

	// 2.4.1.3: the line count is uniform over 5..15.
	for n := MinOrderLines; n <= MaxOrderLines; n++ {
		within(t, "share of orders with n lines %", pct(r.lineCounts[n], inputDraws), 100.0/11-0.4, 100.0/11+0.4)
	}
	// 2.4.1.5.3: quantity uniform over 1..10.
	for q := 1; q <= 10; q++ {
		within(t, "share of lines with quantity q %", pct(r.quantities[q], int(s.OrderLines)), 9.8, 10.2)
	}
	// 2.4.1.2: d_id uniform.
	for d := 1; d <= DistrictsPerWarehouse; d++ {
		within(t, "new-order district share %", pct(r.districts[d], inputDraws), 9.5, 10.5)
	}
	// Remote supply and remote customer warehouses: every warehouse can be picked.
	for w := 1; w <= warehouses; w++ {
		if r.remoteSupply[w] == 0 {
			t.Errorf("warehouse %d never supplies a remote line", w)
		}
		if r.remoteCustomerW[w] == 0 {
			t.Errorf("warehouse %d never holds a remote payment's customer", w)
		}
	}
	// 2.5.1.2: a remote customer's district is random, not the home district.
	if remote := int(s.RemotePayments); pct(r.remoteCDIDOther, remote) < 85 {
		t.Errorf("remote payments with c_d_id != d_id: %.1f%%, want about 90%%", pct(r.remoteCDIDOther, remote))
	}
	// 2.5.1.3: amount uniform in 1.00..5000.00.
	if r.amountMin > 100+50 || r.amountMax < 500000-50 {
		t.Errorf("payment amounts span [%d, %d] cents, want about [100, 500000]", r.amountMin, r.amountMax)
	}
	within(t, "mean payment amount (cents)", float64(r.amountSum)/float64(inputDraws), 249000, 251100)
	// 2.7.1.2 carrier 1..10 and 2.8.1.2 threshold 10..20, all values used.
	if len(r.carriers) != 10 || len(r.thresh) != 11 {
		t.Errorf("carriers used %d (want 10), thresholds used %d (want 11)", len(r.carriers), len(r.thresh))
	}

	// The NURand fields follow their exact law with their own run constant.
	for _, tc := range []struct {
		name   string
		counts []int
		a, x   int
		c      int
	}{
		{"new-order c_id", r.noCID, ACID, 1, testRunConstants.CID},
		{"payment c_id", r.payCID, ACID, 1, testRunConstants.CID},
		{"order-status c_id", r.osCID, ACID, 1, testRunConstants.CID},
		{"payment c_last", r.payLast, ALast, 0, testRunConstants.CLast},
		{"order-status c_last", r.osLast, ALast, 0, testRunConstants.CLast},
		{"ol_i_id", r.items, AItemID, 1, testRunConstants.ItemID},
	} {
		y := tc.x + len(tc.counts) - 1
		if d := tvd(tc.counts, nurandPMF(t, tc.a, tc.x, y, tc.c)); d > 0.2 {
			t.Errorf("%s: distance to NURand(%d, %d, %d, C=%d) = %.3f, want <= 0.2", tc.name, tc.a, tc.x, y, tc.c, d)
		}
		if d := tvd(tc.counts, uniformPMF(len(tc.counts))); d < 0.35 {
			t.Errorf("%s: distance to uniform = %.3f, want >= 0.35", tc.name, d)
		}
		// Any other field's constant gives a different law.
		for _, other := range []int{testRunConstants.CLast, testRunConstants.CID, testRunConstants.ItemID} {
			if other == tc.c {
				continue
			}
			if d := tvd(tc.counts, nurandPMF(t, tc.a, tc.x, y, other%(tc.a+1))); d < 0.3 {
				t.Errorf("%s: also close (%.3f) to the law of C=%d: constants mixed up?", tc.name, d, other%(tc.a+1))
			}
		}
	}

	// The audit of these inputs passes on every row but Delivery's, which needs a
	// database to skip districts or not.
	for _, row := range Audit(s, warehouses) {
		if row.Status != Pass && row.Name != "deliveries with a skipped district" {
			t.Errorf("audit row %q: %s (value %.4f, range [%.4f, %.4f], %d samples, %d needed) %s",
				row.Name, row.Status, row.Value, row.Min, row.Max, row.Samples, row.Needed, row.Note)
		}
	}
}

// TestInputsOneWarehouse: with one warehouse nothing can be remote (2.4.1.5.2, 2.5.1.2).
func TestInputsOneWarehouse(t *testing.T) {
	r := runInputs(t, 1, 30000)
	s := r.stats
	if s.RemoteLines != 0 || s.RemotePayments != 0 {
		t.Errorf("one warehouse: %d remote lines, %d remote payments, want none", s.RemoteLines, s.RemotePayments)
	}
	within(t, "rollback %", pct(int(s.Rollbacks), int(s.NewOrders)), 0.7, 1.3)
	within(t, "payments by name %", pct(int(s.PaymentsByName), int(s.Payments)), 58, 62)
	for _, row := range Audit(s, 1) {
		switch row.Name {
		case "remote order lines", "remote payments":
			if row.Status != Skip {
				t.Errorf("one warehouse: audit row %q = %s, want SKIP", row.Name, row.Status)
			}
		}
	}
}

// TestInputsTwoWarehouses: the remote warehouse is always the other one.
func TestInputsTwoWarehouses(t *testing.T) {
	in := NewInputs(NewRand(8, 8), testRunConstants, 2)
	var no NewOrderInput
	var p PaymentInput
	remoteLines, remotePay := 0, 0
	for i := range 50000 {
		home := i%2 + 1
		in.NewOrder(home, &no)
		for _, l := range no.Lines {
			if l.SupplyWID != home {
				if l.SupplyWID != 3-home {
					t.Fatalf("home %d: supply warehouse %d", home, l.SupplyWID)
				}
				remoteLines++
			}
		}
		in.Payment(home, &p)
		if p.Remote() {
			if p.CWID != 3-home {
				t.Fatalf("home %d: remote customer warehouse %d", home, p.CWID)
			}
			remotePay++
		}
	}
	if remoteLines == 0 || remotePay == 0 {
		t.Errorf("two warehouses: %d remote lines, %d remote payments", remoteLines, remotePay)
	}
}

// TestNewOrderReusesLines: the input struct is reused between calls, so every field
// must be reset.
func TestNewOrderReusesLines(t *testing.T) {
	in := NewInputs(NewRand(9, 9), testRunConstants, 10)
	var no NewOrderInput
	for range 20000 {
		in.NewOrder(3, &no)
		n := len(no.Lines)
		if n < MinOrderLines || n > MaxOrderLines {
			t.Fatalf("%d lines after reuse", n)
		}
		unused := 0
		for _, l := range no.Lines {
			if l.ItemID == UnusedItemID {
				unused++
			}
		}
		if no.Rollback && (unused != 1 || no.Lines[n-1].ItemID != UnusedItemID) || !no.Rollback && unused != 0 {
			t.Fatalf("rollback %v with %d unused items: %+v", no.Rollback, unused, no.Lines)
		}
	}
	var p PaymentInput
	var o OrderStatusInput
	byName, byID := false, false
	for range 1000 {
		in.Payment(3, &p)
		in.OrderStatus(3, &o)
		if p.ByName == (p.CLast == "") || p.ByName == (p.CID != 0) || o.ByName == (o.CLast == "") || o.ByName == (o.CID != 0) {
			t.Fatalf("stale customer selector: payment %+v, order-status %+v", p, o)
		}
		byName = byName || p.ByName
		byID = byID || !p.ByName
	}
	if !byName || !byID {
		t.Error("payments did not use both customer selections")
	}
}

func TestInputsRand(t *testing.T) {
	r := NewRand(1, 1)
	if NewInputs(r, testRunConstants, 1).Rand() != r {
		t.Error("Inputs.Rand does not return the user's generator")
	}
}
