package study

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/storbench/storbench/internal/testsupport/looptest"
)

// TestConsolidationLogsOnDataFilesystem: a consolidation's instances are made beside
// the target's path without its wal_path, so their logs are counted on the data's
// filesystem: two copies of 1 PostgreSQL warehouse (252 MB of data, 240 MB of WAL)
// are refused on 350 MB, though the target's own log has a filesystem of its own
// (before, the copies' logs were counted against wal_path's and the plan accepted).
func TestConsolidationLogsOnDataFilesystem(t *testing.T) {
	data, wal := looptest.Mount(t, 350<<20).Dir, looptest.Mount(t, 300<<20).Dir
	study := func(experiment string) string {
		return "name: c\ntargets:\n  - name: small\n    path: " + filepath.Join(data, "pg") + "\n    wal_path: " + filepath.Join(wal, "wal") +
			"\nworkload:\n  warehouses: 1\nexperiments:\n" + experiment
	}
	// The target's own instance fits: its data on one filesystem, its WAL on the other.
	s, err := parseStudy(t, study("  - kind: user-sweep\n    users: [1]\n"))
	if err != nil {
		t.Fatal(err)
	}
	if refusals := CheckMachine(s, filepath.Join(t.TempDir(), "results")); len(refusals) != 0 {
		t.Fatalf("one instance, its WAL apart: %v", refusals)
	}
	s, err = parseStudy(t, study("  - kind: consolidation\n    instances: 2\n    users: 1\n"))
	if err != nil {
		t.Fatal(err)
	}
	want := "m.yaml:7: target small: a consolidation of 2 instances, a copy of the database each: a build of 2 copies of 1 warehouse needs about 492 MB on " +
		filepath.Join(data, "pg-c1") + " (252 MB of data, 240 MB of log it writes)"
	refusals := CheckMachine(s, filepath.Join(t.TempDir(), "results"))
	if len(refusals) != 1 || !strings.HasPrefix(refusals[0].Error(), want) {
		t.Errorf("a consolidation of 2 on 350 MB: %v, want one refusal %q", refusals, want)
	}
}
