package tpcc

import (
	"fmt"
	"math"
)

// InputStats counts the inputs of completed transactions for the input audit. The
// driver keeps one per group of virtual users; merge with Add.
type InputStats struct {
	NewOrders, Rollbacks, OrderLines, RemoteLines int64
	Payments, RemotePayments, PaymentsByName      int64
	OrderStatuses, OrderStatusesByName            int64
	// OrdersByLines[n-MinOrderLines] counts New-Orders of n lines: 5.5.1.5 wants the
	// count uniform over 5..15, which an average alone cannot show.
	OrdersByLines [MaxOrderLines - MinOrderLines + 1]int64
	// Deliveries counts completed Deliveries, DeliveriesSkipping those that skipped at
	// least one district (5.5.1.6 counts transactions, not districts).
	Deliveries, DeliveriesSkipping int64
}

// CountNewOrder records a completed New-Order's inputs. rolledBack is what the
// database did, not what was drawn: a driver whose unused-item orders commit (a known
// deviation of other drivers) fails the rollback row.
func (s *InputStats) CountNewOrder(no *NewOrderInput, rolledBack bool) {
	s.NewOrders++
	if rolledBack {
		s.Rollbacks++
	}
	s.OrderLines += int64(len(no.Lines))
	s.RemoteLines += int64(no.Remote)
	s.OrdersByLines[len(no.Lines)-MinOrderLines]++
}

// CountDelivery records a completed Delivery that skipped `skipped` districts.
func (s *InputStats) CountDelivery(skipped int) {
	s.Deliveries++
	if skipped > 0 {
		s.DeliveriesSkipping++
	}
}

// CountPayment records a completed Payment's inputs.
func (s *InputStats) CountPayment(p *PaymentInput) {
	s.Payments++
	if p.Remote() {
		s.RemotePayments++
	}
	if p.ByName {
		s.PaymentsByName++
	}
}

// CountOrderStatus records a completed Order-Status's inputs.
func (s *InputStats) CountOrderStatus(o *OrderStatusInput) {
	s.OrderStatuses++
	if o.ByName {
		s.OrderStatusesByName++
	}
}

// Add merges o into s.
func (s *InputStats) Add(o *InputStats) {
	s.NewOrders += o.NewOrders
	s.Rollbacks += o.Rollbacks
	s.OrderLines += o.OrderLines
	s.RemoteLines += o.RemoteLines
	s.Payments += o.Payments
	s.RemotePayments += o.RemotePayments
	s.PaymentsByName += o.PaymentsByName
	s.OrderStatuses += o.OrderStatuses
	s.OrderStatusesByName += o.OrderStatusesByName
	for i, n := range o.OrdersByLines {
		s.OrdersByLines[i] += n
	}
	s.Deliveries += o.Deliveries
	s.DeliveriesSkipping += o.DeliveriesSkipping
}

// Audit verdicts.
const (
	Pass = "PASS"
	Fail = "FAIL"
	Skip = "SKIP"
)

// AuditRow is one line of the input audit of 5.5.1.5 and 5.5.1.6.
type AuditRow struct {
	Name    string  `json:"name"`
	Value   float64 `json:"value"`
	Min     float64 `json:"min"`
	Max     float64 `json:"max"`
	Unit    string  `json:"unit"`
	Samples int64   `json:"samples"`
	// Needed is the sample size at which the allowed range is three standard errors
	// wide on each side of the expected value: below it a correct driver would fail
	// by chance too often for a verdict to mean anything, so the row is SKIP.
	Needed int64  `json:"needed"`
	Status string `json:"status"`
	Note   string `json:"note,omitempty"`
}

