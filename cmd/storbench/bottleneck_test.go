package main

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/storbench/storbench/internal/bottleneck"
	"github.com/storbench/storbench/internal/driver"
	"github.com/storbench/storbench/internal/testsupport/cgrouptest"
	"github.com/storbench/storbench/internal/testsupport/looptest"
)

// Each of these makes one bottleneck happen on purpose against a real server and
// checks that the run's verdict names it (docs/bottlenecks.md). One warehouse, a
// window of seconds.

// verdictInstance creates a managed instance in dir with the create flags given,
// builds one warehouse and returns its DSN; it is destroyed when the test ends.
func verdictInstance(t *testing.T, name, dir string, create ...string) string {
	t.Helper()
	args := append([]string{"instance", "create", "--path", dir, "--name", name}, create...)
	if code, out, errOut := storbench(t, args...); code != 0 {
		t.Fatalf("instance create: exit %d\n%s%s", code, out, errOut)
	}
	t.Cleanup(func() { storbench(t, "instance", "destroy", "--name", name) })
	dsn := instanceDSN(t, name)
	if code, out, errOut := storbench(t, "build", "--dsn", dsn, "--warehouses", "1"); code != 0 {
		t.Fatalf("build: exit %d\n%s%s", code, out, errOut)
	}
	return dsn
}

// runVerdict runs storbench run with args and returns its result, whose verdict the
// summary must have printed and the JSON hold. The run is a process of its own: the
// driver's figures are the whole process's CPU and run-queue wait, which in-process
// they would share with the other tests running beside it (and their GOMAXPROCS).
func runVerdict(t *testing.T, args ...string) *driver.Result {
	t.Helper()
	jsonPath := filepath.Join(t.TempDir(), "run.json")
	out, err := binaryIn{}.command(t, append([]string{"run", "--json", jsonPath}, args...)...).CombinedOutput()
	if err != nil {
		t.Fatalf("run: %v\n%s", err, out)
	}
	return verdictOf(t, jsonPath, string(out))
}

// verdictOf reads a run's result and checks that its output printed the verdict.
func verdictOf(t *testing.T, jsonPath, out string) *driver.Result {
	t.Helper()
	res := readResult(t, jsonPath)
	if res.Bottleneck == nil {
		t.Fatalf("the result has no bottleneck verdict:\n%s", out)
	}
	t.Logf("bottleneck: %s", res.Bottleneck)
	if line := "bottleneck: " + res.Bottleneck.String(); !strings.Contains(out, line) {
		t.Errorf("the summary lacks %q:\n%s", line, out)
	}
	b, err := os.ReadFile(strings.TrimSuffix(jsonPath, ".json") + ".metrics.csv")
	if err != nil {
		t.Fatal(err)
	}
	if header, _, _ := strings.Cut(string(b), "\n"); !strings.HasSuffix(header, ",bottleneck") {
		t.Errorf("the samples' CSV has no bottleneck column: %s", header)
	}
	return res
}

func wantVerdict(t *testing.T, res *driver.Result, kind string) {
	t.Helper()
	if v := res.Bottleneck; v.Kind != kind || len(v.Figures) < 2 {
		c := res.ClientCPU
		demand := "unknown"
		if c.Demand != nil {
			demand = fmt.Sprintf("%.0f%% (%.2f s waiting for a CPU)", *c.Demand*100, *c.WaitSeconds)
		}
		t.Errorf("bottleneck %s, want %s with at least two figures; NOPM %.0f, driver CPU %.0f%%, demand %s; cpu %+v, cgroup %+v",
			v, kind, res.NOPMDB, c.Utilization*100, demand, res.System.Summary.CPU, res.System.Summary.GroupCPU)
	}
}

