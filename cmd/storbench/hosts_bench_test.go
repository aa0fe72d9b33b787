package main

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/storbench/storbench/internal/study"
	"github.com/storbench/storbench/internal/testsupport/netlab"
	"github.com/storbench/storbench/internal/testsupport/pgtest"
)

// TestControllerCPUAcrossHosts is bench/hosts.sh's measurement, not a test: the
// controller's CPU time per transaction driving three remote targets at once (a
// consolidation across the lab's hosts) against one target on this machine's
// loopback and one remote target, each over the timed window only
// (getrusage of the storbench process ÷ transactions completed in the window).
func TestControllerCPUAcrossHosts(t *testing.T) {
	if os.Getenv("STORBENCH_BENCH") == "" {
		t.Skip("a benchmark: run bash bench/hosts.sh")
	}
	const users, ramp, duration, rounds = 4, "2s", "15s", 3
	binary(t)
	lab := netlab.New(t, 3, netlab.Options{PostgreSQL: true, NodeExporter: true})
	local := pgtest.Start(t)
	dir := diskTempDir(t, "hosts-bench-")
	if code, out, errOut := storbench(t, "build", "--dsn", local.DSN("tpcc"), "--warehouses", "1"); code != 0 {
		t.Fatalf("build: exit %d\n%s%s", code, out, errOut)
	}
	experiment := fmt.Sprintf("  - name: three\n    kind: consolidation\n    targets: [db1, db2, db3]\n    users: %d\n    ramp: %s\n    duration: %s\n", users, ramp, duration)
	file, env := hostsStudy(t, lab, dir, experiment, "")
	perTxn := func(path string) float64 {
		var res struct {
			ClientCPU struct {
				PerTransactionMicros float64 `json:"us_per_txn"`
			} `json:"client_cpu"`
		}
		b, err := os.ReadFile(path)
		if err != nil || json.Unmarshal(b, &res) != nil {
			t.Fatalf("no result in %s: %v", path, err)
		}
		return res.ClientCPU.PerTransactionMicros
	}
	runArgs := []string{"--users", fmt.Sprint(users), "--ramp", ramp, "--duration", duration, "--client-cpus", "2", "--io-latency", "off"}
	var rows []string
	for r := 1; r <= rounds; r++ {
		results := filepath.Join(dir, fmt.Sprintf("results-%d", r))
		if code, out := inController(t, lab, env, "study", "run", file, "--results", results); code != 0 {
			t.Fatalf("study run: exit %d\n%s", code, out)
		}
		st, err := study.ReadStore(results)
		if err != nil {
			t.Fatal(err)
		}
		steps, err := st.Steps()
		if err != nil || len(steps) != 1 || steps[0].Consolidation.Controller == nil {
			t.Fatalf("no consolidation stored: %v", err)
		}
		three := steps[0].Consolidation.Controller

		localJSON := filepath.Join(dir, fmt.Sprintf("local-%d.json", r))
		if code, out, errOut := storbench(t, append([]string{"run", "--dsn", local.DSN("tpcc"), "--json", localJSON}, runArgs...)...); code != 0 {
			t.Fatalf("local run: exit %d\n%s%s", code, out, errOut)
		}
		remoteJSON := filepath.Join(dir, fmt.Sprintf("remote-%d.json", r))
		if code, out := inController(t, lab, nil, append([]string{"run", "--dsn", lab.Hosts[0].DSN, "--metrics-host", lab.Hosts[0].MetricsURL, "--json", remoteJSON}, runArgs...)...); code != 0 {
			t.Fatalf("remote run: exit %d\n%s", code, out)
		}
		l, one := perTxn(localJSON), perTxn(remoteJSON)
		rows = append(rows, fmt.Sprintf("round %d: 1 local target %.1f µs/txn; 1 remote target %.1f µs/txn; 3 remote targets at once %.1f µs/txn (%d txns, %.2f CPU-s): %+.1f%% vs local",
			r, l, one, three.MicrosPerTransaction, three.Transactions, three.Seconds, 100*(three.MicrosPerTransaction/l-1)))
	}
	fmt.Printf("controller CPU per transaction (%d users per target, ramp %s, window %s, procedures mode, 1 warehouse each, GOMAXPROCS 2):\n%s\n",
		users, ramp, duration, strings.Join(rows, "\n"))
}
