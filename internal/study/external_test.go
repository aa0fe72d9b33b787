package study

import (
	"context"
	"path/filepath"
	"testing"

	"github.com/storbench/storbench/internal/procrole"
	"github.com/storbench/storbench/internal/testsupport/pgtest"
)

// TestExternalLocalServerRoles: an external target whose server runs on this host
// is sampled as `storbench run` samples it (metrics.ForDatabase): its processes' I/O
// by role and the disk of the data directory it reports.
func TestExternalLocalServerRoles(t *testing.T) {
	t.Parallel() // its own servers, directories and names: see docs/architecture.md#tests
	if testing.Short() {
		t.Skip("starts a PostgreSQL server")
	}
	srv := pgtest.Start(t)
	dir := t.TempDir()
	file := []byte(`name: local-external
targets:
  - name: local
    kind: external
    dsn: ` + srv.DSN("tpcc") + `
workload:
  warehouses: 1
experiments:
  - kind: user-sweep
    users: [1]
    ramp: 1s
    duration: 3s
metrics:
  io_latency: "off"
`)
	s, err := Parse("external.yaml", file)
	if err != nil {
		t.Fatal(err)
	}
	results := filepath.Join(dir, "results")
	if err := Run(context.Background(), s, file, results, Options{Version: "test"}); err != nil {
		t.Fatal(err)
	}
	store, err := ReadStore(results)
	if err != nil {
		t.Fatal(err)
	}
	steps, err := store.Steps()
	if err != nil || len(steps) != 1 || steps[0].Run == nil || steps[0].Run.System == nil {
		t.Fatalf("%d steps stored (%v)", len(steps), err)
	}
	roles := map[string]bool{}
	for _, r := range steps[0].Run.System.Summary.ProcessIO {
		roles[r.Role] = true
	}
	if !roles[procrole.Clients] {
		t.Errorf("no client backends among the roles sampled: %v (notes %q)", roles, steps[0].Notes)
	}
	// Before run and studies chose alike, the study sampled no disk of its own for it.
	placed := map[string]string{}
	for _, p := range steps[0].Run.System.Placements {
		placed[p.Role] = p.Path
	}
	if placed["data"] != srv.Dir {
		t.Errorf("the server's data directory %s is not placed on its disk: placements %v (notes %q)", srv.Dir, placed, steps[0].Run.System.Notes)
	}
}
