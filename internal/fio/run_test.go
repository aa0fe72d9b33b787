package fio

import (
	"bytes"
	"context"
	"errors"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/storbench/storbench/internal/input"
	"github.com/storbench/storbench/internal/testsupport/looptest"
)

// diskDir is a scratch directory on the checkout's disk: the system temp dir may be a
// tmpfs, which the runner rightly refuses.
func diskDir(t *testing.T) string {
	t.Helper()
	if _, err := exec.LookPath("fio"); err != nil {
		t.Fatal("fio is not installed: apt-get install fio (.ci/run installs it)")
	}
	dir, err := os.MkdirTemp(".", "fio-run-test-")
	if err != nil {
		t.Fatal(err)
	}
	abs, _ := filepath.Abs(dir)
	t.Cleanup(func() { os.RemoveAll(abs) })
	return abs
}

// brief keeps a few points of a profile so that every family runs in seconds.
func brief(p Profile, keep ...int) Profile {
	if len(keep) == 0 {
		return p
	}
	var pts []PointSpec
	for _, i := range keep {
		pts = append(pts, p.Points[i])
	}
	p.Points = pts
	return p
}

// Every profile family runs for real on the disk; the parsed figures are fio's, make
// sense together, come with a per-second series, and the test file is gone after.
func TestProfilesRun(t *testing.T) {
	if testing.Short() {
		t.Skip("runs fio")
	}
	dir := diskDir(t)
	var profiles []Profile
	for _, p := range Profiles {
		switch p.Name {
		case "data-matrix": // 8k read j4 qd4, 60/40 j8 qd8, then 64k and 512k
			profiles = append(profiles, brief(p, 0, 28, 48, 51))
		case "log-seq": // the durable QD1 write and the 60/40 mix
			profiles = append(profiles, brief(p, 0, 2))
		default:
			profiles = append(profiles, p)
		}
	}
	var done []string
	results, err := Run(context.Background(), profiles, Options{Dir: dir, Size: 32 << 20, Runtime: 3 * time.Second,
		Progress: func(profile string, i, n int, p *Point) { done = append(done, p.Name) }})
	if err != nil {
		t.Fatal(err)
	}
	if len(results) != len(profiles) {
		t.Fatalf("%d results for %d profiles", len(results), len(profiles))
	}
	for ri, r := range results {
		if r.FioVersion == "" || r.Target.FSType == "" || len(r.Points) != len(profiles[ri].Points) {
			t.Errorf("%s: result %+v", r.Profile, r)
		}
		for i := range r.Points {
			checkPoint(t, r.Profile, &r.Points[i], profiles[ri].Points[i])
		}
	}
	if len(done) != countPoints(profiles) {
		t.Errorf("progress reported %d points, want %d", len(done), countPoints(profiles))
	}
	left, _ := filepath.Glob(filepath.Join(dir, "storbench-fio-*"))
	if len(left) > 0 {
		t.Errorf("test file directory left behind: %v", left)
	}
}

func profileNamed(t *testing.T, name string) Profile {
	t.Helper()
	ps, err := Lookup([]string{name}, false)
	if err != nil {
		t.Fatal(err)
	}
	return ps[0]
}

func countPoints(ps []Profile) int {
	n := 0
	for _, p := range ps {
		n += len(p.Points)
	}
	return n
}

