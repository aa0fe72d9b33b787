package tpcc

import (
	"math"
	"testing"
)

// goodStats is a large sample right on the 5.5.1.5 targets.
func goodStats() InputStats {
	s := InputStats{
		NewOrders: 1100000, Rollbacks: 11000, OrderLines: 11000000, RemoteLines: 110000,
		Payments: 1000000, RemotePayments: 150000, PaymentsByName: 600000,
		OrderStatuses: 100000, OrderStatusesByName: 60000,
		Deliveries: 100000, DeliveriesSkipping: 500,
	}
	for i := range s.OrdersByLines {
		s.OrdersByLines[i] = 100000
	}
	return s
}

var auditRowNames = []string{
	"new-order rollbacks", "order lines per new-order", "order lines uniform over 5..15 (chi-square)",
	"remote order lines", "remote payments", "payments by last name", "order-status by last name",
	"deliveries with a skipped district",
}

func auditByName(t *testing.T, rows []AuditRow) map[string]AuditRow {
	t.Helper()
	if len(rows) != len(auditRowNames) {
		t.Fatalf("Audit returned %d rows, want %d", len(rows), len(auditRowNames))
	}
	m := map[string]AuditRow{}
	for i, r := range rows {
		if r.Name != auditRowNames[i] {
			t.Fatalf("audit row %d is %q, want %q", i, r.Name, auditRowNames[i])
		}
		m[r.Name] = r
	}
	return m
}

func TestAuditPassOnTarget(t *testing.T) {
	rows := auditByName(t, Audit(goodStats(), 10))
	want := map[string]struct{ value, lo, hi float64 }{
		"new-order rollbacks":                         {1, 0.9, 1.1},
		"order lines per new-order":                   {10, 9.5, 10.5},
		"order lines uniform over 5..15 (chi-square)": {0, 0, 29.59},
		"remote order lines":                          {1, 0.95, 1.05},
		"remote payments":                             {15, 14, 16},
		"payments by last name":                       {60, 57, 63},
		"order-status by last name":                   {60, 57, 63},
		"deliveries with a skipped district":          {0.5, 0, 1},
	}
	for name, w := range want {
		r := rows[name]
		if r.Status != Pass {
			t.Errorf("%s: %s, want PASS", name, r.Status)
		}
		for _, f := range []struct {
			what      string
			got, want float64
		}{{"value", r.Value, w.value}, {"min", r.Min, w.lo}, {"max", r.Max, w.hi}} {
			if math.Abs(f.got-f.want) > 1e-9 {
				t.Errorf("%s: %s = %g, want %g", name, f.what, f.got, f.want)
			}
		}
	}
}

// TestAuditFail skews one input at a time: that row fails, the others still pass.
func TestAuditFail(t *testing.T) {
	for _, tc := range []struct {
		row  string
		skew func(*InputStats)
	}{
		{"new-order rollbacks", func(s *InputStats) { s.Rollbacks = 0 }},     // rollbacks never drawn
		{"new-order rollbacks", func(s *InputStats) { s.Rollbacks = 12320 }}, // 1.12%
		{"new-order rollbacks", func(s *InputStats) { s.Rollbacks = 9790 }},  // 0.89%
		{"order lines per new-order", func(s *InputStats) {
			s.OrderLines, s.RemoteLines = 10340000, 103400 // 9.4
		}},
		{"order lines per new-order", func(s *InputStats) { s.OrderLines, s.RemoteLines = 11660000, 116600 }}, // 10.6
		// Every order of 10 lines: the average is right, the distribution is not.
		{"order lines uniform over 5..15 (chi-square)", func(s *InputStats) {
			s.OrdersByLines = [11]int64{}
			s.OrdersByLines[10-MinOrderLines] = s.NewOrders
		}},
		// 6..14 only, symmetric: the average is 10.
		{"order lines uniform over 5..15 (chi-square)", func(s *InputStats) {
			s.OrdersByLines[0], s.OrdersByLines[10] = 0, 0
			s.OrdersByLines[1] += 100000
			s.OrdersByLines[9] += 100000
		}},
		// 2% more orders of 5 lines and 2% fewer of 15: far inside 9.5..10.5 on average.
		{"order lines uniform over 5..15 (chi-square)", func(s *InputStats) {
			s.OrdersByLines[0] += 2000
			s.OrdersByLines[10] -= 2000
		}},
		{"remote order lines", func(s *InputStats) { s.RemoteLines = 0 }},                // remote never picked
		{"remote order lines", func(s *InputStats) { s.RemoteLines = 116600 }},           // 1.06%
		{"remote payments", func(s *InputStats) { s.RemotePayments = 100000 }},           // 10%
		{"remote payments", func(s *InputStats) { s.RemotePayments = 170000 }},           // 17%
		{"payments by last name", func(s *InputStats) { s.PaymentsByName = 500000 }},     // 50%
		{"payments by last name", func(s *InputStats) { s.PaymentsByName = 640000 }},     // 64%
		{"order-status by last name", func(s *InputStats) { s.OrderStatusesByName = 0 }}, // never by name
		{"order-status by last name", func(s *InputStats) { s.OrderStatusesByName = 56000 }},
		{"deliveries with a skipped district", func(s *InputStats) { s.DeliveriesSkipping = 1001 }}, // 1.001%
		{"deliveries with a skipped district", func(s *InputStats) { s.DeliveriesSkipping = s.Deliveries }},
	} {
		s := goodStats()
		tc.skew(&s)
		for name, r := range auditByName(t, Audit(s, 10)) {
			want := Pass
			if name == tc.row {
				want = Fail
			}
			if r.Status != want {
				t.Errorf("skewed %s (%+v): row %q = %s (value %.4f), want %s", tc.row, s, name, r.Status, r.Value, want)
			}
		}
	}
}

