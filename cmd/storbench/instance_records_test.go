package main

import (
	"os"
	osexec "os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/storbench/storbench/internal/instance/mariadb/mariadbserver"
	"github.com/storbench/storbench/internal/testsupport/looptest"
)

// The tests below break an instance's record the ways a machine does (a create
// killed half-way, a state file cut short, a disk not mounted) and expect list,
// destroy and create to agree about it, and nothing but that instance affected.

// oneLine tells whether a command's stderr is one line.
func oneLine(stderr string) bool { return strings.Count(strings.TrimRight(stderr, "\n"), "\n") == 0 }

// alive tells whether pid runs (a zombie, which has no command line, does not).
func alive(pid int) bool {
	b, err := os.ReadFile(filepath.Join("/proc", strconv.Itoa(pid), "cmdline"))
	return err == nil && len(b) > 0
}

// pidFile reads the process id on a pid file's first line (0: none).
func pidFile(t *testing.T, path string) int {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	line, _, _ := strings.Cut(string(b), "\n")
	pid, _ := strconv.Atoi(strings.TrimSpace(line))
	return pid
}

// exitsSoon waits a few seconds for pid to exit and tells whether it did.
func exitsSoon(pid int) bool {
	for range 40 {
		if !alive(pid) {
			return true
		}
		time.Sleep(100 * time.Millisecond)
	}
	return false
}

// TestInstanceCreateKilled: a create killed (SIGKILL) once it has marked its
// directory, while initdb runs, leaves an instance that list shows as incomplete, a
// create of the same name or path is refused naming it, destroy removes what the
// create made and leaves no process, and the same create then works.
func TestInstanceCreateKilled(t *testing.T) {
	t.Parallel() // its own home, directories and names: see docs/architecture.md#tests
	if testing.Short() {
		t.Skip("builds storbench and initialises PostgreSQL")
	}
	b := binaryIn{env: []string{"STORBENCH_HOME=" + t.TempDir()}}
	work := t.TempDir()
	path, name := filepath.Join(work, "pg"), "killed"
	create := []string{"instance", "create", "--path", path, "--name", name, "--max-connections", "10"}
	before := processes()
	marker := filepath.Join(path, ".storbench-instance")
	b.stopAfter(t, syscall.SIGKILL, func(string) bool { _, err := os.Stat(marker); return err == nil }, 10*time.Second, create...)
	t.Cleanup(func() { b.run(t, "instance", "destroy", "--force", "--name", name) })

	code, out, errOut := b.run(t, "instance", "list")
	if code != 0 || !regexp.MustCompile(`(?m)^killed\s+postgres\s+\S+\s+incomplete\s.*`+regexp.QuoteMeta(path)+`$`).MatchString(out) ||
		!strings.Contains(out, "storbench instance destroy --name killed") {
		t.Fatalf("instance list: exit %d; want killed shown incomplete with how to destroy it:\n%s%s", code, out, errOut)
	}
	for _, again := range [][]string{create, {"instance", "create", "--path", filepath.Join(work, "other"), "--name", name}} {
		if code, _, errOut := b.run(t, again...); code != 2 || !oneLine(errOut) || !strings.Contains(errOut, "destroy") || !strings.Contains(errOut, name) {
			t.Errorf("%v over the killed create: exit %d, %q; want 2 and one line naming %s and destroy", again, code, errOut, name)
		}
	}
	if code, out, errOut := b.run(t, "instance", "destroy", "--name", name); code != 0 {
		t.Fatalf("destroy of the incomplete instance: exit %d\n%s%s", code, out, errOut)
	}
	if _, err := os.Stat(path); !os.IsNotExist(err) {
		t.Errorf("%s left after destroy: %v", path, err)
	}
	if left := leftovers(path, before); len(left) > 0 {
		t.Errorf("processes left: %q", left)
	}
	if code, out, errOut := b.run(t, create...); code != 0 {
		t.Fatalf("create again: exit %d\n%s%s", code, out, errOut)
	}
	if code, out, errOut := b.run(t, "instance", "destroy", "--name", name); code != 0 {
		t.Errorf("destroy: exit %d\n%s%s", code, out, errOut)
	}
}