func checkPoint(t *testing.T, profile string, p *Point, spec PointSpec) {
	t.Helper()
	where := profile + "/" + p.Name
	if p.IOPS <= 0 || p.MBps <= 0 || p.RuntimeSeconds <= 0 {
		t.Errorf("%s: no throughput: %+v", where, p)
	}
	if math.Abs(p.IOPS-(p.Read.IOPS+p.Write.IOPS)) > 1e-6 {
		t.Errorf("%s: IOPS %v is not read + write", where, p.IOPS)
	}
	for _, s := range []struct {
		dir  string
		side Side
		want bool
	}{{"read", p.Read, spec.ReadPct > 0}, {"write", p.Write, spec.ReadPct < 100}} {
		if (s.side.IOs > 0) != s.want {
			t.Errorf("%s: %s I/Os %d with %d%% reads", where, s.dir, s.side.IOs, spec.ReadPct)
		}
		if s.side.IOs == 0 {
			continue
		}
		// fio's percentiles are its histogram buckets' values, 64 per power of two
		// (within 1/64 of the I/O's latency), the maximum the exact slowest I/O: a p99.9
		// in the slowest I/O's bucket can lie above it (76.02 ms against 75.78 seen).
		if !(s.side.P50Ms > 0 && s.side.P50Ms <= s.side.P99Ms && s.side.P99Ms <= s.side.P999Ms && s.side.P999Ms <= s.side.MaxMs*(1+1.0/64)) {
			t.Errorf("%s: %s percentiles out of order: %+v", where, s.dir, s.side)
		}
		if bs := float64(s.side.Bytes) / float64(s.side.IOs); bs != float64(spec.BlockSize) {
			t.Errorf("%s: %s bytes per I/O %v, block size %d", where, s.dir, bs, spec.BlockSize)
		}
	}
	// The mix fio did is the mix asked for (within sampling noise).
	if spec.Pattern == "randrw" || spec.Pattern == "rw" {
		got := 100 * float64(p.Read.IOs) / float64(p.Read.IOs+p.Write.IOs)
		if math.Abs(got-float64(spec.ReadPct)) > 5 {
			t.Errorf("%s: %.1f%% reads, want %d%%", where, got, spec.ReadPct)
		}
	}
	if n := len(p.Series); n < 1 || n > 3 {
		t.Errorf("%s: %d per-second points for a 3 s run (%s)", where, n, p.SeriesNote)
	}
	for _, want := range []string{"bs=" + strconv.Itoa(spec.BlockSize), "iodepth=" + strconv.Itoa(spec.QueueDepth), "numjobs=" + strconv.Itoa(spec.Jobs), "rw=" + spec.Pattern} {
		if !strings.Contains(p.JobText, want) {
			t.Errorf("%s: job text lacks %q:\n%s", where, want, p.JobText)
		}
	}
	if spec.DSync != strings.Contains(p.JobText, "sync=dsync") {
		t.Errorf("%s: O_DSYNC %v not in the job text", where, spec.DSync)
	}
	if (spec.Steady != "") != (p.Steady != nil) {
		t.Errorf("%s: steady state asked %q, reported %+v", where, spec.Steady, p.Steady)
	}
}

// Interrupting a run stops fio at once and still removes the test file.
func TestRunInterrupted(t *testing.T) {
	if testing.Short() {
		t.Skip("runs fio")
	}
	dir := diskDir(t)
	ctx, cancel := context.WithCancel(context.Background())
	time.AfterFunc(1500*time.Millisecond, cancel)
	start := time.Now()
	_, err := Run(ctx, []Profile{profileNamed(t, "hcibench-4k-70r")}, Options{Dir: dir, Size: 32 << 20, Runtime: 30 * time.Second})
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("interrupted run: %v, want context.Canceled", err)
	}
	if took := time.Since(start); took > 5*time.Second {
		t.Errorf("took %v to stop", took)
	}
	left, _ := filepath.Glob(filepath.Join(dir, "storbench-fio-*"))
	if len(left) > 0 {
		t.Errorf("test file directory left behind: %v", left)
	}
	if procs := fioProcessesIn(t, dir); len(procs) > 0 {
		t.Errorf("fio still running on the target: %v", procs)
	}
}

// fioProcessesIn lists processes whose command line or job file names dir.
func fioProcessesIn(t *testing.T, dir string) []string {
	t.Helper()
	cmdlines, _ := filepath.Glob("/proc/[0-9]*/cmdline")
	var found []string
	for _, f := range cmdlines {
		b, err := os.ReadFile(f)
		if err != nil || !strings.HasPrefix(filepath.Base(strings.Split(string(b), "\x00")[0]), "fio") {
			continue
		}
		fds, _ := filepath.Glob(filepath.Join(filepath.Dir(f), "fd", "*"))
		for _, fd := range fds {
			if target, err := os.Readlink(fd); err == nil && strings.HasPrefix(target, dir) {
				found = append(found, f+" → "+target)
			}
		}
	}
	return found
}

