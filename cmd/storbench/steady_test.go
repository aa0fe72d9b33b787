package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestUntilSteadyRefused: a window run until steady for no longer than its duration,
// or whose duration is too short to judge, is refused before anything connects, on
// the command line and in a study file, in one line naming the setting (exit 2).
func TestUntilSteadyRefused(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	dsn := "sqlite://" + filepath.Join(dir, "tpcc.db")
	refused(t, "--until-steady 1m0s is not longer than the duration 5m0s (give the longest the timed window may run, above its duration: e.g. 10m)",
		"run", "--dsn", dsn, "--until-steady", "1m")
	refused(t, "--until-steady needs a duration of at least 20 s, the shortest window judged steady or not, and the duration is 10s",
		"run", "--dsn", dsn, "--duration", "10s", "--until-steady", "1m")

	study := filepath.Join(dir, "steady.yaml")
	write := func(experiment string) {
		t.Helper()
		must(t, os.WriteFile(study, []byte("name: steady\ntargets:\n  - name: a\n    path: "+filepath.Join(dir, "a")+
			"\nworkload:\n  warehouses: 1\nexperiments:\n  - kind: user-sweep\n    users: [1]\n"+experiment), 0o644))
	}
	write("    duration: 1m\n    until_steady:\n      max: 30s\n")
	refused(t, study+":12: experiments[0].until_steady.max 30s is not longer than the duration 1m0s", "study", "plan", study)
	write("    until_steady: {}\n")
	refused(t, study+":10: experiments[0].until_steady has no max (give the longest the timed window may run, e.g. until_steady: {max: 10m})", "study", "plan", study)
	if got := listing(dir); !strings.HasPrefix(got, "steady.yaml=") || strings.Contains(got, ",") {
		t.Errorf("refusals left %q in %s, want only the study file", got, dir)
	}
}