// TestInstanceDamagedState: instances whose state files are cut short (PostgreSQL and
// MariaDB, running) are listed as damaged beside a healthy one, which build and run
// use as before; destroy stops each damaged one's server by its pid file and
// removes its directory; a pid file naming another server (a stale file whose pid
// was reused) gets that server left alone.
func TestInstanceDamagedState(t *testing.T) {
	t.Parallel() // its own home, servers, directories and names: see docs/architecture.md#tests
	if testing.Short() {
		t.Skip("builds storbench and starts PostgreSQL and MariaDB servers")
	}
	home, work := t.TempDir(), t.TempDir()
	b := binaryIn{env: []string{"STORBENCH_HOME=" + home}}
	mustRun := func(args ...string) string {
		t.Helper()
		code, out, errOut := b.run(t, args...)
		if code != 0 {
			t.Fatalf("%v: exit %d\n%s%s", args, code, out, errOut)
		}
		return out
	}
	type inst struct{ name, engine, pidFile string }
	damaged := []inst{{"aa", "postgres", "data/postmaster.pid"}, {"cc", "postgres", "data/postmaster.pid"}}
	if _, _, err := mariadbserver.Binaries(); err == nil {
		damaged = append(damaged, inst{"mm", "mariadb", "data/mariadbd.pid"})
	} else {
		t.Logf("no MariaDB instance: %v", err)
	}
	var bbDSN string
	for _, in := range append([]inst{{"bb", "postgres", ""}}, damaged...) {
		mustRun("instance", "create", "--engine", in.engine, "--path", filepath.Join(work, in.name), "--name", in.name, "--max-connections", "10")
		t.Cleanup(func() { b.run(t, "instance", "destroy", "--force", "--name", in.name) })
		if in.name == "bb" {
			bbDSN = strings.TrimSpace(mustRun("instance", "dsn", "--name", "bb"))
		}
	}
	bbPID := pidFile(t, filepath.Join(work, "bb", "data", "postmaster.pid"))
	// cc stopped, its postmaster.pid left naming bb's server.
	mustRun("instance", "stop", "--name", "cc")
	stale := filepath.Join(work, "cc", "data", "postmaster.pid")
	must(t, os.WriteFile(stale, []byte(strconv.Itoa(bbPID)+"\n"+filepath.Join(work, "cc", "data")+"\n"), 0o600))
	if owner, err := os.Stat(filepath.Dir(stale)); err == nil { // the server's user, as its own file is
		st := owner.Sys().(*syscall.Stat_t)
		must(t, os.Chown(stale, int(st.Uid), int(st.Gid)))
	}
	pids := map[string]int{}
	for _, in := range damaged {
		pids[in.name] = pidFile(t, filepath.Join(work, in.name, in.pidFile))
		state := filepath.Join(home, "instances", in.name+".json")
		info, err := os.Stat(state)
		must(t, err)
		must(t, os.Truncate(state, info.Size()/2))
	}

	out := mustRun("instance", "list")
	for _, in := range damaged {
		if !regexp.MustCompile(`(?m)^`+in.name+`\s+`+in.engine+`\s+\S+\s+damaged\s`).MatchString(out) ||
			!strings.Contains(out, "instance "+in.name+" is damaged (state file ") || !strings.Contains(out, "destroy --name "+in.name) {
			t.Errorf("instance list does not show %s damaged with the fix:\n%s", in.name, out)
		}
	}
	if !regexp.MustCompile(`(?m)^bb\s+postgres\s+\S+\s+running\s`).MatchString(out) || !strings.Contains(out, "unexpected end of JSON input") {
		t.Errorf("instance list: want bb running and what is wrong with the others:\n%s", out)
	}
	// The healthy instance is used as before: build and run lease it.
	mustRun("build", "--dsn", bbDSN, "--warehouses", "1", "--workers", "2")
	mustRun("run", "--dsn", bbDSN, "--users", "1", "--ramp", "0s", "--duration", "2s", "--no-metrics")
	if code, _, errOut := b.run(t, "instance", "start", "--name", "aa"); code != 2 || !oneLine(errOut) || !strings.Contains(errOut, "instance destroy --name aa") {
		t.Errorf("start of a damaged instance: exit %d, %q; want 2 and one line naming destroy", code, errOut)
	}

	for _, in := range damaged {
		out := mustRun("instance", "destroy", "--name", in.name)
		if !strings.Contains(out, "instance "+in.name+" destroyed") {
			t.Errorf("destroy %s: %s", in.name, out)
		}
		if _, err := os.Stat(filepath.Join(work, in.name)); !os.IsNotExist(err) {
			t.Errorf("%s's directory left after destroy: %v", in.name, err)
		}
		if in.name != "cc" && !exitsSoon(pids[in.name]) {
			t.Errorf("%s's server (pid %d) still runs after destroy", in.name, pids[in.name])
		}
	}
	if !alive(bbPID) {
		t.Errorf("bb's server (pid %d), named by cc's stale pid file, was stopped by cc's destroy", bbPID)
	}
	out = mustRun("instance", "list")
	if !regexp.MustCompile(`(?m)^bb\s+postgres\s+\S+\s+running\s`).MatchString(out) || strings.Count(out, "\n") != 2 {
		t.Errorf("instance list after the destroys: want bb alone, running:\n%s", out)
	}
}

