package main

import (
	"bytes"
	"encoding/json"
	"os"
	osexec "os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/storbench/storbench/internal/instance/localserver"
	"github.com/storbench/storbench/internal/testsupport/pgtest"
)

// The tests below run the real binary and stop it the way an operator does (Ctrl-C is
// SIGINT, a service manager sends SIGTERM): it must exit within seconds with a
// non-zero code and a message saying what was kept, and leave no child process.

var built struct {
	once sync.Once
	path string
	err  error
	out  []byte
}

// binary builds storbench once for the tests of this file.
func binary(t *testing.T) string {
	t.Helper()
	built.once.Do(func() {
		dir, err := os.MkdirTemp("", "storbench-bin-")
		if err != nil {
			built.err = err
			return
		}
		built.path = filepath.Join(dir, "storbench")
		built.out, built.err = osexec.Command("go", "build", "-o", built.path, ".").CombinedOutput()
	})
	if built.err != nil {
		t.Fatalf("go build: %v\n%s", built.err, built.out)
	}
	return built.path
}

type stopped struct {
	code           int
	stdout, stderr string
	took           time.Duration // from the signal to the exit
}

// binaryIn is how a test starts the built storbench: in dir ("" : the test's working
// directory), with env added to this process's environment. A test that needs a
// STORBENCH_HOME or a working directory of its own says so here rather than with
// t.Setenv or t.Chdir, which would keep it from running beside the others.
type binaryIn struct {
	dir string
	env []string
	// umask is the umask it starts with, in octal ("" : this process's).
	umask string
}

func (b binaryIn) command(t *testing.T, args ...string) *osexec.Cmd {
	t.Helper()
	cmd := osexec.Command(binary(t), args...)
	if b.umask != "" {
		cmd = osexec.Command("sh", append([]string{"-c", "umask " + b.umask + ` && exec "$0" "$@"`, binary(t)}, args...)...)
	}
	cmd.Dir = b.dir
	if len(b.env) > 0 {
		cmd.Env = append(os.Environ(), b.env...) // the last value of a name wins
	}
	return cmd
}

// stopAfter starts storbench with args, sends sig once ready() reports true on its
// output so far (or after the deadline), and waits at most limit for it to exit.
func stopAfter(t *testing.T, sig syscall.Signal, ready func(out string) bool, limit time.Duration, args ...string) stopped {
	t.Helper()
	return binaryIn{}.stopAfter(t, sig, ready, limit, args...)
}

// stopAfter is stopAfter in b.
func (b binaryIn) stopAfter(t *testing.T, sig syscall.Signal, ready func(out string) bool, limit time.Duration, args ...string) stopped {
	t.Helper()
	cmd := b.command(t, args...)
	var out, errOut localserver.SyncBuffer
	cmd.Stdout, cmd.Stderr = &out, &errOut
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	deadline := time.Now().Add(90 * time.Second)
	for !ready(out.String()+errOut.String()) && time.Now().Before(deadline) {
		select {
		case err := <-done:
			t.Fatalf("storbench %v ended before the signal: %v\n%s%s", args, err, out.String(), errOut.String())
		case <-time.After(100 * time.Millisecond):
		}
	}
	sent := time.Now()
	if err := cmd.Process.Signal(sig); err != nil {
		t.Fatal(err)
	}
	select {
	case <-done:
	case <-time.After(limit):
		cmd.Process.Kill()
		<-done
		t.Fatalf("storbench %v still running %v after %v\n%s%s", args, limit, sig, out.String(), errOut.String())
	}
	return stopped{code: cmd.ProcessState.ExitCode(), stdout: out.String(), stderr: errOut.String(), took: time.Since(sent)}
}