// TestAuditBoundsInclusive: the limits of 5.5.1.5 themselves are allowed.
func TestAuditBoundsInclusive(t *testing.T) {
	for _, tc := range []struct {
		row  string
		skew func(*InputStats)
	}{
		{"new-order rollbacks", func(s *InputStats) { s.Rollbacks = 12100 }},
		{"order lines per new-order", func(s *InputStats) { s.OrderLines, s.RemoteLines = 10450000, 104500 }},
		{"order lines per new-order", func(s *InputStats) { s.OrderLines, s.RemoteLines = 11550000, 115500 }},
		{"deliveries with a skipped district", func(s *InputStats) { s.DeliveriesSkipping = 1000 }},
		// Sampling noise of a uniform draw: two counts 1% off, over three standard errors each.
		{"order lines uniform over 5..15 (chi-square)", func(s *InputStats) {
			s.OrdersByLines[0] += 1000
			s.OrdersByLines[10] -= 1000
		}},
		{"remote payments", func(s *InputStats) { s.RemotePayments = 160000 }},
		{"payments by last name", func(s *InputStats) { s.PaymentsByName = 570000 }},
		{"payments by last name", func(s *InputStats) { s.PaymentsByName = 630000 }},
	} {
		s := goodStats()
		tc.skew(&s)
		if r := auditByName(t, Audit(s, 10))[tc.row]; r.Status != Pass {
			t.Errorf("%s at its limit (value %.6f, range [%g, %g]): %s, want PASS", tc.row, r.Value, r.Min, r.Max, r.Status)
		}
	}
}

// TestAuditSkip: too few samples for a verdict, even far from the target.
func TestAuditSkip(t *testing.T) {
	tiny := InputStats{NewOrders: 50, Rollbacks: 25, OrderLines: 300, RemoteLines: 200,
		Payments: 100, RemotePayments: 90, PaymentsByName: 5, OrderStatuses: 10, OrderStatusesByName: 10,
		Deliveries: 99, DeliveriesSkipping: 99}
	tiny.OrdersByLines[0] = 50 // 50 New-Orders are too few for the chi-square
	for name, r := range auditByName(t, Audit(tiny, 10)) {
		if r.Status != Skip || r.Note == "" {
			t.Errorf("tiny sample: %s = %s (note %q), want SKIP with a note", name, r.Status, r.Note)
		}
	}
	for name, r := range auditByName(t, Audit(InputStats{}, 10)) {
		if r.Status != Skip || r.Value != 0 || math.IsNaN(r.Value) {
			t.Errorf("empty stats: %s = %s value %v, want SKIP and 0", name, r.Status, r.Value)
		}
	}
}