// TestInstanceDestroyUnmounted: an instance whose disk is not mounted is not
// forgotten: destroy refuses, naming the missing directory and --force, and keeps it
// listed; --force forgets it and says what it left; mounted again, its data is there.
func TestInstanceDestroyUnmounted(t *testing.T) {
	t.Parallel() // its own home, disk and names: see docs/architecture.md#tests
	if testing.Short() {
		t.Skip("builds storbench and initialises PostgreSQL on a loop device")
	}
	disk := newLostDisk(t, 256<<20)
	b := binaryIn{env: []string{"STORBENCH_HOME=" + t.TempDir()}}
	path := disk.path
	if code, out, errOut := b.run(t, "instance", "create", "--path", path, "--name", "lost", "--max-connections", "10"); code != 0 {
		t.Fatalf("create: exit %d\n%s%s", code, out, errOut)
	}
	if code, out, errOut := b.run(t, "instance", "stop", "--name", "lost"); code != 0 {
		t.Fatalf("stop: exit %d\n%s%s", code, out, errOut)
	}
	disk.mount(t, false)
	code, out, errOut := b.run(t, "instance", "destroy", "--name", "lost")
	if code != 2 || !oneLine(errOut) || !strings.Contains(errOut, path+" is not there") || !strings.Contains(errOut, "--force") {
		t.Errorf("destroy with the disk unmounted: exit %d, %q; want 2 and one line naming %s and --force\n%s", code, errOut, path, out)
	}
	if code, out, _ := b.run(t, "instance", "list"); code != 0 || !regexp.MustCompile(`(?m)^lost\s`).MatchString(out) {
		t.Errorf("the refused destroy forgot the instance: exit %d\n%s", code, out)
	}
	code, out, errOut = b.run(t, "instance", "destroy", "--force", "--name", "lost")
	if code != 0 || !strings.Contains(out, path+" is not there") || !strings.Contains(out, "is left") {
		t.Errorf("destroy --force: exit %d; want a line saying what was left in %s:\n%s%s", code, path, out, errOut)
	}
	if code, out, _ := b.run(t, "instance", "list"); code != 0 || regexp.MustCompile(`(?m)^lost\s`).MatchString(out) {
		t.Errorf("destroy --force kept the instance: exit %d\n%s", code, out)
	}
	disk.mount(t, true)
	if _, err := os.Stat(filepath.Join(path, "data", "PG_VERSION")); err != nil {
		t.Errorf("the instance's data is not on its disk mounted again: %v", err)
	}
}

// lostDisk is a loop filesystem that a test unmounts and mounts again; path, the
// directory it gives an instance there, is removed before the disk is detached.
type lostDisk struct {
	*looptest.Disk
	path string
}

func newLostDisk(t *testing.T, size int64) lostDisk {
	t.Helper()
	d := lostDisk{looptest.Mount(t, size), ""}
	d.path = filepath.Join(d.Dir, "pg")
	t.Cleanup(func() { os.RemoveAll(d.path) }) // before the disk is unmounted
	return d
}

// mount mounts the disk (on) or unmounts it.
func (d lostDisk) mount(t *testing.T, on bool) {
	t.Helper()
	args := []string{"umount", d.Dir}
	if on {
		args = []string{"mount", d.Dev, d.Dir}
	}
	// A server's last processes may still be exiting when its stop returned: an
	// unmount is tried again for a while before the holders are named.
	for try := 0; ; try++ {
		out, err := osexec.Command(args[0], args[1:]...).CombinedOutput()
		if err == nil {
			return
		}
		if on || try == 40 || !strings.Contains(string(out), "busy") {
			t.Fatalf("%v: %v: %s (held by: %s)", args, err, out, strings.Join(looptest.Holders(d.Dir), "; "))
		}
		time.Sleep(250 * time.Millisecond)
	}
}

