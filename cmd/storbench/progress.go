package main

import (
	"fmt"
	"io"
	"os"
	"time"

	"github.com/storbench/storbench/internal/driver"
	"github.com/storbench/storbench/internal/load"
)

// progress prints one status line: rewritten in place on a terminal, plain lines
// (every 5 s for a build, every second for a run) otherwise, so logs stay readable.
type progress struct {
	out      io.Writer
	terminal bool
	lastLine time.Time
	wrote    bool
}

func newProgress(out io.Writer) *progress {
	p := &progress{out: out}
	if f, ok := out.(*os.File); ok {
		st, err := f.Stat()
		p.terminal = err == nil && st.Mode()&os.ModeCharDevice != 0
	}
	return p
}

func (p *progress) line(s string, every time.Duration) {
	if p.terminal {
		fmt.Fprintf(p.out, "\r\033[K%s", s)
		p.wrote = true
		return
	}
	if time.Since(p.lastLine) >= every {
		fmt.Fprintln(p.out, s)
		p.lastLine = time.Now()
	}
}

func (p *progress) end() {
	if p.wrote {
		fmt.Fprintln(p.out)
		p.wrote = false
	}
}

func (p *progress) build(s load.Progress) {
	switch s.Phase {
	case "load":
		eta := "?"
		if s.ETA > 0 {
			eta = s.ETA.Round(time.Second).String()
		}
		p.line(fmt.Sprintf("loading: %d/%d warehouses, %d rows, %.0f rows/s, ETA %s",
			s.WarehousesDone, s.Warehouses, s.Rows, s.RowsPerSecond, eta), 5*time.Second)
	case "index":
		p.lastLine = time.Time{}
		p.line(fmt.Sprintf("loaded %d rows in %s; creating keys, indexes and procedures, then finishing (docs/workload.md)…",
			s.Rows, s.Elapsed.Round(100*time.Millisecond)), 0)
	}
}

func (p *progress) run(t driver.Tick) {
	p.line(fmt.Sprintf("%6s %-5s  TPM %9.0f  NOPM %9.0f  new-order p95 %7.2f ms  errors %d (client view, last second)",
		t.Elapsed.Round(time.Second), t.Phase, t.TPM, t.NOPM, float64(t.NewOrderP95.Microseconds())/1000, t.Errors), 0)
}
