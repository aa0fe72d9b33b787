package study

import (
	"cmp"
	"encoding/csv"
	"fmt"
	"io"
	"strconv"
	"strings"
	"text/tabwriter"

	"github.com/storbench/storbench/internal/bottleneck"
	"github.com/storbench/storbench/internal/driver"
	"github.com/storbench/storbench/internal/fio"
	"github.com/storbench/storbench/internal/input"
	"github.com/storbench/storbench/internal/metrics"
	"github.com/storbench/storbench/internal/outfile"
)

// Find returns a stored step by its number or its id; a step whose file does not
// read is refused naming the file.
func (s *Store) Find(key string) (*StepResult, error) {
	steps, bad, err := s.ReadSteps()
	if err != nil {
		return nil, err
	}
	seq, _ := strconv.Atoi(key)
	for i := range steps {
		if steps[i].Step.ID == key || steps[i].Step.Seq == seq {
			return &steps[i], nil
		}
	}
	if len(bad) > 0 {
		plan, _ := s.Plan()
		for _, p := range plan {
			if p.ID == key {
				seq = p.Seq
			}
		}
		for _, u := range bad {
			if u.Seq == seq {
				return nil, fmt.Errorf("%w: step %d of %s is not stored: %s (storbench study run runs it again)", input.ErrInvalid, seq, s.Dir, u)
			}
		}
	}
	return nil, fmt.Errorf("%w: no stored step %q in %s (see storbench results list %s)", input.ErrInvalid, key, s.Dir, s.Dir)
}

// runLine is a TPC-C run's headline figures, as a step's log line and the results
// list show them, each with its source (the database's view, or the client's count
// standing in for it, as on SQLite for TPM); a database TPM over a window too short
// for the counters is marked as the report marks it, an unsteady window as the
// report marks it too.
func runLine(run *driver.Result) string {
	source := func(figure string) string {
		if run.FromClient(figure) {
			return "client count"
		}
		return "database"
	}
	tpm := fmt.Sprintf("TPM %.0f (%s)", run.TPMDB, source("tpm_db"))
	if run.TPMDBIndicative() {
		tpm += " " + driver.ShortWindowMark
	}
	return fmt.Sprintf("NOPM %.0f (%s), %s, new-order p95 %.2f ms (client)", run.NOPMDB, source("nopm_db"), tpm, run.Transactions.NewOrder.P95Ms) + windowPart(run)
}

// windowPart is what a run's line says of its timed window: how long it ran until
// steady, and that it was unsteady ("" for a steady window of its duration).
func windowPart(run *driver.Result) string {
	var parts []string
	ran := run.End.Sub(run.Start).Seconds()
	switch run.UntilSteadyEnded {
	case driver.EndedSteady:
		parts = append(parts, fmt.Sprintf("ran %.0f s until steady", ran))
	case driver.EndedAtMax:
		parts = append(parts, fmt.Sprintf("ran its longest, %.0f s", ran))
	}
	if run.Steadiness.Unsteady() {
		parts = append(parts, run.Steadiness.Label())
	}
	if len(parts) == 0 {
		return ""
	}
	return ", window " + strings.Join(parts, ", ")
}

// serverPart names the server a run measured, where it was recorded: ", on
// PostgreSQL 13.23".
func serverPart(run *driver.Result) string {
	product, release := run.Config.Server()
	if product == "" {
		return ""
	}
	return ", on " + strings.TrimSpace(product+" "+release)
}

// headline is a step's one-line summary.
func headline(r *StepResult) string {
	switch {
	case r.Run != nil:
		line := runLine(r.Run)
		if sys := r.Run.System; sys != nil && sys.Summary.CPU != nil {
			line += fmt.Sprintf(", cpu idle %.0f%%", sys.Summary.CPU.Idle)
		}
		if v := r.Run.Bottleneck; v != nil {
			line += ", bottleneck " + v.Detail
		}
		return line + serverPart(r.Run)
	case len(r.Fio) > 0 && len(r.Fio[0].Points) > 0:
		p := r.Fio[0].Points[0]
		return fmt.Sprintf("%s: %.0f IOPS %.1f MB/s (first of %d points)", p.Name, p.IOPS, p.MBps, len(r.Fio[0].Points))
	case r.Consolidation != nil:
		c := r.Consolidation
		var nopm float64
		var oltp int
		for _, in := range c.Instances {
			if in.Run != nil {
				nopm += in.Run.NOPMDB
				oltp++
			}
		}
		line := fmt.Sprintf("%d OLTP instances: NOPM %.0f in all (database counters)", oltp, nopm)
		if c.Summary.BackupMaxSeconds > 0 {
			line += fmt.Sprintf("  backups %.1f s mean, %.1f s max", c.Summary.BackupMeanSeconds, c.Summary.BackupMaxSeconds)
		}
		return line
	case r.Backup != nil && r.Restore != nil:
		return fmt.Sprintf("backup %.1f s (%.0f MB/s), restore %.1f s (%.0f MB/s)", r.Backup.Seconds, r.Backup.MBps, r.Restore.Seconds, r.Restore.MBps)
	case r.Capacity != nil:
		return r.Capacity.Summary()
	}
	return ""
}

