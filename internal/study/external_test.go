package study

import (
	"context"
	"path/filepath"
	"testing"

	"github.com/storbench/storbench/internal/testsupport/pgtest"
)

// TestExternalLocalServerRoles: an external target whose server runs on this host
// has its processes' I/O sampled by role, as `storbench run` samples it.
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
	if !roles["client_backends"] {
		t.Errorf("no client backends among the roles sampled: %v (notes %q)", roles, steps[0].Notes)
	}
}