// processes maps the running processes (but this test) to their command lines;
// zombies waiting to be reaped have none and are left out.
func processes() map[int]string {
	m := map[int]string{}
	entries, _ := os.ReadDir("/proc")
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil || pid == os.Getpid() {
			continue
		}
		if b, err := os.ReadFile(filepath.Join("/proc", e.Name(), "cmdline")); err == nil && len(b) > 0 {
			m[pid] = strings.ReplaceAll(strings.TrimRight(string(b), "\x00"), "\x00", " ")
		}
	}
	return m
}

// mentioning lists the processes whose command line names something under dir, or
// that run one of names, were not running before and have lost their parent (an
// orphan of the storbench that exited: another test's servers still have theirs).
func mentioning(dir string, before map[int]string, names ...string) []string {
	var found []string
	for pid, cmdline := range processes() {
		_, old := before[pid]
		orphan := !old && slices.Contains(names, filepath.Base(strings.Fields(cmdline)[0])) && parent(pid) == 1
		if strings.Contains(cmdline, dir) || orphan {
			found = append(found, cmdline)
		}
	}
	return found
}

// parent is a process's parent pid (from /proc/PID/stat, after the command's ")").
func parent(pid int) int {
	b, err := os.ReadFile(filepath.Join("/proc", strconv.Itoa(pid), "stat"))
	if err != nil {
		return 0
	}
	fields := strings.Fields(string(b[bytes.LastIndexByte(b, ')')+1:]))
	if len(fields) < 2 {
		return 0
	}
	ppid, _ := strconv.Atoi(fields[1])
	return ppid
}

// leftovers is mentioning after giving exiting processes a few seconds.
func leftovers(dir string, before map[int]string, names ...string) []string {
	var found []string
	for range 20 {
		if found = mentioning(dir, before, names...); len(found) == 0 {
			return nil
		}
		time.Sleep(250 * time.Millisecond)
	}
	return found
}

func TestInterruptRun(t *testing.T) {
	t.Parallel() // its own servers, directories and names: see docs/architecture.md#tests
	if testing.Short() {
		t.Skip("builds storbench and runs it against PostgreSQL")
	}
	srv := pgtest.Start(t)
	dsn := srv.DSN("tpcc")
	if code, out, errOut := storbench(t, "build", "--dsn", dsn, "--warehouses", "1"); code != 0 {
		t.Fatalf("build: exit %d\n%s%s", code, out, errOut)
	}
	dir := t.TempDir()
	jsonPath := filepath.Join(dir, "run.json")
	before := processes()
	for _, sig := range []syscall.Signal{syscall.SIGINT, syscall.SIGTERM} {
		s := stopAfter(t, sig, func(out string) bool { return strings.Count(out, "timed") >= 3 },
			10*time.Second, "run", "--dsn", dsn, "--users", "2", "--ramp", "1s", "--duration", "60s", "--json", jsonPath)
		if s.code == 0 || s.took > 5*time.Second {
			t.Errorf("%v: exit %d after %v, want non-zero within 5 s\n%s%s", sig, s.code, s.took, s.stdout, s.stderr)
		}
		b, err := os.ReadFile(jsonPath)
		if err != nil || !bytes.Contains(b, []byte(`"interrupted": true`)) {
			t.Errorf("%v: the partial result was not written (%v)\n%s%s", sig, err, s.stdout, s.stderr)
		}
		if !strings.Contains(s.stdout+s.stderr, jsonPath) {
			t.Errorf("%v: the output does not say where the partial result is:\n%s%s", sig, s.stdout, s.stderr)
		}
		if lines := strings.Count(strings.TrimRight(s.stderr, "\n"), "\n"); lines != 0 || strings.Contains(s.stderr, "context canceled") {
			t.Errorf("%v: the message should be one line saying what was kept, not why Go stopped:\n%s", sig, s.stderr)
		}
		os.Remove(jsonPath)
	}
	// In ramp-up nothing is measured: the message says so, and nothing is written.
	s := stopAfter(t, syscall.SIGINT, func(out string) bool { return strings.Count(out, "ramp") >= 2 },
		10*time.Second, "run", "--dsn", dsn, "--users", "2", "--ramp", "60s", "--duration", "60s", "--json", jsonPath)
	t.Logf("ramp-up: exit %d after %v: %s", s.code, s.took, strings.TrimSpace(s.stderr))
	if s.code != 1 || s.took > 5*time.Second {
		t.Errorf("ramp-up: exit %d after %v, want 1 within 5 s\n%s%s", s.code, s.took, s.stdout, s.stderr)
	}
	if lines := strings.Count(strings.TrimRight(s.stderr, "\n"), "\n"); lines != 0 || strings.Contains(s.stderr, "context canceled") ||
		!strings.Contains(s.stderr, "interrupted during ramp-up: nothing measured yet, no result written") ||
		!strings.Contains(s.stderr, "metrics samples are in "+strings.TrimSuffix(jsonPath, ".json")+".metrics.csv") {
		t.Errorf("ramp-up: the message should be one line saying nothing was measured nor written, and where the samples are:\n%s", s.stderr)
	}
	if _, err := os.Stat(jsonPath); !os.IsNotExist(err) {
		t.Errorf("ramp-up: a result was written: %v", err)
	}
	if left := leftovers(dir, before, "bpftrace"); len(left) > 0 {
		t.Errorf("processes left behind: %q", left)
	}
}