// Storage: the instance's memory (page cache included) far below the warehouse's
// size, and its data disk's reads throttled to 200 IOPS: the backends wait for reads.
func TestBottleneckStorage(t *testing.T) {
	t.Parallel() // its own server, loop device and names: see docs/architecture.md#tests
	d := looptest.Mount(t, 2<<30)
	dsn := verdictInstance(t, "bn-storage", filepath.Join(d.Dir, "pg"), "--memory", "128MB", "--io-limit", "riops=200")
	res := runVerdict(t, "--dsn", dsn, "--users", "4", "--ramp", "2s", "--duration", "10s")
	wantVerdict(t, res, bottleneck.Storage)
}

// CPU: the instance held to one CPU on a RAM-backed target (a loop device over a file
// in /dev/shm) with room for its whole database.
func TestBottleneckCPU(t *testing.T) {
	t.Parallel() // its own server, loop device and names: see docs/architecture.md#tests
	d := looptest.MountIn(t, "/dev/shm", 1<<30)
	dsn := verdictInstance(t, "bn-cpu", filepath.Join(d.Dir, "pg"), "--memory", "1GB", "--cpus", "0")
	res := runVerdict(t, "--dsn", dsn, "--users", "4", "--ramp", "2s", "--duration", "10s")
	wantVerdict(t, res, bottleneck.CPU)
	if !strings.Contains(res.Bottleneck.Detail, "instance limit 1 CPU") {
		t.Errorf("bottleneck %s: want the instance's limit of 1 CPU named", res.Bottleneck)
	}
}

// Locks: one warehouse, many users and no keying: every New-Order and Payment of the
// warehouse updates its few district rows and its one warehouse row. Wait shares are
// what tell locks apart; without them the test cannot tell and says so.
func TestBottleneckLocks(t *testing.T) {
	t.Parallel() // its own server, loop device and names: see docs/architecture.md#tests
	d := looptest.MountIn(t, "/dev/shm", 1<<30)
	dsn := verdictInstance(t, "bn-locks", filepath.Join(d.Dir, "pg"), "--memory", "1GB", "--max-connections", "80")
	res := runVerdict(t, "--dsn", dsn, "--users", "48", "--ramp", "2s", "--duration", "10s", "--mode", "sql")
	if res.System.Summary.Waits == nil {
		t.Skipf("no wait shares sampled (verdict %s): locks are told apart by them", res.Bottleneck)
	}
	wantVerdict(t, res, bottleneck.Locks)
}

// Client: the driver, a storbench process of its own, held by a cgroup quota to a
// hundredth of a CPU (the smallest quota cgroup v1 takes is 1 ms per period), drives a
// database with all it needs: at a twentieth the driver kept up, in procedures mode
// at 27 µs per transaction, with a server that had two CPUs.
func TestBottleneckClient(t *testing.T) {
	t.Parallel() // its own server, loop device, cgroup and names: see docs/architecture.md#tests
	d := looptest.MountIn(t, "/dev/shm", 1<<30)
	dsn := verdictInstance(t, "bn-client", filepath.Join(d.Dir, "pg"), "--memory", "1GB")
	group := cgrouptest.CPU(t, 1000, 100000)
	jsonPath := filepath.Join(t.TempDir(), "run.json")
	// The shell waits for a line, so that it is in the group before it runs storbench.
	cmd := binaryIn{}.command(t)
	cmd.Args = append([]string{"sh", "-c", `read _; exec "$0" "$@"`, cmd.Path},
		"run", "--dsn", dsn, "--users", "4", "--ramp", "2s", "--duration", "10s", "--json", jsonPath)
	cmd.Path = "/bin/sh"
	var out strings.Builder
	cmd.Stdout, cmd.Stderr = &out, &out
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	stdin, err := cmd.StdinPipe()
	must(t, err)
	must(t, cmd.Start())
	t.Cleanup(func() { _ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) })
	group.Add(t, cmd.Process.Pid)
	must(t, stdin.Close())
	if err := cmd.Wait(); err != nil {
		t.Fatalf("run: %v\n%s", err, out.String())
	}
	res := verdictOf(t, jsonPath, out.String())
	wantVerdict(t, res, bottleneck.Client)
	if q := res.ClientCPU.QuotaCPUs; q != 0.01 {
		t.Errorf("the result records the driver's quota as %g CPU, want its cgroup's 0.01", q)
	}
}

