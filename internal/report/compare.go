package report

import (
	"fmt"
	"io"
	"strconv"
	"strings"

	"github.com/storbench/storbench/internal/driver"
	"github.com/storbench/storbench/internal/input"
	"github.com/storbench/storbench/internal/study"
)

// Compare is the headline comparison of two results (studies or single runs) for a
// terminal or a Markdown document: the headline table, then every step both have,
// B as % of A.
func Compare(a, b *Source) ([]*Table, error) {
	srcs := []*Source{a, b}
	var tables []*Table
	add := func(t *Table) {
		if t != nil {
			tables = append(tables, t)
		}
	}
	add(compareRuns(a, b))
	pairs := matchSteps(a, b)
	add(compareTransfers(pairs))
	add(compareConsolidations(pairs))
	for _, t := range compareProfiles(a, b) {
		add(t)
	}
	if len(tables) == 0 {
		return nil, fmt.Errorf("%w: %s and %s have no step in common: compare two runs, two fio results, or two stores of the same study file", input.ErrInvalid, a.Path, b.Path)
	}
	if head := headlineTable(sweeps(srcs)); head != nil {
		tables = append([]*Table{head}, tables...)
	}
	return tables, nil
}

// WriteComparison prints Compare's tables as Markdown, or as aligned text fitted
// to width columns (0: each table as wide as its cells make it).
func WriteComparison(w io.Writer, a, b *Source, tables []*Table, markdown bool, width int) error {
	if markdown {
		fmt.Fprintf(w, "A = `%s`, B = `%s`\n\n", a.Path, b.Path)
	} else {
		fmt.Fprintf(w, "A = %s\nB = %s\n", a.Path, b.Path)
	}
	for _, t := range tables {
		var err error
		if markdown {
			err = t.WriteMarkdown(w)
		} else {
			fmt.Fprintln(w)
			err = t.WriteTextWithin(w, width)
		}
		if err != nil {
			return err
		}
	}
	return nil
}

// stepPair is one step of A and its counterpart in B.
type stepPair struct {
	Name string
	A, B *study.StepResult
}

// matchSteps pairs the steps of two stores of the same study file by ID.
func matchSteps(a, b *Source) []stepPair {
	byID := map[string]*study.StepResult{}
	for i := range b.Steps {
		byID[b.Steps[i].Step.ID] = &b.Steps[i]
	}
	var out []stepPair
	for i := range a.Steps {
		if rb := byID[a.Steps[i].Step.ID]; rb != nil {
			out = append(out, stepPair{Name: a.Steps[i].Step.ID, A: &a.Steps[i], B: rb})
		}
	}
	return out
}

// compareRuns is user step by user step (the mean of a step's repeats), throughput
// and latency, B as % of A.
func compareRuns(a, b *Source) *Table {
	sa, sb := sweeps([]*Source{a}), sweeps([]*Source{b})
	type pointPair struct {
		name   string
		pa, pb *Point
	}
	var pairs []pointPair
	if len(sa) == 1 && len(sb) == 1 && sa[0].Source.Steps[0].Step.Kind == kindRun && sb[0].Source.Steps[0].Step.Kind == kindRun {
		pairs = append(pairs, pointPair{"A vs B", &sa[0].Points[0], &sb[0].Points[0]})
	} else {
		for _, x := range sa {
			for _, y := range sb {
				if x.Name != y.Name {
					continue
				}
				for i := range x.Points {
					if p := y.at(x.Points[i].Users); p != nil {
						pairs = append(pairs, pointPair{x.Name, &x.Points[i], p})
					}
				}
			}
		}
	}
	t := &Table{Title: "Per user step",
		Columns: []string{"configuration", "users", "runs A", "runs B", "NOPM A", "NOPM B", "B % of A", "TPM A", "TPM B", "B % of A",
			"new-order p95 ms A", "p95 B", "B % of A", "avg I/O ms A", "avg I/O ms B", "B % of A"},
		Notes: append([]string{throughputSources(append(sa, sb...)) + "; new-order p95: client-measured; avg I/O: the data disk's I/O time ÷ I/Os (/proc/diskstats); repeated steps: the mean. For latency, below 100% is better."},
			databaseNotes(append(sa, sb...))...),
		Keys:   2,
		Groups: []int{2, 3, 3, 3, 3}}
	for _, p := range pairs {
		users := strconv.Itoa(p.pa.Users)
		if p.pb.Users != p.pa.Users {
			users = fmt.Sprintf("%d vs %d", p.pa.Users, p.pb.Users)
		}
		t.Rows = append(t.Rows, []string{p.name, users, strconv.Itoa(len(p.pa.Steps)), strconv.Itoa(len(p.pb.Steps)),
			meanMarked(p.pa, "nopm_db", p.pa.NOPMDB), meanMarked(p.pb, "nopm_db", p.pb.NOPMDB), statPercent(p.pb.NOPMDB, p.pa.NOPMDB),
			meanMarked(p.pa, "tpm_db", p.pa.TPMDB), meanMarked(p.pb, "tpm_db", p.pb.TPMDB), statPercent(p.pb.TPMDB, p.pa.TPMDB),
			mean(p.pa.NewOrderP95, 2), mean(p.pb.NewOrderP95, 2), statPercent(p.pb.NewOrderP95, p.pa.NewOrderP95),
			mean(p.pa.IOAwait, 3), mean(p.pb.IOAwait, 3), statPercent(p.pb.IOAwait, p.pa.IOAwait)})
	}
	if len(t.Rows) == 0 {
		return nil
	}
	if len(sa) == 1 && len(sb) == 1 {
		if diff := runDifferences(sa[0].Source, sb[0].Source); diff != "" {
			t.Notes = append(t.Notes, "A and B were not run alike: "+diff+". The % columns measure those differences too.")
		}
	}
	return t
}

