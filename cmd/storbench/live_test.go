package main

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/storbench/storbench/internal/testsupport/pgtest"
	"github.com/storbench/storbench/internal/testsupport/promtest"
)

// TestLiveRunScrapedByPrometheus: a real Prometheus scrapes `run --listen` every
// second; through its HTTP API the run's client TPM is a series of the run's
// seconds, and the transactions its latency histograms counted reconcile with the
// run's own per-second counts: no more than the driver completed, and all but the
// last seconds' (a scrape a second sees all but what came after the last one).
func TestLiveRunScrapedByPrometheus(t *testing.T) {
	t.Parallel()
	srv := pgtest.Start(t)
	dsn := srv.DSN("tpcc")
	if code, out, errOut := storbench(t, "build", "--dsn", dsn, "--warehouses", "1"); code != 0 {
		t.Fatalf("build: exit %d\n%s%s", code, out, errOut)
	}
	port := promtest.FreePort(t)
	prom := promtest.Start(t, fmt.Sprintf("127.0.0.1:%d", port))
	jsonPath := filepath.Join(t.TempDir(), "run.json")
	code, out, errOut := storbench(t, "run", "--dsn", dsn, "--users", "2", "--ramp", "1s", "--duration", "8s",
		"--listen", fmt.Sprint(port), "--json", jsonPath, "--io-latency", "off")
	if code != 0 {
		t.Fatalf("run: exit %d\n%s%s", code, out, errOut)
	}
	if want := fmt.Sprintf("live metrics at http://127.0.0.1:%d/metrics", port); !strings.Contains(out, want) {
		t.Errorf("the run does not say where its endpoint is (%q):\n%s", want, out)
	}
	res := readResult(t, jsonPath)
	ctx := t.Context()

	tpm := prom.Query(ctx, t, `storbench_tpm{target="run",view="client"}[2m]`)
	if len(tpm) != 1 || len(tpm[0].Values) < 5 {
		t.Fatalf("client TPM through Prometheus: %+v, want one series of at least 5 scrapes of a 9 s run", tpm)
	}
	if slices.Max(tpm[0].Values) <= 0 {
		t.Errorf("client TPM never above 0: %v", tpm[0].Values)
	}
	var completed, lastSeconds float64
	for i, s := range res.Timeline {
		completed += s.TPM / 60
		if i >= len(res.Timeline)-2 {
			lastSeconds += s.TPM / 60
		}
	}
	counted := prom.Query(ctx, t, `sum(max_over_time(storbench_transaction_duration_seconds_count{target="run"}[2m]))`)
	if len(counted) != 1 {
		t.Fatalf("histogram counts through Prometheus: %+v", counted)
	}
	n := counted[0].Values[0]
	t.Logf("histograms counted %.0f transactions; the run's timeline %.0f (its last two seconds %.0f)", n, completed, lastSeconds)
	if n > completed+0.5 || n < completed-lastSeconds-0.5 {
		t.Errorf("the latency histograms counted %.0f transactions, the run completed %.0f (%.0f of them in its last two seconds)", n, completed, lastSeconds)
	}
	if db := prom.Query(ctx, t, `max_over_time(storbench_tpm{target="run",view="database"}[2m])`); len(db) != 1 || db[0].Values[0] <= 0 {
		t.Errorf("no database TPM through Prometheus: %+v", db)
	}
	verdict := prom.Query(ctx, t, `storbench_bottleneck{target="run",scope="run"}[2m]`)
	if len(verdict) != 1 || res.Bottleneck == nil || verdict[0].Labels["verdict"] != res.Bottleneck.Short() {
		t.Errorf("the run's verdict through Prometheus: %+v, want the result's %v", verdict, res.Bottleneck)
	}
}

// TestLiveStudyScrapedByPrometheus: a two-step study with --listen shows its
// progress through Prometheus: each step in turn, both stored at the end.
func TestLiveStudyScrapedByPrometheus(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("runs a study and a Prometheus server")
	}
	dir := t.TempDir()
	file := filepath.Join(dir, "live.yaml")
	must(t, os.WriteFile(file, []byte("name: live\ntargets:\n  - name: lite\n    kind: external\n    dsn: sqlite://"+filepath.Join(dir, "tpcc.db")+
		"\nworkload:\n  warehouses: 1\nexperiments:\n  - name: sweep\n    kind: user-sweep\n    users: [1, 2]\n    ramp: 0s\n    duration: 3s\n"+
		"metrics:\n  io_latency: \"off\"\n"), 0o644))
	port := promtest.FreePort(t)
	prom := promtest.Start(t, fmt.Sprintf("127.0.0.1:%d", port))
	code, out, errOut := storbench(t, "study", "run", file, "--results", filepath.Join(dir, "results"), "--listen", fmt.Sprintf("127.0.0.1:%d", port))
	if code != 0 {
		t.Fatalf("study run: exit %d\n%s%s", code, out, errOut)
	}
	ctx := t.Context()
	stored := prom.Query(ctx, t, `max_over_time(storbench_study_steps{state="stored"}[2m])`)
	total := prom.Query(ctx, t, `max_over_time(storbench_study_steps{state="total"}[2m])`)
	if len(stored) != 1 || stored[0].Values[0] != 2 || len(total) != 1 || total[0].Values[0] != 2 {
		t.Errorf("steps stored %+v of %+v through Prometheus, want 2 of 2", stored, total)
	}
	var seen []string
	for _, s := range prom.Query(ctx, t, `storbench_study_step[2m]`) {
		seen = append(seen, s.Labels["seq"]+" "+s.Labels["id"])
	}
	slices.Sort(seen)
	if want := []string{"1 lite/sweep/users=1/rep=1", "2 lite/sweep/users=2/rep=1"}; !slices.Equal(seen, want) {
		t.Errorf("steps in progress through Prometheus: %q, want %q", seen, want)
	}
	if tpm := prom.Query(ctx, t, `storbench_tpm{target="lite",view="client"}[2m]`); len(tpm) != 1 || len(tpm[0].Values) < 3 {
		t.Errorf("the study's client TPM through Prometheus: %+v", tpm)
	}
	if left := prom.Query(ctx, t, `last_over_time(storbench_study_steps_left[2m])`); len(left) != 1 || left[0].Values[0] != 0 {
		t.Errorf("steps left at the end: %+v, want 0", left)
	}
}
