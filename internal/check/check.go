// Package check runs the consistency conditions of 3.3.2 (tpcc.Checks) on a database.
package check

import (
	"context"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/storbench/storbench/internal/engine"
	"github.com/storbench/storbench/internal/tpcc"
)

// Outcome is one condition's verdict.
type Outcome struct {
	Check      tpcc.Check
	Violations int64
	FirstKeys  []string // up to five violating keys
	Elapsed    time.Duration
	Err        error // the query itself failed
}

// Passed reports whether the condition holds.
func (o Outcome) Passed() bool { return o.Err == nil && o.Violations == 0 }

// Run evaluates every condition (3.3.2.11 only with all) and returns them in order.
// A query error is recorded on its condition and does not stop the others.
func Run(ctx context.Context, db engine.Checker, all bool) []Outcome {
	var out []Outcome
	for _, c := range tpcc.Checks(all) {
		start := time.Now()
		n, keys, err := db.Check(ctx, c.Query)
		out = append(out, Outcome{Check: c, Violations: n, FirstKeys: keys, Elapsed: time.Since(start), Err: err})
	}
	return out
}

// AllPassed reports whether every condition holds.
func AllPassed(outcomes []Outcome) bool {
	for _, o := range outcomes {
		if !o.Passed() {
			return false
		}
	}
	return true
}

// WriteText prints one line per condition.
func WriteText(w io.Writer, outcomes []Outcome) {
	for _, o := range outcomes {
		status := "PASS"
		detail := ""
		switch {
		case o.Err != nil:
			status, detail = "FAIL", "query failed: "+o.Err.Error()
		case o.Violations > 0:
			status = "FAIL"
			detail = fmt.Sprintf("%d violations, first: %s", o.Violations, strings.Join(o.FirstKeys, "; "))
		}
		fmt.Fprintf(w, "%-9s %s  %-45s %6.2fs  %s\n", o.Check.ID, status, o.Check.Name, o.Elapsed.Seconds(), detail)
	}
}
