package main

import (
	"encoding/json"
	"fmt"
	"os"
	osexec "os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/storbench/storbench/internal/testsupport/looptest"
)

// smallDisk mounts a fresh ext4 filesystem of mb megabytes (a loop device) for the
// test and unmounts it after: a storage that fills up in seconds.
func smallDisk(t *testing.T, mb int) string {
	t.Helper()
	return looptest.Mount(t, int64(mb)<<20).Dir
}

// managedInstance creates a PostgreSQL instance in path for the test (destroyed
// after it, which must succeed) and returns its DSN. It is registered in the test
// binary's own STORBENCH_HOME (TestMain), under a name no other test uses: tests
// that use it can run in parallel, as none sets the environment.
func managedInstance(t *testing.T, path, name string, flags ...string) string {
	t.Helper()
	code, out, errOut := storbench(t, append([]string{"instance", "create", "--path", path, "--name", name}, flags...)...)
	if code != 0 {
		t.Fatalf("instance create: exit %d\n%s%s", code, out, errOut)
	}
	t.Cleanup(func() {
		if code, out, errOut := storbench(t, "instance", "destroy", "--name", name); code != 0 {
			t.Errorf("instance destroy: exit %d\n%s%s", code, out, errOut)
		}
	})
	return instanceDSN(t, name)
}

// TestDiskFull: a build whose storage fills while it runs (another writer takes the
// room its up-front check found) stops with one line naming the directory and its
// free space; nothing else on that storage is touched.
func TestDiskFull(t *testing.T) {
	t.Parallel() // its own servers, directories and names: see docs/architecture.md#tests
	if testing.Short() {
		t.Skip("mounts a filesystem and builds")
	}
	cases := []struct {
		name       string
		mb         int
		dsn        func(t *testing.T, mnt string) string
		wantInText string
	}{
		{"sqlite", 256, func(t *testing.T, mnt string) string { return "sqlite://" + filepath.Join(mnt, "tpcc.db") }, ""},
		{"postgres instance", 400, func(t *testing.T, mnt string) string {
			return managedInstance(t, filepath.Join(mnt, "pg"), "full")
		}, filepath.Join("pg", "data")},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel() // each case its own disk and instance
			mnt := smallDisk(t, c.mb)
			keep := filepath.Join(mnt, "keep-me")
			os.WriteFile(keep, []byte("the user's"), 0o644)
			dsn := c.dsn(t, mnt)
			fillAfter(t, mnt, 40<<20, 40<<20)
			code, out, errOut := storbench(t, "build", "--dsn", dsn, "--warehouses", "1")
			if code != 1 || strings.Count(strings.TrimRight(errOut, "\n"), "\n") != 0 ||
				!strings.Contains(errOut, "the storage is full") || !strings.Contains(errOut, " MB free of ") || !strings.Contains(errOut, mnt) {
				t.Errorf("build on a full disk: exit %d, stderr %q\n%s", code, errOut, out)
			}
			t.Log(strings.TrimSpace(errOut))
			if c.wantInText != "" && !strings.Contains(errOut, c.wantInText) {
				t.Errorf("the message does not name %s: %s", c.wantInText, errOut)
			}
			if b, err := os.ReadFile(keep); err != nil || string(b) != "the user's" {
				t.Errorf("a file on the full storage was touched: %v", err)
			}
		})
	}
}

// TestDiskFullInodes: a build on a filesystem out of inodes, with space free, stops
// with one line that names the inodes (before, it read "the storage is full or nearly
// (… 241.4 MB free …)", and the operator looked for space).
func TestDiskFullInodes(t *testing.T) {
	t.Parallel() // its own servers, directories and names: see docs/architecture.md#tests
	if testing.Short() {
		t.Skip("mounts a filesystem and builds")
	}
	mnt := looptest.MountWith(t, 400<<20, "-N", "2048").Dir
	dsn := managedInstance(t, filepath.Join(mnt, "pg"), "inodes")
	// Empty files take what the server left but 20 inodes: a build makes about 50 files.
	var fs unix.Statfs_t
	must(t, unix.Statfs(mnt, &fs))
	files := filepath.Join(mnt, "files")
	must(t, os.Mkdir(files, 0o755))
	for i := range int(fs.Ffree) - 21 {
		must(t, os.WriteFile(filepath.Join(files, fmt.Sprint(i)), nil, 0o644))
	}
	code, out, errOut := storbench(t, "build", "--dsn", dsn, "--warehouses", "1")
	t.Log(strings.TrimSpace(errOut))
	if code != 1 || strings.Count(strings.TrimRight(errOut, "\n"), "\n") != 0 || !strings.Contains(errOut, "the storage is out of inodes") ||
		!regexp.MustCompile(`pg/data has \d+ inodes free of \d+, and \d+\.\d MB free of `).MatchString(errOut) || !strings.Contains(errOut, "mkfs.ext4 -i or -N") {
		t.Errorf("build out of inodes: exit %d, stderr %q; want 1 and one line naming the inodes\n%s", code, errOut, out)
	}
}

