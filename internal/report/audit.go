package report

import (
	"fmt"
	"slices"
	"strings"

	"github.com/storbench/storbench/internal/driver"
	"github.com/storbench/storbench/internal/tpcc"
)

// auditedRun is a run whose input audit and checks the report summarises.
type auditedRun struct {
	Label string
	Run   *driver.Result
}

func auditedRuns(srcs []*Source) []auditedRun {
	var out []auditedRun
	for _, src := range srcs {
		for i := range src.Steps {
			r := &src.Steps[i]
			label := qualified(srcs, src, r.Step.ID)
			if r.Run != nil {
				out = append(out, auditedRun{label, r.Run})
			}
			if c := r.Capacity; c != nil {
				for k, p := range c.Probes {
					if p.Run != nil {
						out = append(out, auditedRun{fmt.Sprintf("%s probe %d (%s TPM)", label, k+1, num(p.RateTPM, 0)), p.Run})
					}
				}
			}
			if c := r.Consolidation; c != nil {
				for k, in := range c.Instances {
					if in.Run != nil {
						out = append(out, auditedRun{label + " " + instanceLabel(&in, k), in.Run})
					}
				}
			}
		}
	}
	return out
}

// auditSection is the evidence that the workload was the one specified (the input
// audit of 5.5.1.5 per run) and that the database stayed consistent (3.3.2).
func auditSection(srcs []*Source) *Section {
	sec := &Section{ID: "audit", Title: "Input audit and consistency",
		Intro: []string{auditIntro}}
	if t := auditTable(auditedRuns(srcs)); t != nil {
		sec.Blocks = append(sec.Blocks, Block{Table: t})
	}
	if t := checksTable(srcs); t != nil {
		sec.Blocks = append(sec.Blocks, Block{Table: t})
	}
	if t := runNotesTable(auditedRuns(srcs)); t != nil {
		sec.Blocks = append(sec.Blocks, Block{Table: t})
	}
	return sec
}

// runNotesTable lists what the runs themselves warned about (an interrupted window,
// a client that may have set the pace…), each note once with the runs it came from.
func runNotesTable(runs []auditedRun) *Table {
	var notes []string
	from := map[string][]string{}
	for _, r := range runs {
		for _, n := range r.Run.Notes {
			if from[n] == nil {
				notes = append(notes, n)
			}
			from[n] = append(from[n], r.Label)
		}
	}
	if len(notes) == 0 {
		return nil
	}
	t := &Table{Title: "Notes of the runs", Columns: []string{"note", "runs"}}
	for _, n := range notes {
		t.Rows = append(t.Rows, []string{n, strings.Join(firstOf(from[n], 5), "; ")})
	}
	return t
}

// auditTable has one row per audited figure: its verdicts over all runs and the
// range of the values seen.
func auditTable(runs []auditedRun) *Table {
	type agg struct {
		pass, fail, skip int
		lo, hi           float64 // over the runs with a verdict
		seen             bool
		allowed, unit    string
		failed           []string
	}
	var names []string
	aggs := map[string]*agg{}
	for _, r := range runs {
		for _, a := range r.Run.Audit {
			g := aggs[a.Name]
			if g == nil {
				g = &agg{allowed: fmt.Sprintf("%s–%s", auditValue(a.Min, a.Unit), auditValue(a.Max, a.Unit)), unit: a.Unit}
				aggs[a.Name] = g
				names = append(names, a.Name)
			}
			switch a.Status {
			case tpcc.Pass:
				g.pass++
			case tpcc.Fail:
				g.fail++
				g.failed = append(g.failed, fmt.Sprintf("%s (%s)", r.Label, auditValue(a.Value, a.Unit)))
			default:
				g.skip++
			}
			if a.Status != tpcc.Skip {
				if !g.seen {
					g.lo, g.hi, g.seen = a.Value, a.Value, true
				}
				g.lo, g.hi = min(g.lo, a.Value), max(g.hi, a.Value)
			}
		}
	}
	if len(names) == 0 {
		return nil
	}
	t := &Table{Title: fmt.Sprintf("Input audit over %d runs", len(runs)),
		Columns: []string{"figure", "allowed", "seen with a verdict (lowest–highest)", "PASS", "FAIL", "SKIP", "failed in"}}
	for _, n := range names {
		g := aggs[n]
		failed := "-"
		if len(g.failed) > 0 {
			failed = strings.Join(firstOf(g.failed, 5), "; ")
		}
		seen := "-"
		if g.seen {
			seen = fmt.Sprintf("%s–%s", auditValue(g.lo, g.unit), auditValue(g.hi, g.unit))
		}
		t.Rows = append(t.Rows, []string{n, g.allowed, seen,
			fmt.Sprint(g.pass), fmt.Sprint(g.fail), fmt.Sprint(g.skip), failed})
	}
	return t
}

func auditValue(v float64, unit string) string {
	if unit == "%" {
		return num(v, 2) + "%"
	}
	return num(v, 2)
}

// checksTable has one row per consistency condition over every checked step.
func checksTable(srcs []*Source) *Table {
	type agg struct {
		name         string
		passed, runs int
		failed       []string
	}
	var ids []string
	aggs := map[string]*agg{}
	for _, src := range srcs {
		for i := range src.Steps {
			r := &src.Steps[i]
			for _, c := range r.Checks {
				g := aggs[c.ID]
				if g == nil {
					g = &agg{name: c.Name}
					aggs[c.ID] = g
					ids = append(ids, c.ID)
				}
				g.runs++
				switch {
				case c.Error != "":
					g.failed = append(g.failed, qualified(srcs, src, r.Step.ID)+": "+c.Error)
				case c.Violations > 0:
					g.failed = append(g.failed, fmt.Sprintf("%s: %d violating rows", qualified(srcs, src, r.Step.ID), c.Violations))
				default:
					g.passed++
				}
			}
		}
	}
	if len(ids) == 0 {
		return nil
	}
	t := &Table{Title: "Consistency conditions (3.3.2)", Columns: []string{"condition", "what", "steps passed", "failures"}}
	for _, id := range ids {
		g := aggs[id]
		failed := "-"
		if len(g.failed) > 0 {
			failed = strings.Join(firstOf(g.failed, 5), "; ")
		}
		t.Rows = append(t.Rows, []string{id, g.name, fmt.Sprintf("%d of %d", g.passed, g.runs), failed})
	}
	return t
}

// firstOf keeps a long list readable: the first n and how many more.
func firstOf(items []string, n int) []string {
	if len(items) <= n {
		return items
	}
	return append(slices.Clone(items[:n]), fmt.Sprintf("and %d more", len(items)-n))
}