// Audit checks the inputs against the variability allowed by 5.5.1.5 and the skipped
// Deliveries allowed by 5.5.1.6.
func Audit(s InputStats, warehouses int) []AuditRow {
	rows := []AuditRow{
		proportion("new-order rollbacks", s.Rollbacks, s.NewOrders, 0.01, 0.009, 0.011),
		mean("order lines per new-order", s.OrderLines, s.NewOrders, 10, 10, 9.5, 10.5),
		uniformLines(s.OrdersByLines, s.NewOrders),
		proportion("remote order lines", s.RemoteLines, s.OrderLines, 0.01, 0.0095, 0.0105),
		proportion("remote payments", s.RemotePayments, s.Payments, 0.15, 0.14, 0.16),
		proportion("payments by last name", s.PaymentsByName, s.Payments, 0.60, 0.57, 0.63),
		proportion("order-status by last name", s.OrderStatusesByName, s.OrderStatuses, 0.60, 0.57, 0.63),
		atMost("deliveries with a skipped district", s.DeliveriesSkipping, s.Deliveries, 0.01),
	}
	if warehouses < 2 {
		for i := range rows {
			if rows[i].Name == "remote order lines" || rows[i].Name == "remote payments" {
				rows[i].Status, rows[i].Note = Skip, "one warehouse: nothing can be remote"
			}
		}
	}
	return rows
}

func proportion(name string, hits, n int64, p, lo, hi float64) AuditRow {
	tol := math.Min(p-lo, hi-p)
	row := AuditRow{Name: name, Min: percent(lo), Max: percent(hi), Unit: "%", Samples: n,
		Needed: samplesNeeded(p*(1-p), tol)}
	if n > 0 {
		row.Value = percent(float64(hits) / float64(n))
	}
	return verdict(row)
}

func mean(name string, sum, n int64, mu, variance, lo, hi float64) AuditRow {
	tol := math.Min(mu-lo, hi-mu)
	row := AuditRow{Name: name, Min: lo, Max: hi, Samples: n, Needed: samplesNeeded(variance, tol)}
	if n > 0 {
		row.Value = float64(sum) / float64(n)
	}
	return verdict(row)
}

// chiSquareLimit is the chi-square value a uniform line count exceeds with probability
// 0.001 (10 degrees of freedom: 11 counts, 5..15, summing to the New-Orders).
const chiSquareLimit = 29.59

// uniformLines tests the line counts against the uniform law over 5..15 (2.4.1.3) with
// Pearson's chi-square. The approximation holds from 5 expected orders per count on
// (55 New-Orders); past that a correct driver fails one run in a thousand, whatever
// the sample size, while a skewed one fails more surely the longer it runs.
func uniformLines(counts [MaxOrderLines - MinOrderLines + 1]int64, n int64) AuditRow {
	row := AuditRow{Name: "order lines uniform over 5..15 (chi-square)", Max: chiSquareLimit,
		Samples: n, Needed: 5 * int64(len(counts))}
	if n > 0 {
		expected := float64(n) / float64(len(counts))
		for _, c := range counts {
			d := float64(c) - expected
			row.Value += d * d / expected
		}
	}
	return verdict(row)
}

// atMost checks a proportion against an upper limit. It is a property of the system,
// not a drawn input, so there is no expected value to be near; the verdict waits for
// the sample at which a single hit is within the limit.
func atMost(name string, hits, n int64, hi float64) AuditRow {
	row := AuditRow{Name: name, Max: percent(hi), Unit: "%", Samples: n, Needed: int64(math.Ceil(1 / hi))}
	if n > 0 {
		row.Value = percent(float64(hits) / float64(n))
	}
	return verdict(row)
}

// samplesNeeded is the n at which tol is three standard errors: 9·variance/tol².
// The rounding absorbs floating-point noise (0.01·0.99·9/0.001² is 89100, not 89101).
func samplesNeeded(variance, tol float64) int64 {
	return int64(math.Ceil(math.Round(9*variance/(tol*tol)*1e6) / 1e6))
}

// percent converts a fraction to percent without floating-point tails (0.57 → 57).
func percent(f float64) float64 { return math.Round(f*1e6) / 1e4 }

func verdict(row AuditRow) AuditRow {
	switch {
	case row.Samples < row.Needed:
		row.Status = Skip
		row.Note = fmt.Sprintf("%d samples, %d needed for a verdict", row.Samples, row.Needed)
	case row.Value < row.Min || row.Value > row.Max:
		row.Status = Fail
	default:
		row.Status = Pass
	}
	return row
}
