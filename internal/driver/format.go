package driver

import (
	"fmt"
	"io"
	"sort"
	"text/tabwriter"

	"github.com/storbench/storbench/internal/engine"
	"github.com/storbench/storbench/internal/tpcc"
)

// WriteText prints the result as the run's closing summary.
func WriteText(out io.Writer, res *Result) error {
	c := res.Config
	inputs := ""
	if c.Inputs != "" { // results written before input rules existed had the spec's
		inputs = ", inputs " + c.Inputs
	}
	schema := ""
	if c.Schema != "" { // not built by storbench, or before schemas had names
		schema = ", schema " + c.Schema
	}
	if c.BuiltBy != "" && c.BuiltBy != engine.BuiltByStorbench {
		schema += " (built by " + c.BuiltBy + ")"
	}
	rate := ""
	if c.Rate > 0 {
		rate = fmt.Sprintf(", offered %.0f TPM (%s arrivals)", c.Rate, c.Arrivals)
		if c.LatencyLimitMs > 0 {
			rate += fmt.Sprintf(", latency limit %g ms", c.LatencyLimitMs)
		}
	}
	fmt.Fprintf(out, "\n%s, %s, %s%s, mode %s%s%s, ramp %gs, timed %gs\n",
		c.Engine, tpcc.Count(c.Users, "user"), tpcc.Count(c.Warehouses, "warehouse"), schema, c.Mode, inputs, rate, c.RampSeconds, c.DurationSeconds)
	tw := tabwriter.NewWriter(out, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintf(tw, "throughput\tTPM\tNOPM\t\n")
	fmt.Fprintf(tw, "database view (HammerDB-compatible)\t%.0f\t%.0f\t\n", res.TPMDB, res.NOPMDB)
	fmt.Fprintf(tw, "client view (storbench count)\t%.0f\t%.0f\t\n", res.TPMClient, res.NOPMClient)
	if err := tw.Flush(); err != nil {
		return err
	}
	fmt.Fprintf(out, "  database TPM: %s\n", res.Sources["tpm_db"])
	if res.TPMDBIndicative() {
		fmt.Fprintf(out, "    %s\n", ShortWindowMark)
	}
	fmt.Fprintf(out, "  database NOPM: %s\n", res.Sources["nopm_db"])
	if src, ok := res.Sources["hammerdb_nopm"]; ok {
		fmt.Fprintf(out, "HammerDB NOPM: %.0f (%s)\n", res.HammerDBNOPM, src)
	}
	if v := res.Steadiness; v != nil {
		fmt.Fprintf(out, "steadiness: %s\n", v)
	}

	if err := writeRate(out, res.Rate); err != nil {
		return err
	}
	from := ""
	if res.Rate != nil {
		from = ", from when each was due"
	}
	fmt.Fprintf(out, "\nresponse times in ms (client-measured%s, timed window)\n", from)
	tw = tabwriter.NewWriter(out, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintf(tw, "transaction\tcount\trollbacks\tretries\terrors\tmean\tp50\tp90\tp95\tp99\tmax\t90%% limit\t\n")
	for t := range tpcc.NumTransactions {
		s := res.Transactions.Of(t)
		fmt.Fprintf(tw, "%s\t%d\t%d\t%d\t%d\t%.2f\t%.2f\t%.2f\t%.2f\t%.2f\t%.2f\t%.0f\t\n", t, s.Count, s.Rollbacks,
			s.Retries, s.Errors, s.MeanMs, s.P50Ms, s.P90Ms, s.P95Ms, s.P99Ms, s.MaxMs, s.P90LimitMs)
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	if res.Rate != nil {
		fmt.Fprintf(out, "\nservice times in ms (from when a user began each)\n")
		tw = tabwriter.NewWriter(out, 0, 0, 2, ' ', tabwriter.AlignRight)
		fmt.Fprintf(tw, "transaction\tmean\tp50\tp90\tp95\tp99\tmax\t\n")
		for t := range tpcc.NumTransactions {
			if s := res.Transactions.Of(t).Service; s != nil {
				fmt.Fprintf(tw, "%s\t%.2f\t%.2f\t%.2f\t%.2f\t%.2f\t%.2f\t\n", t, s.MeanMs, s.P50Ms, s.P90Ms, s.P95Ms, s.P99Ms, s.MaxMs)
			}
		}
		l := res.Rate.Lag
		fmt.Fprintf(tw, "schedule lag\t%.2f\t%.2f\t%.2f\t%.2f\t%.2f\t%.2f\t\n", l.MeanMs, l.P50Ms, l.P90Ms, l.P95Ms, l.P99Ms, l.MaxMs)
		if err := tw.Flush(); err != nil {
			return err
		}
	}
	if d := res.Transactions.Delivery; d.Skipped > 0 {
		fmt.Fprintf(out, "  delivery: %d districts had no order to deliver (skipped, 2.7.4.2)\n", d.Skipped)
	}

	fmt.Fprintf(out, "\ninput audit (5.5.1.5, 5.5.1.6)\n")
	tw = tabwriter.NewWriter(out, 0, 0, 2, ' ', 0)
	for _, a := range res.Audit {
		fmt.Fprintf(tw, "  %s\t%.2f%s\t[%g, %g]\t%s\t%s\n", a.Name, a.Value, a.Unit, a.Min, a.Max, a.Status, a.Note)
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	if len(res.ErrorsByKind) > 0 {
		kinds := make([]string, 0, len(res.ErrorsByKind))
		for k := range res.ErrorsByKind {
			kinds = append(kinds, k)
		}
		sort.Strings(kinds)
		fmt.Fprintf(out, "\nerrors by kind:")
		for _, k := range kinds {
			fmt.Fprintf(out, " %s=%d", k, res.ErrorsByKind[k])
		}
		fmt.Fprintln(out)
	}
	cpu := res.ClientCPU
	demand := ""
	if cpu.Demand != nil {
		demand = fmt.Sprintf("; ran or waited for a CPU %.0f%%", *cpu.Demand*100)
	}
	if cpu.QuotaCPUs > 0 {
		demand += fmt.Sprintf("; its cgroup's quota %g CPU", cpu.QuotaCPUs)
	}
	fmt.Fprintf(out, "\nclient CPU: %.1f µs per completed transaction (user %.2f s, system %.2f s over the window; %.0f%% of --client-cpus %d%s)\n",
		cpu.PerTransactionMicros, cpu.UserSeconds, cpu.SystemSeconds, cpu.Utilization*100, c.ClientCPUs, demand)
	for _, n := range res.Notes {
		fmt.Fprintf(out, "note: %s\n", n)
	}
	return nil
}

// writeRate prints what became of an open-loop run's arrivals.
func writeRate(out io.Writer, r *RateResult) error {
	if r == nil {
		return nil
	}
	_, err := fmt.Fprintf(out, "open loop: offered %.0f TPM, arrived %.0f, achieved %.0f (%.1f%% of arrived); skipped %d (%.1f%%), late %d, not begun at the end %d; users busy %.0f%%\n",
		r.OfferedTPM, r.ArrivedTPM, r.AchievedTPM, 100*r.AchievedTPM/max(r.ArrivedTPM, 1e-9), r.Skipped, 100*r.SkippedShare, r.Late, r.Backlog, 100*r.UsersBusy)
	return err
}