// TestAuditNeeded: the sample size for a verdict is 9·var/tol² (three standard errors
// fit in the allowed range), and is applied as a threshold.
func TestAuditNeeded(t *testing.T) {
	want := map[string]float64{
		"new-order rollbacks":                         9 * 0.01 * 0.99 / (0.001 * 0.001),   // 89100 new-orders
		"order lines per new-order":                   9 * 10 / (0.5 * 0.5),                // 360 (var of 5..15 is 10)
		"remote order lines":                          9 * 0.01 * 0.99 / (0.0005 * 0.0005), // 356400 lines
		"remote payments":                             9 * 0.15 * 0.85 / (0.01 * 0.01),     // 11475 payments
		"payments by last name":                       9 * 0.6 * 0.4 / (0.03 * 0.03),       // 2400 payments
		"order-status by last name":                   9 * 0.6 * 0.4 / (0.03 * 0.03),       // 2400 order-statuses
		"order lines uniform over 5..15 (chi-square)": 5 * 11,                              // 5 expected per count
		"deliveries with a skipped district":          100,                                 // one skip is 1%
	}
	rows := auditByName(t, Audit(goodStats(), 10))
	for name, w := range want {
		if got := float64(rows[name].Needed); math.Abs(got-w) > 2 {
			t.Errorf("%s: Needed = %v, want %v", name, got, w)
		}
	}
	// Just below Needed: SKIP; at Needed: a verdict.
	for _, n := range []int64{rows["payments by last name"].Needed - 1, rows["payments by last name"].Needed} {
		s := goodStats()
		s.Payments, s.PaymentsByName, s.RemotePayments = n, n*6/10, n*15/100
		got := auditByName(t, Audit(s, 10))["payments by last name"].Status
		want := Pass
		if n < rows["payments by last name"].Needed {
			want = Skip
		}
		if got != want {
			t.Errorf("%d payments: by-name row %s, want %s", n, got, want)
		}
	}
}

func TestAuditOneWarehouse(t *testing.T) {
	s := goodStats()
	s.RemoteLines, s.RemotePayments = 0, 0
	for name, r := range auditByName(t, Audit(s, 1)) {
		want := Pass
		if name == "remote order lines" || name == "remote payments" {
			want = Skip
		}
		if r.Status != want {
			t.Errorf("one warehouse: %s = %s, want %s", name, r.Status, want)
		}
	}
}

func TestInputStatsCountAndAdd(t *testing.T) {
	var a InputStats
	a.CountNewOrder(&NewOrderInput{Lines: make([]OrderLine, 7), Rollback: true, Remote: 2}, true)
	a.CountNewOrder(&NewOrderInput{Lines: make([]OrderLine, 5)}, false)
	a.CountPayment(&PaymentInput{WID: 1, CWID: 2, ByName: true})
	a.CountPayment(&PaymentInput{WID: 3, CWID: 3})
	a.CountOrderStatus(&OrderStatusInput{ByName: true})
	a.CountOrderStatus(&OrderStatusInput{})
	a.CountOrderStatus(&OrderStatusInput{})
	a.CountDelivery(0)
	a.CountDelivery(3)
	a.CountDelivery(1)
	want := InputStats{NewOrders: 2, Rollbacks: 1, OrderLines: 12, RemoteLines: 2,
		Payments: 2, RemotePayments: 1, PaymentsByName: 1, OrderStatuses: 3, OrderStatusesByName: 1,
		Deliveries: 3, DeliveriesSkipping: 2}
	want.OrdersByLines[7-MinOrderLines], want.OrdersByLines[5-MinOrderLines] = 1, 1
	if a != want {
		t.Fatalf("counted %+v, want %+v", a, want)
	}
	b := goodStats()
	b.Add(&a)
	g := goodStats()
	sum := InputStats{
		NewOrders: g.NewOrders + 2, Rollbacks: g.Rollbacks + 1, OrderLines: g.OrderLines + 12, RemoteLines: g.RemoteLines + 2,
		Payments: g.Payments + 2, RemotePayments: g.RemotePayments + 1, PaymentsByName: g.PaymentsByName + 1,
		OrderStatuses: g.OrderStatuses + 3, OrderStatusesByName: g.OrderStatusesByName + 1,
		OrdersByLines: g.OrdersByLines, Deliveries: g.Deliveries + 3, DeliveriesSkipping: g.DeliveriesSkipping + 2,
	}
	sum.OrdersByLines[7-MinOrderLines]++
	sum.OrdersByLines[5-MinOrderLines]++
	if b != sum {
		t.Errorf("Add gave %+v, want %+v", b, sum)
	}
}
