package pgtest

import (
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/storbench/storbench/internal/instance/postgres/pgserver"
)

// Build is a PostgreSQL server build: its programs' directory and its major version.
type Build struct {
	Major  int
	BinDir string
}

// BundlesDir is where .ci/pgbundles puts the builds of other majors than the
// machine's: $STORBENCH_PG_BUNDLES, default /var/cache/storbench/pg, one directory
// per major.
func BundlesDir() string {
	if d := os.Getenv("STORBENCH_PG_BUNDLES"); d != "" {
		return d
	}
	return "/var/cache/storbench/pg"
}

// Builds are the machine's own build (pgserver.BinDir) and the bundles of the
// majors to test (BundlesDir), by major, for a test to run against each: 13, 17 and
// 18, or those $STORBENCH_PG_MAJORS lists ("13,14,16,17,18": every major
// .ci/pgbundles pins). Without the machine's, the test is skipped; a bundle missing
// is logged: .ci/pgbundles fetches them.
func Builds(t testing.TB) []Build {
	t.Helper()
	if testing.Short() {
		t.Skip("integration test: starts PostgreSQL servers")
	}
	own, err := pgserver.BinDir()
	if err != nil {
		t.Skipf("no PostgreSQL here: %v", err)
	}
	builds := []Build{{majorOf(t, own), own}}
	for _, major := range majorsToTest(t) {
		bin := filepath.Join(BundlesDir(), strconv.Itoa(major), "bin")
		if slices.ContainsFunc(builds, func(b Build) bool { return b.Major == major }) {
			continue
		}
		if _, err := os.Stat(filepath.Join(bin, "postgres")); err != nil {
			t.Logf("no PostgreSQL %d build in %s (bash .ci/pgbundles fetches it): not tested", major, bin)
			continue
		}
		if got := majorOf(t, bin); got != major {
			t.Fatalf("%s runs PostgreSQL %d, not %d", bin, got, major)
		}
		builds = append(builds, Build{major, bin})
	}
	return builds
}

var versionLine = regexp.MustCompile(`\(PostgreSQL\) (\d+)`)

// majorOf is the major version of the postgres in bin.
// majorsToTest are the other majors a test runs against ($STORBENCH_PG_MAJORS).
func majorsToTest(t testing.TB) []int {
	list := os.Getenv("STORBENCH_PG_MAJORS")
	if list == "" {
		return []int{13, 17, 18}
	}
	var majors []int
	for _, f := range strings.Split(list, ",") {
		m, err := strconv.Atoi(strings.TrimSpace(f))
		if err != nil {
			t.Fatalf("STORBENCH_PG_MAJORS=%q: give majors like 13,14,16,17,18", list)
		}
		majors = append(majors, m)
	}
	return majors
}

func majorOf(t testing.TB, bin string) int {
	t.Helper()
	out, err := exec.Command(filepath.Join(bin, "postgres"), "--version").Output()
	m := versionLine.FindSubmatch(out)
	if err != nil || m == nil {
		t.Fatalf("%s/postgres --version: %q, %v", bin, out, err)
	}
	major, _ := strconv.Atoi(string(m[1]))
	return major
}