// TestInstanceCreatePathText: a relative --path and one holding a newline are refused
// before anything is made, in one line naming --path.
func TestInstanceCreatePathText(t *testing.T) {
	t.Parallel() // its own home and directory: see docs/architecture.md#tests
	if testing.Short() {
		t.Skip("builds storbench")
	}
	work := t.TempDir()
	b := binaryIn{dir: work, env: []string{"STORBENCH_HOME=" + t.TempDir()}}
	for path, want := range map[string]string{
		"pg":                              "is not an absolute path",
		filepath.Join(work, "pg\nsecond"): "holds a control character",
		filepath.Join(work, "pg\tsecond"): "holds a control character",
	} {
		code, out, errOut := b.run(t, "instance", "create", "--path", path, "--name", "text")
		if code == 0 {
			b.run(t, "instance", "destroy", "--name", "text")
		}
		if code != 2 || !oneLine(errOut) || !strings.Contains(errOut, "--path") || !strings.Contains(errOut, want) {
			t.Errorf("--path %q: exit %d, stderr %q; want 2 and one line naming --path: %s\n%s", path, code, errOut, want, out)
		}
		if l := listing(work); l != "" {
			t.Errorf("--path %q: %s holds %s", path, work, l)
		}
	}
}

// TestStudyCleanUnmounted: a study interrupted on a disk that is then unmounted
// keeps its instance: study clean refuses it, and so does the resumed study, each in
// one line naming the directory and study clean --force (not --force alone, which no
// study verb has); study clean --force forgets the instance and says what it left
// there; mounted again, its data is there.
func TestStudyCleanUnmounted(t *testing.T) {
	t.Parallel() // its own home, disk and names: see docs/architecture.md#tests
	if testing.Short() {
		t.Skip("builds storbench and runs a study on a loop device")
	}
	disk := newLostDisk(t, 512<<20)
	b := binaryIn{env: []string{"STORBENCH_HOME=" + t.TempDir()}}
	path := disk.path
	work := t.TempDir()
	file, results := filepath.Join(work, "study.yaml"), filepath.Join(work, "results")
	must(t, os.WriteFile(file, []byte(`name: unmounted
targets:
  - name: t
    path: `+path+`
workload:
  warehouses: 1
experiments:
  - kind: user-sweep
    users: [1]
    ramp: 1s
    duration: 2s
`), 0o644))
	before := processes()
	// Interrupted once its instance is made and started: it is stopped and kept.
	s := b.stopAfter(t, syscall.SIGINT, func(out string) bool { return strings.Contains(out, "building") }, 60*time.Second,
		"study", "run", file, "--results", results)
	if s.code == 0 || !strings.Contains(s.stderr, "storbench study clean "+results) {
		t.Fatalf("interrupted study: exit %d\n%s%s", s.code, s.stdout, s.stderr)
	}
	if left := leftovers(path, before); len(left) > 0 {
		t.Fatalf("the interrupted study left its server running: %q", left)
	}
	disk.mount(t, false)
	forced := "storbench study clean --force " + results
	code, out, errOut := b.run(t, "study", "clean", results)
	if code != 2 || !oneLine(errOut) || !strings.Contains(errOut, path+" is not there") || !strings.Contains(errOut, forced) || strings.Count(errOut, "instance t-") != 1 {
		t.Errorf("study clean with the disk unmounted: exit %d, %q; want 2 and one line naming the instance once, %s and %s\n%s", code, errOut, path, forced, out)
	}
	code, out, errOut = b.run(t, "study", "run", file, "--results", results)
	if code == 0 || !strings.Contains(out+errOut, path+" is not there") || !strings.Contains(out+errOut, forced) || strings.Contains(out+errOut, "add --force") {
		t.Errorf("study run resumed with the disk unmounted: exit %d; want a refusal naming %s and %s\n%s%s", code, path, forced, out, errOut)
	}
	if code, out, _ := b.run(t, "instance", "list"); code != 0 || !strings.Contains(out, "instances of studies") {
		t.Errorf("the refused clean forgot the study's instance: exit %d\n%s", code, out)
	}
	code, out, errOut = b.run(t, "study", "clean", "--force", results)
	if code != 0 || !strings.Contains(out, "removed instances t-") || !strings.Contains(out, path+" is not there") || !strings.Contains(out, "is left") {
		t.Errorf("study clean --force: exit %d; want the instance removed and a line saying what was left in %s:\n%s%s", code, path, out, errOut)
	}
	if code, out, _ := b.run(t, "instance", "list"); code != 0 || strings.Contains(out, "instances of studies") {
		t.Errorf("study clean --force kept the instance: exit %d\n%s", code, out)
	}
	if code, list, errOut := b.run(t, "results", "list", results); code != 0 {
		t.Errorf("the results were not kept: exit %d\n%s%s", code, list, errOut)
	}
	disk.mount(t, true)
	if _, err := os.Stat(filepath.Join(path, "data", "PG_VERSION")); err != nil {
		t.Errorf("the instance's data is not on its disk mounted again: %v", err)
	}
}