// TestBuildCountsItsLog: the up-front check counts the WAL the build writes beside its
// data. 1 warehouse on 213 MB free (more than its 126 MB of data, less than that and
// its 120 MB of WAL) is refused before anything is created (before, it started and
// filled the disk); with room for both it builds.
func TestBuildCountsItsLog(t *testing.T) {
	t.Parallel() // its own servers, directories and names: see docs/architecture.md#tests
	if testing.Short() {
		t.Skip("mounts a filesystem and builds")
	}
	mnt := smallDisk(t, 400)
	dsn := managedInstance(t, filepath.Join(mnt, "pg"), "countslog")
	before := tablesOf(t, dsn)
	filler := fillTo(t, mnt, 213e6)
	refused(t, "a build of 1 warehouse needs about 246 MB on "+filepath.Join(mnt, "pg", "data")+" (126 MB of data, 120 MB of log it writes), which has 213 MB free (free space there or use a larger target)",
		"build", "--dsn", dsn, "--warehouses", "1")
	if after := tablesOf(t, dsn); after != before {
		t.Errorf("refused build touched the database: before %q, after %q", before, after)
	}
	must(t, os.Remove(filler))
	fillTo(t, mnt, 270e6)
	if code, out, errOut := storbench(t, "build", "--dsn", dsn, "--warehouses", "1"); code != 0 {
		t.Errorf("build with room for its data and WAL: exit %d\n%s%s", code, out, errOut)
	}
}

// fillTo writes a file of the test's own on mnt that leaves about free bytes for
// the database (smallDisk reserves no blocks for root, so what is available to
// anyone is what the database has).
func fillTo(t *testing.T, mnt string, free int64) string {
	t.Helper()
	size := available(t, mnt) - free
	if size <= 0 {
		t.Fatalf("%s has only %d bytes free", mnt, size+free)
	}
	filler := filepath.Join(mnt, "filler")
	if err := allocate(filler, size); err != nil {
		t.Fatal(err)
	}
	return filler
}

// available is what mnt has free for anyone.
func available(t *testing.T, mnt string) int64 {
	var fs unix.Statfs_t
	if err := unix.Statfs(mnt, &fs); err != nil {
		t.Error(err)
		return 0
	}
	return int64(fs.Bavail) * fs.Bsize
}

// allocate makes the file path of size bytes, or none.
func allocate(path string, size int64) error {
	if out, err := osexec.Command("fallocate", "-l", fmt.Sprint(size), path).CombinedOutput(); err != nil {
		os.Remove(path)
		return fmt.Errorf("fallocate: %v: %s", err, out)
	}
	return nil
}

// fillAfter fills mnt, leaving about free bytes, once something has written grown
// bytes there: another writer taking the room a build found when it started, the
// build then filling the rest itself. The writer goes away when the test ends (its
// files are removed), so that the servers on mnt can stop.
func fillAfter(t *testing.T, mnt string, grown, free int64) {
	t.Helper()
	start := available(t, mnt)
	stop := make(chan struct{})
	var files []string
	var wg sync.WaitGroup
	wg.Go(func() {
		for start-available(t, mnt) < grown {
			select {
			case <-stop:
				return
			case <-time.After(10 * time.Millisecond):
			}
		}
		// The build writes on meanwhile: a file too large for what is left by then
		// fails whole, and a smaller one is tried.
		for i := range 5 {
			size := available(t, mnt) - free
			if size <= 0 {
				return
			}
			f := filepath.Join(mnt, fmt.Sprintf("filler-%d", i))
			if allocate(f, size) == nil {
				files = append(files, f)
				return
			}
		}
		t.Errorf("could not fill %s", mnt)
	})
	t.Cleanup(func() {
		close(stop)
		wg.Wait()
		for _, f := range files {
			os.Remove(f)
		}
	})
}