func TestInterruptFio(t *testing.T) {
	if testing.Short() {
		t.Skip("builds storbench and runs fio")
	}
	if _, err := osexec.LookPath("fio"); err != nil {
		t.Skip("no fio")
	}
	dir := diskTempDir(t, "fio-interrupt-")
	before := processes()
	s := stopAfter(t, syscall.SIGTERM, fioWriting(dir), 10*time.Second,
		"fio", "--path", dir, "--profile", "hcibench-4k-70r", "--size", "64MB", "--runtime", "60s")
	if s.code == 0 || s.took > 5*time.Second {
		t.Errorf("exit %d after %v, want non-zero within 5 s\n%s%s", s.code, s.took, s.stdout, s.stderr)
	}
	if left := leftovers(dir, before, "fio"); len(left) > 0 {
		t.Errorf("processes left behind: %q", left)
	}
	if entries, _ := os.ReadDir(dir); len(entries) > 0 {
		var names []string
		for _, e := range entries {
			names = append(names, e.Name())
		}
		t.Errorf("files left in the target: %v", names)
	}
}

// fioWriting reports when fio lays out or writes its test file in dir (storbench's
// own command line names dir before it handles signals).
func fioWriting(dir string) func(string) bool {
	return func(string) bool {
		files, _ := filepath.Glob(filepath.Join(dir, "storbench-fio-*", "storbench-fio.dat"))
		return len(files) > 0
	}
}

// Ctrl-C during fio says in one line what was kept: the points finished before, and
// where, or that nothing was written; and that the test file was removed.
func TestInterruptFioSaysWhatWasKept(t *testing.T) {
	if testing.Short() {
		t.Skip("builds storbench and runs fio")
	}
	if _, err := osexec.LookPath("fio"); err != nil {
		t.Skip("no fio")
	}
	dir := diskTempDir(t, "fio-interrupt-kept-")
	jsonPath := filepath.Join(t.TempDir(), "fio.json")
	for _, c := range []struct {
		name  string
		ready func(string) bool
		json  bool
		want  string
	}{
		{"during the first point", fioWriting(dir), true,
			"no point had finished: nothing was written"},
		{"after a point, with --json", func(out string) bool { return strings.Contains(out, "data-matrix 1/52") }, true,
			"finished points are in the tables above and in " + jsonPath},
		{"after a point, without --json", func(out string) bool { return strings.Contains(out, "data-matrix 1/52") }, false,
			"finished points are in the tables above, in no file (--json F keeps them)"},
	} {
		t.Run(c.name, func(t *testing.T) {
			os.Remove(jsonPath)
			args := []string{"fio", "--path", dir, "--profile", "data-matrix", "--size", "16MB", "--runtime", "2s"}
			if c.json {
				args = append(args, "--json", jsonPath)
			}
			s := stopAfter(t, syscall.SIGINT, c.ready, 10*time.Second, args...)
			line := strings.TrimRight(s.stderr, "\n")
			if s.code != 1 || strings.Contains(line, "\n") || strings.Contains(line, "context canceled") ||
				!strings.Contains(line, "interrupted; the test file was removed") || !strings.Contains(line, c.want) {
				t.Errorf("exit %d, stderr %q: want 1 and one line saying what was kept (%q)", s.code, s.stderr, c.want)
			}
			_, err := os.Stat(jsonPath)
			if wrote := err == nil; wrote != strings.Contains(c.want, jsonPath) {
				t.Errorf("--json written: %v, want %v", wrote, !wrote)
			}
			if entries, _ := os.ReadDir(dir); len(entries) > 0 {
				t.Errorf("the test file's directory was left: %v", entries)
			}
		})
	}
}