// meanMarked is a point's database figure for the comparison: the mean of its
// runs, marked as the report's per-step table marks it.
func meanMarked(p *Point, figure string, s Stat) string {
	return mean(s, 0) + databaseMark(p, figure, s)
}

// runDifferences names what differs between the first runs of a and b in what a run
// is made of (engine, warehouses, mode, input rules, schema; the users are in the
// table): "" when nothing does.
func runDifferences(a, b *Source) string {
	ra, rb := firstRun(a), firstRun(b)
	if ra == nil || rb == nil {
		return ""
	}
	ca, cb := ra.Config, rb.Config
	var diffs []string
	for _, d := range []struct{ what, a, b string }{
		{"engine", ca.Engine, cb.Engine},
		{"warehouses", strconv.Itoa(ca.Warehouses), strconv.Itoa(cb.Warehouses)},
		{"mode", ca.Mode, cb.Mode},
		{"inputs", inputsOf(ca), inputsOf(cb)},
		{"schema", schemaOf(ca), schemaOf(cb)},
	} {
		if d.a != d.b {
			diffs = append(diffs, fmt.Sprintf("%s %s vs %s", d.what, d.a, d.b))
		}
	}
	return strings.Join(diffs, ", ")
}

// firstRun is the result of src's first run step, nil when it has none.
func firstRun(src *Source) *driver.Result {
	for i := range src.Steps {
		if r := src.Steps[i].Run; r != nil && src.Steps[i].Step.Kind == kindRun {
			return r
		}
	}
	return nil
}

// compareProfiles sets each fio configuration of A beside its counterpart in B (the
// same target in two stores of one study, or the one of each of two fio results),
// per profile, so that the % columns are B against A.
func compareProfiles(a, b *Source) []*Table {
	ra, rb := fioRuns([]*Source{a}), fioRuns([]*Source{b})
	var out []*Table
	for _, prof := range profileNames(append(ra, rb...)) {
		pa, pb := runsOf(ra, prof), runsOf(rb, prof)
		ca, cb := configsOf(pa), configsOf(pb)
		for _, c := range ca {
			match := c
			if len(ca) == 1 && len(cb) == 1 {
				match = cb[0]
			}
			var runs []fioRun
			for _, r := range pa {
				if r.Config == c {
					r.Config = "A " + c
					runs = append(runs, r)
				}
			}
			n := len(runs)
			for _, r := range pb {
				if r.Config == match {
					r.Config = "B " + match
					runs = append(runs, r)
				}
			}
			if len(runs) == n {
				continue
			}
			t, _ := profileTable(prof, runs)
			out = append(out, t)
		}
	}
	return out
}

// compareTransfers is backup and restore cycle by cycle.
func compareTransfers(pairs []stepPair) *Table {
	t := &Table{Title: "Backup and restore",
		Columns: []string{"step", "backup s A", "backup s B", "B % of A", "restore s A", "restore s B", "B % of A"},
		Notes:   []string{"storbench's timing of each transfer; below 100% is faster"},
		Groups:  []int{3, 3}}
	for _, p := range pairs {
		a, b := p.A, p.B
		if a.Backup == nil || b.Backup == nil || a.Restore == nil || b.Restore == nil {
			continue
		}
		t.Rows = append(t.Rows, []string{p.Name, num(a.Backup.Seconds, 1), num(b.Backup.Seconds, 1), percentOf(b.Backup.Seconds, a.Backup.Seconds),
			num(a.Restore.Seconds, 1), num(b.Restore.Seconds, 1), percentOf(b.Restore.Seconds, a.Restore.Seconds)})
	}
	if len(t.Rows) == 0 {
		return nil
	}
	return t
}

// compareConsolidations is the OLTP instances' total NOPM per consolidation step.
func compareConsolidations(pairs []stepPair) *Table {
	t := &Table{Title: "Consolidation",
		Columns: []string{"step", "NOPM all OLTP A", "NOPM all OLTP B", "B % of A", "worst read ms A", "worst read ms B", "B % of A"},
		Notes:   []string{"NOPM: sum of the OLTP instances' database counters; worst read: the shared disk's worst interval, average per I/O (/proc/diskstats)"},
		Groups:  []int{3, 3}}
	total := func(c *study.ConsolidationRun) float64 {
		var n float64
		for _, in := range c.Instances {
			if in.Run != nil {
				n += in.Run.NOPMDB
			}
		}
		return n
	}
	for _, p := range pairs {
		a, b := p.A.Consolidation, p.B.Consolidation
		if a == nil || b == nil {
			continue
		}
		t.Rows = append(t.Rows, []string{p.Name, num(total(a), 0), num(total(b), 0), percentOf(total(b), total(a)),
			num(a.Summary.WorstReadAwaitMs, 2), num(b.Summary.WorstReadAwaitMs, 2), percentOf(b.Summary.WorstReadAwaitMs, a.Summary.WorstReadAwaitMs)})
	}
	if len(t.Rows) == 0 {
		return nil
	}
	return t
}