// A study of two targets, one held by its storage (reads throttled to 200 IOPS, 128 MB
// of memory) and one by its CPU (one CPU, RAM-backed): each step's verdict names its
// bottleneck, and the report's finding quotes both, so that the NOPM difference is read
// as what it is.
func TestFindingNamesEachSidesBottleneck(t *testing.T) {
	t.Parallel() // its own servers, loop devices and names: see docs/architecture.md#tests
	if testing.Short() {
		t.Skip("runs a study on two managed instances")
	}
	slow := looptest.Mount(t, 2<<30)
	ram := looptest.MountIn(t, "/dev/shm", 1<<30)
	results, _ := runStudyFile(t, `name: limits
targets:
  - name: throttled
    path: `+filepath.Join(slow.Dir, "pg")+`
    memory: 128MB
    io_limit: riops=200
  - name: onecpu
    path: `+filepath.Join(ram.Dir, "pg")+`
    memory: 1GB
    cpus: "0"
workload:
  warehouses: 1
experiments:
  - name: sweep
    kind: user-sweep
    users: [4]
    ramp: 2s
    duration: 10s
`)
	page := reportPage(t, results)
	// The finding: "onecpu/sweep vs throttled/sweep at 4 users: … NOPM …; limited by
	// onecpu/sweep: cpu (instance limit 1 CPU) — …, throttled/sweep: storage (…) — …".
	i := strings.Index(page, "limited by onecpu/sweep: cpu")
	if i < 0 {
		t.Fatalf("the report has no finding naming each side's bottleneck (onecpu: cpu, throttled: storage):\n%s", findingsText(page))
	}
	// The series' name carries the instance's limit: "throttled/sweep [io riops=200]".
	if rest := page[i:]; !regexp.MustCompile(`throttled/sweep[^:;]*: storage`).MatchString(rest[:min(len(rest), 600)]) {
		t.Errorf("the finding does not name the throttled target's storage bottleneck:\n%s", rest[:min(len(rest), 600)])
	}
}

// runStudyFile runs a study file of that text in a new directory and returns its results
// store and what study run printed. The study runs in a process of its own, as
// runVerdict's run: in this one the driver's CPU and run-queue wait would be every
// test's beside it, and its verdicts the client.
func runStudyFile(t *testing.T, text string) (results, out string) {
	t.Helper()
	dir := diskTempDir(t, "study-")
	file := filepath.Join(dir, "study.yaml")
	must(t, os.WriteFile(file, []byte(text), 0o644))
	results = filepath.Join(dir, "results")
	start := time.Now()
	code, out, errOut := (binaryIn{}).run(t, "study", "run", file, "--results", results)
	t.Logf("study run took %s", time.Since(start).Round(time.Second))
	if code != 0 {
		t.Fatalf("study run: exit %d\n%s%s", code, out, errOut)
	}
	return results, out
}

// reportPage is the HTML report of a results store, apostrophes unescaped.
func reportPage(t *testing.T, results string) string {
	t.Helper()
	html := filepath.Join(filepath.Dir(results), "report.html")
	if code, out, errOut := storbench(t, "report", results, "-o", html); code != 0 {
		t.Fatalf("report: exit %d\n%s%s", code, out, errOut)
	}
	b, err := os.ReadFile(html)
	must(t, err)
	return strings.ReplaceAll(string(b), "&#39;", "'")
}

// findingsText is the report's findings table, for a failure message.
func findingsText(page string) string {
	i := strings.Index(page, "Findings")
	if i < 0 {
		return "(no findings section)"
	}
	return page[i:min(len(page), i+3000)]
}