func TestInterruptStudy(t *testing.T) {
	t.Parallel() // its own servers, directories and names: see docs/architecture.md#tests
	if testing.Short() {
		t.Skip("builds storbench and runs a study")
	}
	dir := diskTempDir(t, "study-interrupt-")
	file := filepath.Join(dir, "study.yaml")
	os.WriteFile(file, []byte(`name: interrupt
targets:
  - name: t
    path: `+filepath.Join(dir, "pg")+`
workload:
  warehouses: 1
experiments:
  - name: sweep
    kind: user-sweep
    users: [1, 2]
    ramp: 1s
    duration: 60s
`), 0o644)
	results := filepath.Join(dir, "results")
	before := processes()
	s := stopAfter(t, syscall.SIGINT, func(out string) bool { return strings.Contains(out, "step 1/2") && strings.Contains(out, "users 1") },
		30*time.Second, "study", "run", file, "--results", results)
	if s.code == 0 || s.took > 20*time.Second {
		t.Errorf("exit %d after %v, want non-zero within 20 s (the instance is stopped first)\n%s%s", s.code, s.took, s.stdout, s.stderr)
	}
	if line := strings.TrimRight(s.stderr, "\n"); !strings.Contains(line, "interrupted at step 1/2") || !strings.Contains(line, "resume") ||
		!strings.Contains(line, "study clean "+results) || strings.Contains(line, "\n") || strings.Contains(line, "context canceled") {
		t.Errorf("the message does not say what was kept and how to go on:\n%s", s.stderr)
	}
	if left := leftovers(dir, before, "bpftrace"); len(left) > 0 {
		t.Errorf("processes left behind: %q", left)
	}
}

func TestInterruptBuild(t *testing.T) {
	if testing.Short() {
		t.Skip("builds storbench and loads PostgreSQL")
	}
	srv := pgtest.Start(t)
	binary(t) // built before the clock starts
	start := time.Now()
	s := stopAfter(t, syscall.SIGINT, func(string) bool { return time.Since(start) > 2*time.Second }, 10*time.Second,
		"build", "--dsn", srv.DSN("tpcc"), "--warehouses", "8")
	if s.code == 0 || s.took > 5*time.Second {
		t.Errorf("exit %d after %v, want non-zero within 5 s\n%s%s", s.code, s.took, s.stdout, s.stderr)
	}
	if lines := strings.Count(strings.TrimRight(s.stderr, "\n"), "\n"); lines != 0 || !strings.Contains(s.stderr, "interrupted") || !strings.Contains(s.stderr, "storbench drop") {
		t.Errorf("the message should be one line saying the build was interrupted and how to clean up:\n%s", s.stderr)
	}
}

