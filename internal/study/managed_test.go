package study

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/storbench/storbench/internal/testsupport/pgtest"
)

// TestResumeOverOlderInterruptedBuild: the study's own instance holds TPC-C tables
// without storbench's record of a build (an older storbench's build interrupted
// before it wrote storbench_build, as its MariaDB and SQLite builds did last): the
// resumed study removes them and builds again, where drop without --force refuses a
// database without that record, and a study instance's DSN is not the user's to
// give to drop.
func TestResumeOverOlderInterruptedBuild(t *testing.T) {
	t.Parallel() // its own servers, directories and names: see docs/architecture.md#tests
	if testing.Short() {
		t.Skip("starts a PostgreSQL server")
	}
	dir := t.TempDir()
	file := []byte(strings.ReplaceAll(`name: older
targets:
  - name: a
    path: DIR/a
workload:
  warehouses: 1
experiments:
  - kind: user-sweep
    users: [1]
    ramp: 1s
    duration: 2s
metrics:
  io_latency: "off"
`, "DIR", dir))
	s, err := Parse("older.yaml", file)
	if err != nil {
		t.Fatal(err)
	}
	results := filepath.Join(dir, "results")
	// Interrupted in its step: the instance stays, stopped, with its build.
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	if err := Run(ctx, s, file, results, Options{Version: "test", Progress: func(Progress) { cancel() }}); !errors.Is(err, context.Canceled) {
		t.Fatalf("interrupted study: %v", err)
	}
	store, err := ReadStore(results)
	if err != nil {
		t.Fatal(err)
	}
	reg, name := store.Registry(), instanceName("a", results)
	t.Cleanup(func() { _, _, _ = store.destroyInstances(context.Background(), true) })
	// What an older storbench's interrupted build left: the tables, no record, no base image.
	if err := os.Remove(filepath.Join(results, "base", name+".json")); err != nil {
		t.Fatal(err)
	}
	st, err := reg.Start(context.Background(), name)
	if err != nil {
		t.Fatal(err)
	}
	pgtest.Exec(t, st.DSN(), "DROP TABLE storbench_objects, storbench_build")
	if _, err := reg.Stop(context.Background(), name); err != nil {
		t.Fatal(err)
	}

	if err := Run(context.Background(), s, file, results, Options{Version: "test"}); err != nil {
		t.Fatalf("resumed study over the older build's tables: %v", err)
	}
	if steps, err := store.Steps(); err != nil || len(steps) != 1 || steps[0].Run == nil {
		t.Errorf("the resumed study stored %v (%v), want its step measured", steps, err)
	}
}
