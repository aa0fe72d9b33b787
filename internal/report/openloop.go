package report

// openLoopSection is, for the runs that offered a fixed rate, what became of the
// arrivals and both latency views: from when each transaction was due (what an
// application's client waits) and from when a user began it (what the database took).
func openLoopSection(srcs []*Source) *Section {
	t := &Table{Title: "Fixed-rate runs: offered vs achieved",
		Columns: []string{"run", "offered TPM", "arrived TPM", "achieved TPM", "achieved % of arrived", "skipped", "skipped %", "late", "not begun at end",
			"New-Order p90 ms from due", "New-Order p90 ms service", "schedule lag p99 ms", "users busy %"},
		Keys: 1,
		Notes: []string{
			"offered: the rate asked for; arrived: the arrivals the schedule drew in the timed window (Poisson arrivals vary around the rate); achieved: transactions completed in it (storbench's count).",
			"skipped: arrivals already later than the latency limit when a user was free; late: completed with a response time over it; not begun at end: the backlog left when the window closed.",
			"from due: response time from each transaction's arrival in the schedule, the queueing included; service: from when a user began it; schedule lag: how late users began them. See docs/openloop.md.",
		}}
	for _, run := range auditedRuns(srcs) {
		r := run.Run.Rate
		if r == nil {
			continue
		}
		no := run.Run.Transactions.NewOrder
		service := ""
		if no.Service != nil {
			service = num(no.Service.P90Ms, 2)
		}
		t.Rows = append(t.Rows, []string{run.Label, num(r.OfferedTPM, 0), num(r.ArrivedTPM, 0), num(r.AchievedTPM, 0),
			num(100*r.AchievedTPM/max(r.ArrivedTPM, 1e-9), 1), num(float64(r.Skipped), 0), num(100*r.SkippedShare, 1), num(float64(r.Late), 0),
			num(float64(r.Backlog), 0), num(no.P90Ms, 2), service, num(r.Lag.P99Ms, 2), num(100*r.UsersBusy, 0)})
	}
	if len(t.Rows) == 0 {
		return nil
	}
	return &Section{ID: "open-loop", Title: "Fixed-rate load",
		Intro:  []string{openLoopIntro},
		Blocks: []Block{{Table: t}}}
}