// Bad targets are refused before anything is written.
func TestTargetRefusals(t *testing.T) {
	dir := diskDir(t)
	ok := Options{Dir: dir, Size: 32 << 20, Runtime: time.Second}
	cases := map[string]Options{
		"missing directory":  {Dir: filepath.Join(dir, "nope"), Size: ok.Size, Runtime: ok.Runtime},
		"too big":            {Dir: dir, Size: 1 << 50, Runtime: ok.Runtime},
		"unconfirmed device": {Device: "/dev/null", Size: ok.Size, Runtime: ok.Runtime},
		"not a block device": {Device: "/dev/null", DestroyDevice: true, Size: ok.Size, Runtime: ok.Runtime},
		"runtime too short":  {Dir: dir, Size: ok.Size, Runtime: 100 * time.Millisecond},
	}
	if st, err := os.Stat("/dev/shm"); err == nil && st.IsDir() {
		cases["tmpfs"] = Options{Dir: "/dev/shm", Size: ok.Size, Runtime: ok.Runtime}
	}
	for name, opts := range cases {
		_, err := Run(context.Background(), []Profile{profileNamed(t, "hcibench-4k-70r")}, opts)
		if !errors.Is(err, input.ErrInvalid) || strings.Contains(err.Error(), "\n") {
			t.Errorf("%s: %v, want a one-line input error", name, err)
		}
	}
	t.Setenv("PATH", "")
	if _, err := Run(context.Background(), []Profile{profileNamed(t, "hcibench-4k-70r")}, ok); !errors.Is(err, input.ErrInvalid) || !strings.Contains(err.Error(), "apt-get install fio") {
		t.Errorf("without fio: %v", err)
	}
	left, _ := filepath.Glob(filepath.Join(dir, "storbench-fio-*"))
	if len(left) > 0 {
		t.Errorf("a refused run left %v", left)
	}
}

// A raw device runs only when confirmed and not in use; here a loop device over a
// file, so nothing real is overwritten.
func TestRawDevice(t *testing.T) {
	if testing.Short() {
		t.Skip("runs fio")
	}
	dir := diskDir(t)
	dev := looptest.Attach(t, 64<<20).Dev

	prof := []Profile{profileNamed(t, "seq-write-128k")}
	opts := Options{Device: dev, Size: 32 << 20, Runtime: time.Second}
	if _, err := Run(context.Background(), prof, opts); !errors.Is(err, input.ErrInvalid) {
		t.Fatalf("unconfirmed device: %v", err)
	}
	opts.DestroyDevice = true
	// Held exclusively (as a mount or LVM would hold it): refused.
	held, err := unix.Open(dev, unix.O_RDONLY|unix.O_EXCL, 0)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := Run(context.Background(), prof, opts); !errors.Is(err, input.ErrInvalid) || !strings.Contains(err.Error(), "in use") {
		t.Errorf("device in use: %v", err)
	}
	unix.Close(held)
	results, err := Run(context.Background(), prof, opts)
	if err != nil {
		t.Fatal(err)
	}
	r := results[0]
	if r.Target.FSType != "raw device" || r.Points[0].Write.IOs == 0 || !strings.Contains(r.Points[0].JobText, "filename="+dev) {
		t.Errorf("raw device result: %+v", r)
	}

	// A device path with a colon, which fio would split into two files: the part
	// before it, here a user's file, is not written.
	opts.Device = filepath.Join(dir, "disk:0")
	if err := os.Symlink(dev, opts.Device); err != nil {
		t.Fatal(err)
	}
	userFile, userData := filepath.Join(dir, "disk"), []byte("the user's own data\n")
	if err := os.WriteFile(userFile, userData, 0o644); err != nil {
		t.Fatal(err)
	}
	if results, err = Run(context.Background(), prof, opts); err != nil || results[0].Points[0].Write.IOs == 0 {
		t.Errorf("device %s: %v", opts.Device, err)
	}
	if got, _ := os.ReadFile(userFile); !bytes.Equal(got, userData) {
		t.Errorf("the user's file %s was written: %d bytes, had %d", userFile, len(got), len(userData))
	}
}

// A test directory left by a run that was killed (its process gone) is removed by
// the next run; one of a live process, or without the marker, is left alone.
func TestStaleTestDirectories(t *testing.T) {
	dir := diskDir(t)
	dead := exec.Command("true")
	if err := dead.Run(); err != nil {
		t.Fatal(err)
	}
	mk := func(name, marker string) string {
		d := filepath.Join(dir, name)
		if err := os.Mkdir(d, 0o755); err != nil {
			t.Fatal(err)
		}
		if marker != "" {
			if err := os.WriteFile(filepath.Join(d, workMarker), []byte(marker), 0o644); err != nil {
				t.Fatal(err)
			}
		}
		return d
	}
	stale := mk("storbench-fio-dead", strconv.Itoa(dead.Process.Pid)+"\n")
	live := mk("storbench-fio-live", strconv.Itoa(os.Getpid())+"\n")
	foreign := mk("storbench-fio-foreign", "")
	removed := removeStale(dir)
	if len(removed) != 1 || removed[0] != stale {
		t.Errorf("removed %v, want only %s", removed, stale)
	}
	for _, d := range []string{live, foreign} {
		if _, err := os.Stat(d); err != nil {
			t.Errorf("%s removed: %v", d, err)
		}
	}
}