// TestDiskFullDuringRun: a storage that fills during the timed window stops the run
// within seconds (instead of users retrying to the window's end) with one line
// naming the directory and its free space; the part that ran is kept in --json,
// marked, and nothing on that storage that storbench did not create is touched.
func TestDiskFullDuringRun(t *testing.T) {
	t.Parallel() // its own servers, directories and names: see docs/architecture.md#tests
	if testing.Short() {
		t.Skip("mounts a filesystem, builds and runs")
	}
	cases := []struct {
		name string
		mb   int
		free int64 // left once built: what the run fills
		dsn  func(t *testing.T, mnt string) string
		dir  string // named in the message
	}{
		{"sqlite", 256, 12 << 20, func(t *testing.T, mnt string) string { return "sqlite://" + filepath.Join(mnt, "tpcc.db") }, ""},
		// PostgreSQL cannot write its next WAL segment, panics and restarts: the
		// users see lost connections, which the run puts down to the full disk.
		{"postgres instance", 640, 24 << 20, func(t *testing.T, mnt string) string {
			return managedInstance(t, filepath.Join(mnt, "pg"), "fullrun")
		}, filepath.Join("pg", "data")},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel() // each case its own disk and instance
			mnt := smallDisk(t, c.mb)
			dsn := c.dsn(t, mnt)
			if code, out, errOut := storbench(t, "build", "--dsn", dsn, "--warehouses", "1"); code != 0 {
				t.Fatalf("build: exit %d\n%s%s", code, out, errOut)
			}
			filler := fillTo(t, mnt, c.free)
			before, err := os.Stat(filler)
			if err != nil {
				t.Fatal(err)
			}
			jsonPath := filepath.Join(t.TempDir(), "run.json")
			began := time.Now()
			code, out, errOut := storbench(t, "run", "--dsn", dsn, "--users", "4", "--mode", "sql", "--ramp", "1s", "--duration", "5m",
				"--no-metrics", "--json", jsonPath)
			took := time.Since(began)
			t.Logf("exit %d after %v: %s", code, took.Round(time.Second), strings.TrimSpace(errOut))
			if code != 1 || strings.Count(strings.TrimRight(errOut, "\n"), "\n") != 0 || !strings.HasPrefix(errOut, "storbench: run stopped after ") ||
				!strings.Contains(errOut, "the storage is full") || !strings.Contains(errOut, " MB free of ") || !strings.Contains(errOut, filepath.Join(mnt, c.dir)+" has") {
				t.Errorf("run on a filling disk: exit %d, stderr %q\n%s", code, errOut, out)
			}
			// The window is 5 minutes: a run that rode the errors out would take it all.
			if took > 2*time.Minute {
				t.Errorf("the run went on for %v on a full disk", took)
			}
			var res struct {
				Interrupted bool     `json:"interrupted"`
				Notes       []string `json:"notes"`
				TPMClient   float64  `json:"tpm_client"`
			}
			b, err := os.ReadFile(jsonPath)
			if err != nil || json.Unmarshal(b, &res) != nil {
				t.Fatalf("no result of the part that ran: %v", err)
			}
			if !res.Interrupted || !strings.Contains(strings.Join(res.Notes, "\n"), "stopped (the storage is full") || res.TPMClient <= 0 {
				t.Errorf("the stored result does not say why it stopped, or measured nothing: interrupted %v, TPM %.0f, notes %q", res.Interrupted, res.TPMClient, res.Notes)
			}
			if after, err := os.Stat(filler); err != nil || after.Size() != before.Size() {
				t.Errorf("the test's file on the full storage was touched: %v", err)
			}
		})
	}
}