func TestInterruptBackup(t *testing.T) {
	t.Parallel() // its own servers, directories and names: see docs/architecture.md#tests
	if testing.Short() {
		t.Skip("builds storbench and backs up a managed instance")
	}
	dir := diskTempDir(t, "backup-interrupt-")
	code, out, errOut := storbench(t, "instance", "create", "--path", filepath.Join(dir, "pg"), "--name", "intr")
	if code != 0 {
		t.Fatalf("instance create: exit %d\n%s%s", code, out, errOut)
	}
	t.Cleanup(func() { storbench(t, "instance", "destroy", "--name", "intr") })
	dsn := instanceDSN(t, "intr")
	if code, out, errOut := storbench(t, "build", "--dsn", dsn, "--warehouses", "4"); code != 0 {
		t.Fatalf("build: exit %d\n%s%s", code, out, errOut)
	}
	binary(t)
	to := filepath.Join(dir, "backup")
	before := processes()
	start := time.Now()
	s := stopAfter(t, syscall.SIGINT, func(string) bool { return time.Since(start) > 500*time.Millisecond }, 10*time.Second,
		"backup", "--instance", "intr", "--to", to)
	if s.code == 0 || s.took > 5*time.Second {
		t.Errorf("exit %d after %v, want non-zero within 5 s\n%s%s", s.code, s.took, s.stdout, s.stderr)
	}
	if left := leftovers(to, before, "pg_basebackup"); len(left) > 0 {
		t.Errorf("processes left behind: %q", left)
	}
	if _, err := os.Stat(to); !os.IsNotExist(err) {
		t.Errorf("the partial backup %s is left: %v", to, err)
	}
}

// TestRunServerDownAtWindowEnd kills the server (kill -9 of the postmaster) inside the
// timed window and does not restart it: the run must not lose what it measured. It
// ends within seconds of the window's end (or at once on Ctrl-C while it waits for the
// server) with exit 1 and one line, and --json holds the client's view, the outage
// and the database's figures marked unavailable.
func TestRunServerDownAtWindowEnd(t *testing.T) {
	if testing.Short() {
		t.Skip("builds storbench and runs it against PostgreSQL")
	}
	for _, interrupt := range []bool{false, true} {
		t.Run(map[bool]string{false: "wait", true: "sigint"}[interrupt], func(t *testing.T) {
			// The two cases run beside each other (a server each), and the test
			// itself stays serial: the load of the package's parallel end-to-end
			// tests would blur its timings.
			t.Parallel()
			srv := pgtest.Start(t)
			run := startTimedRun(t, srv.DSN("tpcc"), 6*time.Second)
			time.Sleep(2 * time.Second)
			if err := syscall.Kill(srv.PID(), syscall.SIGKILL); err != nil {
				t.Fatal(err)
			}
			// Started again once the run is over, for the cleanup's clean stop.
			defer func() {
				if err := srv.Start(t.Context()); err != nil {
					t.Errorf("restart PostgreSQL: %v", err)
				}
			}()
			var sent time.Time
			if interrupt {
				// Inside the wait for the server at the window's end.
				time.Sleep(time.Until(run.windowEnd.Add(1500 * time.Millisecond)))
				sent = time.Now()
				if err := run.cmd.Process.Signal(syscall.SIGINT); err != nil {
					t.Fatal(err)
				}
			}
			late := run.wait(t, 30*time.Second)
			if late > 10*time.Second {
				t.Errorf("run ended %v after its window's end, want within a few seconds", late)
			}
			if interrupt && time.Since(sent) > 3*time.Second {
				t.Errorf("run ended %v after SIGINT, want at once", time.Since(sent))
			}
			res := run.result(t, "did not answer at the window's end")
			if res.Outage < 2 || res.Interrupted ||
				!strings.HasPrefix(res.Sources["tpm_db"], "unavailable") || !strings.HasPrefix(res.Sources["nopm_db"], "unavailable") {
				t.Errorf("the result should have the outage and the database's figures unavailable: outage %d s, interrupted %v, sources %q",
					res.Outage, res.Interrupted, res.Sources)
			}
		})
	}
}

