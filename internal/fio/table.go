package fio

import (
	"encoding/json"
	"fmt"
	"io"
	"strings"
	"text/tabwriter"

	"github.com/storbench/storbench/internal/infile"
	"github.com/storbench/storbench/internal/input"
)

// Runs is what `storbench fio --json` writes and `storbench fio compare` reads.
type Runs struct {
	StorbenchVersion string   `json:"storbench_version"`
	Results          []Result `json:"results"`
}

// ReadRuns reads a --json file of an earlier `storbench fio`.
func ReadRuns(path string) (*Runs, error) {
	b, err := runsKind.Read(path)
	if err != nil {
		return nil, err
	}
	return ParseRuns(path, b)
}

// runsKind is the --json of storbench fio as read: its points with their per-second
// series.
var runsKind = infile.Kind{What: "fio result", Limit: infile.MeasuredLimit}

// ParseRuns reads the text of a --json of storbench fio; path names it in errors.
func ParseRuns(path string, b []byte) (*Runs, error) {
	var r Runs
	if err := json.Unmarshal(b, &r); err != nil {
		return nil, fmt.Errorf("%w: %s is not the --json of storbench fio (%w): give files written by storbench fio --json", input.ErrInvalid, path, err)
	}
	if len(r.Results) == 0 {
		return nil, fmt.Errorf("%w: %s is %s, not the --json of storbench fio: give files written by storbench fio --json", input.ErrInvalid, path, whatJSON(b))
	}
	return &r, nil
}

// whatJSON names what a JSON file that is no fio result holds, when it is one of
// storbench's other results (as report's input tells them apart, by their keys).
func whatJSON(b []byte) string {
	var keys map[string]json.RawMessage
	switch {
	case json.Unmarshal(b, &keys) != nil:
		return "JSON but not an object"
	case keys["tpm_db"] != nil:
		return "the result of storbench run (run --json; storbench compare compares two of them)"
	case keys["results"] != nil:
		return "a storbench fio result with no results"
	}
	return "no storbench result"
}

// MeanLatMs is the mean completion latency over reads and writes together.
func (p *Point) MeanLatMs() float64 {
	n := p.Read.IOs + p.Write.IOs
	if n == 0 {
		return 0
	}
	return (p.Read.MeanLatMs*float64(p.Read.IOs) + p.Write.MeanLatMs*float64(p.Write.IOs)) / float64(n)
}

// SizeText is a block size as fio and the papers write it: 8k, 1m.
func SizeText(bytes int) string {
	if bytes%(1<<20) == 0 {
		return fmt.Sprintf("%dm", bytes>>20)
	}
	return fmt.Sprintf("%dk", bytes>>10)
}

// WriteTable prints each point of the results: fio's figures, latencies as fio
// measured them (completion latency, per-I/O percentiles of its histogram).
func WriteTable(out io.Writer, results []Result) error {
	for _, r := range results {
		fmt.Fprintf(out, "\n%s: %s (%s)\n  target %s (%s on %s, %s%s), %s\n", r.Profile, r.Description, r.Source,
			r.Target.Path, r.Target.FSType, r.Target.Mount, r.Target.Chain, models(r.Target), r.FioVersion)
		tw := tabwriter.NewWriter(out, 0, 0, 2, ' ', tabwriter.AlignRight)
		fmt.Fprintf(tw, "point\tpattern\tbs\tjobs\tqd\tIOPS\tMB/s\tread ms mean\tp99\tp99.9\twrite ms mean\tp99\tp99.9\tfio cpu%%\tsteady\t\n")
		for i := range r.Points {
			p := &r.Points[i]
			steady := "-"
			if p.Steady != nil {
				steady = map[bool]string{true: "attained", false: "NOT attained"}[p.Steady.Attained]
			}
			fmt.Fprintf(tw, "%s\t%s\t%s\t%d\t%d\t%.0f\t%.1f\t%s\t%s\t%s\t%s\t%s\t%s\t%.0f\t%s\t\n", p.Name, p.Mix(), SizeText(p.BlockSize),
				p.Jobs, p.QueueDepth, p.IOPS, p.MBps, ms(p.Read.IOs, p.Read.MeanLatMs), ms(p.Read.IOs, p.Read.P99Ms), ms(p.Read.IOs, p.Read.P999Ms),
				ms(p.Write.IOs, p.Write.MeanLatMs), ms(p.Write.IOs, p.Write.P99Ms), ms(p.Write.IOs, p.Write.P999Ms), p.UserCPU+p.SystemCPU, steady)
		}
		if err := tw.Flush(); err != nil {
			return err
		}
		for _, n := range r.Notes {
			fmt.Fprintf(out, "  note: %s\n", n)
		}
	}
	fmt.Fprintln(out, "  MB = 10^6 bytes; latencies are fio's completion latencies (submission to completion) per I/O")
	return nil
}

// ms prints a latency, or "-" for a direction without I/O.
func ms(ios int64, v float64) string {
	if ios == 0 {
		return "-"
	}
	return fmt.Sprintf("%.3f", v)
}

// Mix names the point's access pattern and read share, e.g. "randrw 70/30".
func (p *Point) Mix() string {
	return PointSpec{Pattern: p.Pattern, ReadPct: p.ReadPct}.mixName()
}

func models(t Target) string {
	var known []string
	for _, m := range t.Models {
		if m != "" {
			known = append(known, m)
		}
	}
	if len(known) == 0 {
		return ""
	}
	return ", " + strings.Join(known, ", ")
}

// Compare prints the papers' side-by-side table: every point both runs have, with
// B as a percentage of A.
func Compare(out io.Writer, nameA string, a *Runs, nameB string, b *Runs) error {
	type key struct{ profile, point string }
	pointsB := map[key]*Point{}
	for i := range b.Results {
		for j := range b.Results[i].Points {
			p := &b.Results[i].Points[j]
			pointsB[key{b.Results[i].Profile, p.Name}] = p
		}
	}
	fmt.Fprintf(out, "A = %s\nB = %s\n", nameA, nameB)
	tw := tabwriter.NewWriter(out, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintf(tw, "profile\tpattern\tbs\tjobs\tqd\tIOPS A\tIOPS B\tB %% of A\tMB/s A\tMB/s B\tB %% of A\tlat ms A\tlat ms B\tB %% of A\t\n")
	matched := 0
	for _, r := range a.Results {
		for i := range r.Points {
			pa := &r.Points[i]
			pb, ok := pointsB[key{r.Profile, pa.Name}]
			if !ok {
				continue
			}
			matched++
			fmt.Fprintf(tw, "%s\t%s\t%s\t%d\t%d\t%.0f\t%.0f\t%s\t%.1f\t%.1f\t%s\t%.3f\t%.3f\t%s\t\n", r.Profile, pa.Mix(), SizeText(pa.BlockSize),
				pa.Jobs, pa.QueueDepth, pa.IOPS, pb.IOPS, percentOf(pb.IOPS, pa.IOPS), pa.MBps, pb.MBps, percentOf(pb.MBps, pa.MBps),
				pa.MeanLatMs(), pb.MeanLatMs(), percentOf(pb.MeanLatMs(), pa.MeanLatMs()))
		}
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	if matched == 0 {
		return fmt.Errorf("%w: the two results have no profile point in common", input.ErrInvalid)
	}
	fmt.Fprintln(out, "lat = mean completion latency over reads and writes; for latency, B below 100% is better")
	return nil
}

func percentOf(b, a float64) string {
	if a == 0 {
		return "-"
	}
	return fmt.Sprintf("%.0f%%", 100*b/a)
}