// TestStudyOnFailure: a target whose storage fills while it is built fails its
// steps; the study stops there (on_failure: stop, the default) or goes on with the
// other target's steps (continue), the failures stored apart and listed, and no
// server is left either way.
func TestStudyOnFailure(t *testing.T) {
	t.Parallel() // its own servers, directories and names: see docs/architecture.md#tests
	if testing.Short() {
		t.Skip("mounts a filesystem and runs studies")
	}
	for _, onFailure := range []string{"stop", "continue"} {
		t.Run(onFailure, func(t *testing.T) {
			// Room for the build (study plan and the build refuse one without),
			// taken by another writer while it runs.
			full := smallDisk(t, 400)
			fillAfter(t, full, 120<<20, 40<<20) // the instance's initdb writes 56 MB first
			dir := diskTempDir(t, "study-failure-")
			file := filepath.Join(dir, "study.yaml")
			must(t, os.WriteFile(file, []byte(`name: failure
on_failure: `+onFailure+`
targets:
  - name: full
    path: `+filepath.Join(full, "pg")+`
  - name: roomy
    path: `+filepath.Join(dir, "pg")+`
workload:
  warehouses: 1
experiments:
  - name: sweep
    kind: user-sweep
    users: [1, 2]
    ramp: 1s
    duration: 2s
`), 0o644))
			results := filepath.Join(dir, "results")
			before := processes()
			code, out, errOut := storbench(t, "study", "run", file, "--results", results)
			t.Logf("exit %d: %s", code, strings.TrimSpace(errOut))
			if code != 1 || strings.Count(strings.TrimRight(errOut, "\n"), "\n") != 0 {
				t.Errorf("exit %d, want 1 and one line on stderr:\n%s%s", code, out, errOut)
			}
			_, list, _ := storbench(t, "results", "list", results)
			stored, failed := len(statusRE("stored").FindAllString(list, -1)), len(statusRE("FAILED").FindAllString(list, -1))
			switch onFailure {
			case "stop":
				if !strings.Contains(errOut, "the storage is full") || !strings.Contains(errOut, "on_failure: continue") ||
					stored != 0 || failed != 1 || !strings.Contains(list, "to run") {
					t.Errorf("the study should stop at its first step, stored as failed with the storage named:\n%s\n%s", errOut, list)
				}
			case "continue":
				if !strings.Contains(errOut, "2 of 4 steps failed") || stored != 2 || failed != 2 ||
					!strings.Contains(list, "could not be prepared for an earlier step") || !strings.Contains(list, "the storage is full") {
					t.Errorf("the study should store the roomy target's 2 steps and list the full one's 2 as failed:\n%s\n%s", errOut, list)
				}
			}
			if left := leftovers(dir, before); len(left) > 0 {
				t.Errorf("processes left behind: %q", left)
			}
		})
	}
}

// statusRE matches a step's status column in results list.
func statusRE(status string) *regexp.Regexp {
	return regexp.MustCompile(`\s` + status + ` \d\d:\d\d:\d\d\s`)
}

// TestStudyClean: a study whose step failed leaves its instance's data on disk (to
// resume from); study clean removes the instance (its directories, its server) and
// keeps the stored results, and refuses a directory that is not a study's store.
func TestStudyClean(t *testing.T) {
	if testing.Short() {
		t.Skip("mounts a filesystem and runs a study")
	}
	full := smallDisk(t, 400)
	fillAfter(t, full, 120<<20, 40<<20) // the build's, after the instance's 56 MB
	dir := diskTempDir(t, "study-clean-")
	file := filepath.Join(dir, "study.yaml")
	must(t, os.WriteFile(file, []byte(`name: clean
targets:
  - name: full
    path: `+filepath.Join(full, "pg")+`
workload:
  warehouses: 1
experiments:
  - name: sweep
    kind: user-sweep
    users: [1]
    ramp: 1s
    duration: 2s
`), 0o644))
	results := filepath.Join(dir, "results")
	before := processes()
	code, out, errOut := storbench(t, "study", "run", file, "--results", results)
	t.Logf("study run: exit %d: %s", code, strings.TrimSpace(errOut))
	if code != 1 || !strings.Contains(errOut, "storbench study clean "+results) {
		t.Fatalf("the failed study should say how to remove its instances: exit %d\n%s%s", code, out, errOut)
	}
	if entries, err := os.ReadDir(filepath.Join(full, "pg")); err != nil || len(entries) == 0 {
		t.Fatalf("the failed step left no instance data to clean (%v): the test proves nothing", err)
	}
	code, out, errOut = storbench(t, "study", "clean", results)
	t.Logf("study clean: exit %d: %s%s", code, out, errOut)
	if code != 0 {
		t.Fatalf("study clean: exit %d\n%s%s", code, out, errOut)
	}
	if entries, err := os.ReadDir(full); err != nil || slices.ContainsFunc(entries, func(e os.DirEntry) bool { return e.Name() == "pg" }) {
		t.Errorf("the instance's directory is left in %s (%v)", full, err)
	}
	if left := leftovers(full, before); len(left) > 0 {
		t.Errorf("processes left behind: %q", left)
	}
	if code, list, errOut := storbench(t, "results", "list", results); code != 0 || len(statusRE("FAILED").FindAllString(list, -1)) != 1 {
		t.Errorf("the stored results should be kept: exit %d\n%s%s", code, list, errOut)
	}
	if code, out, errOut := storbench(t, "study", "clean", dir); code != 2 || !strings.Contains(errOut, "not a storbench results store") {
		t.Errorf("clean of a directory that is not a study's store: exit %d, want 2\n%s%s", code, out, errOut)
	}
	if _, err := os.Stat(file); err != nil {
		t.Errorf("the refused clean touched the directory: %v", err)
	}
}
