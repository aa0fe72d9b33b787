package main

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/storbench/storbench/internal/testsupport/pgtest"
)

// TestServerVersions runs storbench end to end on every PostgreSQL build there is
// (the machine's and the bundles of .ci/pgbundles: 13, 15, 17, 18): an instance made
// from the build (--bindir), listed with its version; a build; a run in each mode
// whose result names the version and has the database's own counters (commits and
// WAL, from what that version has); the consistency checks.
func TestServerVersions(t *testing.T) {
	t.Parallel() // its own servers, directories and names: see docs/architecture.md#tests
	for _, b := range pgtest.Builds(t) {
		t.Run(strconv.Itoa(b.Major), func(t *testing.T) {
			name := fmt.Sprintf("pg%d-%d", b.Major, os.Getpid())
			dir := filepath.Join(t.TempDir(), "target")
			if code, out, errOut := storbench(t, "instance", "create", "--path", dir, "--name", name, "--bindir", b.BinDir, "--memory", "512MB"); code != 0 {
				t.Fatalf("instance create --bindir %s: exit %d\n%s%s", b.BinDir, code, out, errOut)
			}
			t.Cleanup(func() { storbench(t, "instance", "destroy", "--name", name, "--force") })
			if _, out, _ := storbench(t, "instance", "list"); !regexp.MustCompile(`(?m)^` + name + `\s+postgres\s+` + strconv.Itoa(b.Major) + `\.`).MatchString(out) {
				t.Errorf("instance list does not show PostgreSQL %d for %s:\n%s", b.Major, name, out)
			}
			dsn := instanceDSN(t, name)
			if code, out, errOut := storbench(t, "build", "--dsn", dsn, "--warehouses", "1"); code != 0 {
				t.Fatalf("build: exit %d\n%s%s", code, out, errOut)
			}
			for _, mode := range []string{"procedures", "sql"} {
				jsonPath := filepath.Join(t.TempDir(), mode+".json")
				code, out, errOut := storbench(t, "run", "--dsn", dsn, "--users", "2", "--ramp", "0s", "--duration", "3s", "--mode", mode,
					"--metrics-interval", "500ms", "--io-latency", "off", "--json", jsonPath)
				if code != 0 {
					t.Fatalf("run --mode %s: exit %d\n%s%s", mode, code, out, errOut)
				}
				res := readResult(t, jsonPath)
				if !strings.Contains(res.Config.ServerVersion, "PostgreSQL "+strconv.Itoa(b.Major)+".") {
					t.Errorf("%s: the result's server version is %q", mode, res.Config.ServerVersion)
				}
				if res.TPMDB <= 0 || res.NOPMDB <= 0 || res.System == nil || res.System.Summary.Database == nil {
					t.Fatalf("%s: no database view (tpm_db %.0f, nopm_db %.0f) or no database counters; notes %v", mode, res.TPMDB, res.NOPMDB, append(res.Notes, res.System.Notes...))
				}
				db := res.System.Summary.Database
				if db.CommitsPerSec <= 0 || db.WALMBps <= 0 {
					t.Errorf("%s: database counters %+v, want commits and WAL", mode, db)
				}
				t.Logf("PostgreSQL %d %s: NOPM %.0f (database) %.0f (client); %.0f commits/s, WAL %.2f MB/s, %.0f fsyncs/s; %s",
					b.Major, mode, res.NOPMDB, res.NOPMClient, db.CommitsPerSec, db.WALMBps, db.FsyncsPerSec, res.System.Sources["database"])
			}
			if code, out, _ := storbench(t, "check", "--dsn", dsn); code != 0 {
				t.Errorf("check: exit %d\n%s", code, out)
			}
		})
	}
}

// TestStudyAcrossVersions: a study of two managed targets on two PostgreSQL majors
// (the oldest and the newest build there is) runs the same sweep on each, and the
// report names each target's version; study plan refuses, before anything runs, a
// bindir without a server build and a backup of a build that has no backup tools.
func TestStudyAcrossVersions(t *testing.T) {
	t.Parallel()
	builds := pgtest.Builds(t)
	if len(builds) < 2 {
		t.Skip("one PostgreSQL build here: bash .ci/pgbundles fetches others")
	}
	slices.SortFunc(builds, func(a, b pgtest.Build) int { return a.Major - b.Major })
	old, cur := builds[0], builds[len(builds)-1]
	dir := diskTempDir(t, "versions-")
	study := func(experiment string) string {
		return fmt.Sprintf(`name: versions
targets:
  - name: old
    path: %s
    bindir: %s
  - name: new
    path: %s
    bindir: %s
workload:
  warehouses: 1
experiments:
%s`, filepath.Join(dir, "old"), old.BinDir, filepath.Join(dir, "new"), cur.BinDir, experiment)
	}
	sweep := "  - kind: user-sweep\n    users: [2]\n    ramp: 0s\n    duration: 3s\n"

	plan := func(text string) (int, string) {
		file := filepath.Join(t.TempDir(), "plan.yaml")
		must(t, os.WriteFile(file, []byte(text), 0o644))
		code, _, errOut := storbench(t, "study", "plan", file, "--results", filepath.Join(t.TempDir(), "r"))
		return code, errOut
	}
	notABuild := strings.Replace(study(sweep), "bindir: "+old.BinDir, "bindir: "+dir, 1)
	if code, errOut := plan(notABuild); code != 2 || !strings.Contains(errOut, ":5: targets[0].bindir "+dir+" has no initdb program") {
		t.Errorf("study plan with a bindir that is no build: exit %d, %q", code, errOut)
	}
	if _, err := os.Stat(filepath.Join(cur.BinDir, "pg_basebackup")); err != nil {
		code, errOut := plan(study("  - kind: backup-restore\n    cycles: 1\n"))
		if code != 2 || !strings.Contains(errOut, "target old: the PostgreSQL build in "+old.BinDir+" has no pg_basebackup") && !strings.Contains(errOut, "target new: the PostgreSQL build in "+cur.BinDir+" has no pg_basebackup") {
			t.Errorf("study plan backing up a build without pg_basebackup: exit %d, %q", code, errOut)
		}
	}

	results, out := runStudyFile(t, study(sweep))
	page := reportPage(t, results)
	_, list, _ := storbench(t, "results", "list", results)
	for _, b := range []pgtest.Build{old, cur} {
		if !strings.Contains(page, fmt.Sprintf("PostgreSQL) %d.", b.Major)) {
			t.Errorf("the report does not name PostgreSQL %d", b.Major)
		}
		// Each step says what it ran on, as it runs and in the store's list.
		if on := fmt.Sprintf(", on PostgreSQL %d.", b.Major); !strings.Contains(out, on) || !strings.Contains(list, on) {
			t.Errorf("the study's step lines or results list do not say %q:\n%s\n%s", on, out, list)
		}
	}
}
