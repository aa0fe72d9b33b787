package hammerdb

import (
	"bytes"
	"encoding/json"
	"fmt"
	"maps"
	"math"
	"strconv"
	"time"

	"github.com/storbench/storbench/internal/driver"
	"github.com/storbench/storbench/internal/steady"
)

// Is tells whether a JSON document is a job report: its "schema" says so.
func Is(b []byte) bool {
	var head struct {
		Schema string `json:"schema"`
	}
	return json.Unmarshal(b, &head) == nil && head.Schema == SchemaName
}

// Read is a TPROC-C job report as a run: HammerDB's NOPM and TPM as the database
// view, its response times per type, its transaction count as the timeline, each
// figure's source naming the report. What a HammerDB report does not hold (the
// client's count, NOPM per second, the sampler's figures) is marked not measured,
// never filled in. A report storbench wrote gives back its figures and sources.
func Read(b []byte) (*driver.Result, error) {
	if err := Validate(b); err != nil {
		return nil, err
	}
	var r Report
	dec := json.NewDecoder(bytes.NewReader(b))
	if err := dec.Decode(&r); err != nil {
		return nil, fmt.Errorf("does not read as a job report: %v", err)
	}
	began, err := parseTime(r.Job.Timestamp)
	if err != nil {
		return nil, err
	}
	zone := zoneOf(r.Job, began)
	began = began.Add(-zone)
	ramp := time.Duration(r.BenchmarkConfig.RampupMinutes * float64(time.Minute)).Round(time.Millisecond)
	window := time.Duration(r.BenchmarkConfig.DurationMinutes * float64(time.Minute)).Round(time.Millisecond)
	res := &driver.Result{Start: began.Add(ramp), NOPMDB: r.Result.NOPM, TPMDB: r.Result.TPM,
		Config: driver.RunConfig{Engine: r.Job.Database, Users: r.BenchmarkConfig.VirtualUsers, Warehouses: r.BenchmarkConfig.Warehouses,
			RampSeconds: ramp.Seconds(), DurationSeconds: window.Seconds(), Version: "HammerDB " + r.Job.HDBVersion,
			ServerVersion: r.Job.DatabaseDisplay + " " + r.Job.Release}}
	res.End = res.Start.Add(window)
	by := "HammerDB job report " + r.Job.JobID + " (" + r.Job.HDBVersion + ")"
	res.Sources = map[string]string{
		"nopm_db":     by + ": result.nopm",
		"tpm_db":      by + ": result.tpm",
		"nopm_client": driver.NotMeasured + ": a HammerDB job report has no client count",
		"tpm_client":  driver.NotMeasured + ": a HammerDB job report has no client count",
		"timeline":    by + ": transaction_count, transactions a minute as HammerDB sampled them",
		"transactions": by + ": response_times over HammerDB's whole run (its elapsed_ms, ramp-up included), " +
			"p25/p50/p75/p95/p99 as it gives them; no p90",
		"timeline_nopm": driver.NotMeasured + ": a HammerDB job report has no NOPM over time",
	}
	if sb := r.Storbench; sb != nil && r.Artifact != nil && r.Artifact.Source == "storbench" {
		// storbench's own report: its figures and sources as they were, but for
		// what the report does not carry (NOPM second by second).
		res.NOPMClient, res.TPMClient = sb.NOPMClient, sb.TPMClient
		res.Sources = maps.Clone(sb.Sources)
		res.Sources["timeline_nopm"] = driver.NotMeasured + ": a job report has no NOPM over time"
		res.Config.Engine, res.Config.Mode, res.Config.Inputs, res.Config.Version = sb.Engine, sb.Mode, sb.Inputs, sb.Version
		res.Config.ServerVersion = r.Job.Database + " " + r.Job.Release
		res.Notes = append(res.Notes, "read from a HammerDB job report storbench wrote ("+r.Job.JobID+")")
	} else {
		res.Notes = append(res.Notes, "HammerDB's figures, from its job report "+r.Job.JobID+" ("+r.Job.HDBVersion+", "+r.Job.DatabaseDisplay+" "+r.Job.Release+")")
	}
	if rt := r.ResponseTimes; rt != nil {
		for _, row := range rt.Rows {
			for _, rn := range rowNames {
				if rn.name != row.Name {
					continue
				}
				st := res.Transactions.Of(rn.txn)
				st.Count, st.MeanMs, st.MaxMs, st.P50Ms, st.P95Ms, st.P99Ms = row.Calls, row.AvgMs, row.MaxMs, row.P50Ms, row.P95Ms, row.P99Ms
				if row.P90Ms != nil {
					st.P90Ms = *row.P90Ms
				}
			}
		}
	}
	if tc := r.TransactionCnt; tc != nil && len(tc.Series) > 0 {
		end := int(math.Round(window.Seconds()))
		for _, p := range tc.Series[0].Points {
			at, err := parseTime(p.Timestamp)
			if err != nil {
				return nil, err
			}
			at = at.Add(-zone)
			sec := driver.Second{T: int(math.Round(at.Sub(res.Start).Seconds())), TPM: p.Value, Phase: driver.PhaseTimed}
			if sec.T <= 0 {
				sec.Phase = driver.PhaseRamp
			}
			// After the window, the users stopping: HammerDB's shutdown tail
			// (its analysis_hints say to leave it out).
			if sec.T <= end {
				res.Timeline = append(res.Timeline, sec)
			}
		}
	}
	if r.Storbench == nil {
		// A timeline sampled every 10 s is not what the steadiness rule judges
		// (two-second buckets of per-second counts).
		res.Steadiness = &steady.Verdict{NotJudged: true, Why: "HammerDB samples its transaction count every 10 s; storbench judges steadiness on per-second counts"}
	}
	return res, nil
}

// zoneOf is the offset from UTC of a report's local times. HammerDB writes them
// without a zone, but its job ID begins with the job's start in Unix seconds (8 hex
// digits; storbench's too, whose times are UTC): the offset is the timestamp read as
// UTC less that, to the quarter hour. 0 when the ID does not begin so.
func zoneOf(job Job, stamp time.Time) time.Duration {
	if len(job.JobID) < 8 {
		return 0
	}
	secs, err := strconv.ParseUint(job.JobID[:8], 16, 32)
	if err != nil {
		return 0
	}
	zone := stamp.Sub(time.Unix(int64(secs), 0)).Round(15 * time.Minute)
	if zone.Abs() > 14*time.Hour {
		return 0 // not a start time: the zones span UTC-12 to UTC+14
	}
	return zone
}

// parseTime reads a report's time: wall-clock time without a zone, or its T variant.
func parseTime(s string) (time.Time, error) {
	for _, layout := range []string{timeLayout, "2006-01-02T15:04:05"} {
		if t, err := time.Parse(layout, s); err == nil {
			return t, nil
		}
	}
	return time.Time{}, fmt.Errorf("time %q is not YYYY-MM-DD HH:MM:SS", s)
}