// WriteList prints the plan with each step's status and headline figures; a step
// whose file does not read is UNREADABLE, with what is wrong with the file.
func WriteList(out io.Writer, s *Store) error {
	plan, err := s.Plan()
	if err != nil {
		return err
	}
	steps, bad, err := s.ReadSteps()
	if err != nil {
		return err
	}
	byID := map[string]*StepResult{}
	for i := range steps {
		byID[steps[i].Step.ID] = &steps[i]
	}
	unreadable := map[int]Unreadable{}
	for _, u := range bad {
		unreadable[u.Seq] = u
	}
	failed := map[string]*StepResult{}
	fails := s.Failed()
	for i := range fails {
		failed[fails[i].Step.ID] = &fails[i]
	}
	interrupted := map[string]*StepResult{}
	cut := s.Interrupted()
	for i := range cut {
		interrupted[cut[i].Step.ID] = &cut[i]
	}
	tw := tabwriter.NewWriter(out, 0, 0, 2, ' ', 0)
	fmt.Fprintf(tw, "step\tid\tstatus\tfigures\n")
	for _, p := range plan {
		status, figures := "to run", ""
		if r, ok := byID[p.ID]; ok {
			status, figures = "stored "+r.Ended.Format("15:04:05"), headline(r)
		} else if u, ok := unreadable[p.Seq]; ok {
			status, figures = "UNREADABLE", u.String()
			delete(unreadable, p.Seq)
		} else if r, ok := failed[p.ID]; ok {
			status, figures = "FAILED "+r.Ended.Format("15:04:05"), r.Error
		} else if r, ok := interrupted[p.ID]; ok {
			status, figures = "interrupted "+r.Ended.Format("15:04:05"), "partial: "+headline(r)
		}
		fmt.Fprintf(tw, "%d/%d\t%s\t%s\t%s\n", p.Seq, len(plan), p.ID, status, figures)
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	// Step files of numbers the plan does not have.
	for _, u := range bad {
		if _, ok := unreadable[u.Seq]; ok {
			fmt.Fprintf(out, "UNREADABLE, not a step of the plan: %s\n", u)
		}
	}
	fmt.Fprintf(out, "%d of %d steps stored in %s", len(steps), len(plan), s.Dir)
	if n := len(bad); n > 0 {
		fmt.Fprintf(out, "; %d step files unreadable (study run sets them aside and runs their steps again)", n)
	}
	if n := len(failed); n > 0 {
		fmt.Fprintf(out, "; %d failed (run the study again to retry them)", n)
	}
	if n := len(interrupted); n > 0 {
		fmt.Fprintf(out, "; %d interrupted, kept apart (run the study again to run them whole)", n)
	}
	fmt.Fprintln(out)
	return nil
}

// WriteStep prints one stored step in full.
func WriteStep(out io.Writer, r *StepResult) error {
	fmt.Fprintf(out, "step %d %s (%s, target %s), %s to %s, %.1f s restoring the base image first\n", r.Step.Seq, r.Step.ID,
		r.Step.Kind, r.Step.Target, r.Started.Format("2006-01-02 15:04:05"), r.Ended.Format("15:04:05"), r.RestoreSeconds)
	switch {
	case r.Run != nil:
		if err := driver.WriteText(out, r.Run); err != nil {
			return err
		}
		if r.Run.System != nil {
			metrics.WriteText(out, r.Run.System, "means over the timed window")
		}
		bottleneck.WriteText(out, r.Run.Bottleneck)
	case len(r.Fio) > 0:
		if err := fio.WriteTable(out, r.Fio); err != nil {
			return err
		}
	case r.Consolidation != nil:
		writeConsolidation(out, r.Consolidation)
	case r.Capacity != nil:
		writeCapacity(out, r.Capacity)
	}
	for _, t := range []struct {
		what string
		tr   *Transfer
	}{{"backup", r.Backup}, {"restore", r.Restore}} {
		if t.tr == nil {
			continue
		}
		fmt.Fprintf(out, "%s: %.1f MB in %.1f s = %.1f MB/s (MB = 10^6 bytes)\n", t.what, float64(t.tr.Bytes)/1e6, t.tr.Seconds, t.tr.MBps)
		if t.tr.System != nil {
			metrics.WriteText(out, t.tr.System, "means over the whole "+t.what)
		}
	}
	if len(r.Checks) > 0 {
		var failed []string
		for _, c := range r.Checks {
			switch {
			case c.Error != "":
				failed = append(failed, c.ID+" (query failed: "+c.Error+")")
			case c.Violations > 0:
				failed = append(failed, fmt.Sprintf("%s (%d violating rows)", c.ID, c.Violations))
			}
		}
		verdict := "all passed"
		if len(failed) > 0 {
			verdict = "FAILED: " + strings.Join(failed, "; ")
		}
		fmt.Fprintf(out, "consistency conditions checked after the step: %d, %s\n", len(r.Checks), verdict)
	}
	for _, n := range r.Notes {
		fmt.Fprintf(out, "note: %s\n", n)
	}
	return nil
}

// csvColumns are the export's columns: the step, then each kind's figures, each
// named with its source.
var csvColumns = []string{"seq", "id", "target", "experiment", "kind", "memory_bytes", "cpus", "with_replica", "users", "repeat",
	"nopm_db", "tpm_db", "nopm_client", "tpm_client", "new_order_p95_ms", "new_order_p99_ms",
	"cpu_idle_pct", "cpu_iowait_pct", "disk", "disk_read_iops", "disk_write_iops", "disk_write_await_ms", "io_p99_ms",
	"fio_profile", "fio_point", "fio_iops", "fio_mb_s", "fio_read_p99_ms", "fio_write_p99_ms",
	"cycle_backup_s", "cycle_backup_mb_s", "cycle_restore_s", "cycle_restore_mb_s", "base_restore_s", "window_s", "steadiness"}

// ExportKind is the export as outfile knows it again: by its first columns.
var ExportKind = outfile.CSV("a CSV export storbench wrote", strings.Join(csvColumns[:5], ","))

// ExportCSV writes one row per stored step (one per point of a fio step), and
// returns the step files that do not read, which have none.
func ExportCSV(w io.Writer, s *Store) ([]Unreadable, error) {
	steps, bad, err := s.ReadSteps()
	if err != nil {
		return nil, err
	}
	cw := csv.NewWriter(w)
	if err := cw.Write(csvColumns); err != nil {
		return nil, err
	}
	for i := range steps {
		for _, row := range csvRows(&steps[i]) {
			if err := cw.Write(row); err != nil {
				return nil, err
			}
		}
	}
	cw.Flush()
	return bad, cw.Error()
}

func csvRows(r *StepResult) [][]string {
	f := func(v float64) string { return strconv.FormatFloat(v, 'f', 3, 64) }
	st := r.Step
	// The instance's memory and CPUs as the step ran; a step stored before they were
	// recorded has only its variant's (0 and "": the target's own).
	row := map[string]string{"seq": strconv.Itoa(st.Seq), "id": st.ID, "target": st.Target, "experiment": st.Experiment,
		"kind": st.Kind, "memory_bytes": strconv.FormatInt(cmp.Or(r.Memory, st.Memory), 10), "cpus": cmp.Or(r.CPUs, st.CPUs),
		"with_replica": strconv.FormatBool(st.WithReplica), "users": strconv.Itoa(st.Users), "repeat": strconv.Itoa(st.Repeat),
		"base_restore_s": f(r.RestoreSeconds)}
	if run := r.Run; run != nil {
		row["nopm_db"], row["tpm_db"], row["nopm_client"], row["tpm_client"] = f(run.NOPMDB), f(run.TPMDB), f(run.NOPMClient), f(run.TPMClient)
		row["new_order_p95_ms"], row["new_order_p99_ms"] = f(run.Transactions.NewOrder.P95Ms), f(run.Transactions.NewOrder.P99Ms)
		row["window_s"] = f(run.End.Sub(run.Start).Seconds())
		if v := run.Steadiness; v != nil {
			row["steadiness"] = map[bool]string{true: "steady", false: "unsteady"}[v.Steady]
			if v.TooShort {
				row["steadiness"] = "too short"
			}
		}
		if sys := run.System; sys != nil {
			if c := sys.Summary.CPU; c != nil {
				row["cpu_idle_pct"], row["cpu_iowait_pct"] = f(c.Idle), f(c.IOWait)
			}
			if len(sys.Summary.Disks) > 0 {
				d := sys.Summary.Disks[0]
				row["disk"], row["disk_read_iops"], row["disk_write_iops"], row["disk_write_await_ms"] = d.Device, f(d.ReadIOPS), f(d.WriteIOPS), f(d.WriteAwaitMs)
			}
			if len(sys.Summary.Latency) > 0 {
				row["io_p99_ms"] = f(sys.Summary.Latency[0].P99Ms)
			}
		}
	}
	if r.Backup != nil && r.Restore != nil {
		row["cycle_backup_s"], row["cycle_backup_mb_s"], row["cycle_restore_s"], row["cycle_restore_mb_s"] = f(r.Backup.Seconds), f(r.Backup.MBps), f(r.Restore.Seconds), f(r.Restore.MBps)
	}
	values := func(m map[string]string) []string {
		out := make([]string, len(csvColumns))
		for i, c := range csvColumns {
			out[i] = m[c]
		}
		return out
	}
	var rows [][]string
	for _, res := range r.Fio {
		for _, p := range res.Points {
			pr := map[string]string{"fio_profile": res.Profile, "fio_point": p.Name, "fio_iops": f(p.IOPS), "fio_mb_s": f(p.MBps),
				"fio_read_p99_ms": f(p.Read.P99Ms), "fio_write_p99_ms": f(p.Write.P99Ms)}
			for k, v := range row {
				pr[k] = v
			}
			rows = append(rows, values(pr))
		}
	}
	if len(rows) == 0 {
		rows = append(rows, values(row))
	}
	return rows
}

// writeConsolidation prints each instance's figures and the shared disks'.
func writeConsolidation(out io.Writer, c *ConsolidationRun) {
	tw := tabwriter.NewWriter(out, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintf(tw, "instance\trole\tNOPM db\tTPM db\tNOPM client\tnew-order p95 ms\tbackups\tbackup s mean\t\n")
	for _, in := range c.Instances {
		if in.Run != nil {
			fmt.Fprintf(tw, "%s\t%s\t%.0f\t%.0f\t%.0f\t%.2f\t-\t-\t\n", in.Name, in.Role, in.Run.NOPMDB, in.Run.TPMDB, in.Run.NOPMClient,
				in.Run.Transactions.NewOrder.P95Ms)
			continue
		}
		var secs float64
		for _, b := range in.Backups {
			secs += b.Seconds
		}
		mean := 0.0
		if len(in.Backups) > 0 {
			mean = secs / float64(len(in.Backups))
		}
		fmt.Fprintf(tw, "%s\t%s\t-\t-\t-\t-\t%d\t%.1f\t\n", in.Name, in.Role, len(in.Backups), mean)
	}
	tw.Flush()
	f := c.Summary
	fmt.Fprintf(out, "shared disk, per-second averages per I/O over the window: read %.2f ms mean, %.2f ms worst; write %.2f ms mean, %.2f ms worst\n",
		f.MeanReadAwaitMs, f.WorstReadAwaitMs, f.MeanWriteAwaitMs, f.WorstWriteAwaitMs)
	if c.System != nil {
		metrics.WriteText(out, c.System, "means over the common window")
	}
}

// writeCapacity prints a capacity search's probes in the order they ran, what limited
// each, and what it found.
func writeCapacity(out io.Writer, c *CapacityRun) {
	fmt.Fprintf(out, "capacity search: %s, %d users, a probe passes with %g%% of its arrivals completed\n", c.SLO, c.Users, 100*c.MinAchieved)
	tw := tabwriter.NewWriter(out, 0, 0, 2, ' ', 0)
	fmt.Fprintf(tw, "probe\trate TPM\tarrived TPM\tachieved TPM\tNOPM\t%s ms\tresult\tbottleneck\twhy\n", c.SLO.Latency())
	for i, p := range c.Probes {
		latency, result := "-", "FAIL"
		if p.LatencyMs != nil {
			latency = fmt.Sprintf("%.2f", *p.LatencyMs)
		}
		if p.Pass {
			result = "pass"
		}
		verdict := "-"
		if p.Run != nil && p.Run.Bottleneck != nil {
			verdict = p.Run.Bottleneck.Detail
		}
		fmt.Fprintf(tw, "%d\t%.0f\t%.0f\t%.0f\t%.0f\t%s\t%s\t%s\t%s\n", i+1, p.RateTPM, p.ArrivedTPM, p.AchievedTPM, p.NOPM, latency, result, verdict, p.Why)
	}
	tw.Flush()
	fmt.Fprintln(out, c.Summary())
}