// timedRun is a `storbench run` (2 users, 1 s ramp, --json) whose timed window has
// begun (startTimedRun).
type timedRun struct {
	cmd         *osexec.Cmd
	out, errOut localserver.SyncBuffer
	done        chan error
	windowEnd   time.Time
	json        string
}

// startTimedRun starts `storbench run` against dsn with a window of duration (and
// extra flags) and returns at the window's first timed second.
func startTimedRun(t *testing.T, dsn string, duration time.Duration, extra ...string) *timedRun {
	t.Helper()
	if code, out, errOut := storbench(t, "build", "--dsn", dsn, "--warehouses", "1"); code != 0 {
		t.Fatalf("build: exit %d\n%s%s", code, out, errOut)
	}
	r := &timedRun{json: filepath.Join(t.TempDir(), "run.json"), done: make(chan error, 1)}
	r.cmd = osexec.Command(binary(t), append([]string{"run", "--dsn", dsn, "--users", "2", "--ramp", "1s", "--duration", duration.String(), "--json", r.json}, extra...)...)
	r.cmd.Stdout, r.cmd.Stderr = &r.out, &r.errOut
	if err := r.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() { r.done <- r.cmd.Wait() }()
	// The first timed progress line is second 1 of the window.
	for !strings.Contains(r.out.String(), "timed") {
		select {
		case err := <-r.done:
			t.Fatalf("run ended before its window: %v\n%s%s", err, r.out.String(), r.errOut.String())
		case <-time.After(50 * time.Millisecond):
		}
	}
	r.windowEnd = time.Now().Add(duration - time.Second)
	return r
}

// wait waits for the run to end, killing it (a failure) when it has not within limit
// of its window's end, and returns how long after that end it did.
func (r *timedRun) wait(t *testing.T, limit time.Duration) time.Duration {
	t.Helper()
	select {
	case <-r.done:
	case <-time.After(time.Until(r.windowEnd.Add(limit))):
		r.cmd.Process.Kill()
		<-r.done
		t.Fatalf("run still going %v after its window's end\n%s%s", limit, r.out.String(), r.errOut.String())
	}
	late := time.Since(r.windowEnd)
	t.Logf("exit %d, %v after the window's end: %s", r.cmd.ProcessState.ExitCode(), late.Round(100*time.Millisecond), strings.TrimSpace(r.errOut.String()))
	return late
}

// runResult is what the tests of a run whose database stopped answering read of its
// --json.
type runResult struct {
	TPMClient   float64           `json:"tpm_client"`
	Outage      int               `json:"outage_s"`
	Unavailable bool              `json:"db_unavailable"`
	Interrupted bool              `json:"interrupted"`
	Sources     map[string]string `json:"sources"`
}

// result checks that the ended run exited 1 with one line holding why and naming its
// --json, and that the result written there has the client's TPM with the database's
// figures unavailable; it returns that result.
func (r *timedRun) result(t *testing.T, why string) runResult {
	t.Helper()
	stderr := r.errOut.String()
	if code := r.cmd.ProcessState.ExitCode(); code != 1 || strings.Count(strings.TrimRight(stderr, "\n"), "\n") != 0 ||
		!strings.Contains(stderr, why) || !strings.Contains(stderr, r.json) {
		t.Errorf("exit %d, want 1 with one line saying %q and where the result is:\n%s%s", code, why, r.out.String(), stderr)
	}
	var res runResult
	b, err := os.ReadFile(r.json)
	if err != nil || json.Unmarshal(b, &res) != nil {
		t.Fatalf("no result written: %v\n%s%s", err, r.out.String(), stderr)
	}
	if res.TPMClient <= 0 || !res.Unavailable {
		t.Errorf("the result should have the client's TPM and the database's figures unavailable: TPM %.0f, unavailable %v", res.TPMClient, res.Unavailable)
	}
	return res
}
