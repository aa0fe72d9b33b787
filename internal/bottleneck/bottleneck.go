// Package bottleneck states what limited a TPC-C window: the storage, the CPU, locks,
// the client (the driver), or a mix, with the two or three figures that decided it.
// The rules and their thresholds are in rules.go, each with why; docs/bottlenecks.md
// says how to read a verdict and what to change in a study to make the storage the
// bottleneck.
package bottleneck

import (
	"fmt"
	"io"
	"strings"

	"github.com/storbench/storbench/internal/metrics"
)

// Kinds of verdict.
const (
	Storage = "storage"
	CPU     = "cpu"
	Locks   = "locks"
	Client  = "client"
	Mixed   = "mixed"
)

// Verdict is what limited a window.
type Verdict struct {
	// Kind is Storage, CPU, Locks, Client or Mixed.
	Kind string `json:"kind"`
	// Detail says which part: "storage (reads)", "cpu (instance limit 1 CPU)",
	// "mixed (cpu, storage)".
	Detail string `json:"detail"`
	// Figures are the figures that decided it, the deciding one first.
	Figures []Figure `json:"figures"`
	// Note says what the verdict could not use ("wait shares unavailable: …").
	Note string `json:"note,omitempty"`
}

// Figure is one figure a verdict rests on.
type Figure struct {
	Name   string  `json:"name"`
	Value  float64 `json:"value"`
	Unit   string  `json:"unit"`
	Source string  `json:"source"`
}

// Driver is what the driver measured of itself over the window.
type Driver struct {
	// CPUs is --client-cpus (GOMAXPROCS); Users the virtual users.
	CPUs, Users int
	// Utilization is the CPU time used ÷ (window × CPUs); Demand adds the time its
	// threads waited for a CPU (nil when unknown).
	Utilization float64
	Demand      *float64
	// QuotaCPUs is its cgroup's CFS quota in CPUs (0: none).
	QuotaCPUs float64
}

// quotaUse is the driver's CPU use in % of its cgroup's quota, when that is below its
// client CPUs; 0 otherwise.
func (d Driver) quotaUse() float64 {
	if d.QuotaCPUs <= 0 || d.QuotaCPUs >= float64(d.CPUs) {
		return 0
	}
	return 100 * d.Utilization * float64(d.CPUs) / d.QuotaCPUs
}

// String is the verdict in one line: "storage (reads) — data disk busy 97%, …".
func (v *Verdict) String() string {
	if v == nil {
		return ""
	}
	var figs []string
	for _, f := range v.Figures {
		figs = append(figs, f.Text())
	}
	s := v.Detail
	if len(figs) > 0 {
		s += " — " + strings.Join(figs, ", ")
	}
	if v.Note != "" {
		s += " (" + v.Note + ")"
	}
	return s
}

// Text is the figure as the summary line shows it: "data disk busy 97%".
func (f Figure) Text() string {
	switch f.Unit {
	case "%":
		return fmt.Sprintf("%s %.0f%%", f.Name, f.Value)
	case "ms":
		return fmt.Sprintf("%s %.1f ms", f.Name, f.Value)
	}
	return fmt.Sprintf("%s %.2f %s", f.Name, f.Value, f.Unit)
}

// Judge states the verdict on a window from its metrics summary and the driver's
// figures (a zero Driver when they are not known: a per-interval verdict). Nil when
// the window has no figure to judge by (no metrics were sampled).
func Judge(s *metrics.Summary, c Driver) *Verdict {
	if s == nil || (s.CPU == nil && len(s.GroupCPU) == 0 && s.Waits == nil) {
		return nil
	}
	o := observe(s, c)
	v := rules(o)
	if o.waits == nil {
		v.Note = "wait shares unavailable: decided from the host's, the cgroup's, the disks' and the driver's figures"
	}
	return v
}

// WriteText prints the verdict as the run summary's closing line; nothing when there
// is none.
func WriteText(out io.Writer, v *Verdict) {
	if v != nil {
		fmt.Fprintf(out, "\nbottleneck: %s\n", v)
	}
}

// OfSample is the verdict on one interval from its figures alone: the driver's CPU
// is measured over the window only, so no interval is called client-bound by it.
func OfSample(s *metrics.Sample, users int) *Verdict {
	sum := metrics.Summarize([]metrics.Sample{*s}, s.T-s.Seconds, s.T)
	return Judge(&sum, Driver{Users: users})
}

// Short is the verdict's detail alone ("" for none), for a column.
func (v *Verdict) Short() string {
	if v == nil {
		return ""
	}
	return v.Detail
}
