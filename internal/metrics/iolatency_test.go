package metrics

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"text/template"
	"time"

	"golang.org/x/sys/unix"

	"github.com/storbench/storbench/internal/blockdev"
)

// feed gives l's parser bpftrace's output in pieces of every size up to step, as a
// pipe may cut it anywhere.
func feed(l *IOLatency, out string, step int) {
	for len(out) > 0 {
		n := min(step, len(out))
		l.out.write([]byte(out[:n]), l.stdoutLine)
		out, step = out[n:], step%7+1
	}
}

func TestIOLatencyParse(t *testing.T) {
	devs := []blockdev.BlockDevice{{Name: "vda", Major: 254, Minor: 0}, {Name: "sdb", Major: 8, Minor: 16}, {Name: "idle", Major: 8, Minor: 32}}
	l := newIOLatency(devs, chunkWait(time.Second))
	// Collect asks the tracer for a chunk: here a process that has ended.
	l.cmd = exec.Command("true")
	if err := l.cmd.Run(); err != nil {
		t.Fatal(err)
	}
	vda, sdb := devT(devs[0]), devT(devs[1])
	if vda != 266338304 || sdb != 8388624 {
		t.Fatalf("dev_t: vda %d, sdb %d", vda, sdb)
	}
	feed(l, "Attaching 4 probes...\n@h[266338304, 251]: 3\n\n-- 100\n", 1)
	var s Sample
	if err := l.Collect(context.Background(), &s); err != nil || s.Latency != nil {
		t.Fatalf("first Collect: %v, %+v; want nothing, only a start", err, s.Latency)
	}
	// Cumulative counts: vda's bucket 251 gains 2; a chunk that ends without its
	// marker is not taken; a device not traced, garbage and a truncated entry are
	// ignored.
	feed(l, "@h[266338304, 251]: 5\n@h[266338304, 320]: 1\n@h[8388624, 270]: 7\n"+
		"@h[1234, 5]: 9\nLost 3 events\n@h[8388624, 2\n@start[266338304, 77]: 8\n-- 200\n"+
		"@h[266338304, 251]: 1000\n", 3)
	if err := l.Collect(context.Background(), &s); err != nil {
		t.Fatal(err)
	}
	want := map[string]LatencyHistogram{"vda": {251: 2, 320: 1}, "sdb": {270: 7}, "idle": {}}
	if len(s.Latency) != 3 {
		t.Fatalf("got %d latencies, want 3: %+v", len(s.Latency), s.Latency)
	}
	for i, lat := range s.Latency {
		if lat.Device != devs[i].Name {
			t.Errorf("latency %d is %q, want %q", i, lat.Device, devs[i].Name)
		}
		if w := want[lat.Device]; !mapsEqual(lat.hist, w) || lat.IOs != w.Count() {
			t.Errorf("%s: histogram %v (%d I/Os), want %v", lat.Device, lat.hist, lat.IOs, w)
		}
	}
	if lat := s.Latency[0]; lat.P50Ms != bucketUpperNs(251)/1e6 || lat.P999Ms != bucketUpperNs(320)/1e6 {
		t.Errorf("vda percentiles %+v", lat)
	}
	if lat := s.Latency[2]; lat.IOs != 0 || lat.P99Ms != 0 {
		t.Errorf("idle device: %+v", lat)
	}

	// No chunk since the previous call: nothing, rather than a claim of no I/O.
	s = Sample{}
	if err := l.Collect(context.Background(), &s); err != nil || s.Latency != nil {
		t.Fatalf("Collect without a chunk: %v, %+v", err, s.Latency)
	}
	feed(l, "@h[8388624, 270]: 7\n-- 300\n", 5)
	if err := l.Collect(context.Background(), &s); err != nil || len(s.Latency) != 3 || s.Latency[0].IOs != 995 || s.Latency[1].IOs != 0 {
		t.Fatalf("third interval: %v, %+v", err, s.Latency)
	}

	// A line longer than any of ours is skipped whole, not parsed from its middle.
	feed(l, strings.Repeat("x", maxLineBytes-5)+"@h[8388624, 270]: 99\n-- 400\n", 1)
	s = Sample{}
	if err := l.Collect(context.Background(), &s); err != nil || s.Latency[1].IOs != 0 {
		t.Fatalf("after a long line: %v, %+v", err, s.Latency)
	}
}

func mapsEqual(a, b LatencyHistogram) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		if b[k] != v {
			return false
		}
	}
	return true
}

func TestIOLatencyParseLine(t *testing.T) {
	for line, want := range map[string]bool{
		"@h[266338304, 251]: 1":                    true,
		"@h[266338304, 251]: 18446744073709551615": true,
		"@h[266338304, 251]: 18446744073709551616": false,
		"@h[4294967296, 251]: 1":                   false,
		"@h[266338304, 1024]: 1":                   false,
		"@h[266338304, 251]: 1 x":                  false,
		"@h[266338304]: 1":                         false,
		"@h[, 251]: 1":                             false,
		"@start[266338304, 251]: 1":                false,
	} {
		if _, _, ok := parseHistLine([]byte(line)); ok != want {
			t.Errorf("parseHistLine(%q) ok = %v", line, ok)
		}
	}
	for line, want := range map[string]bool{"-- 12345": true, "-- ": false, "--": false, "-- 12 3": false} {
		if isMarker([]byte(line)) != want {
			t.Errorf("isMarker(%q) != %v", line, want)
		}
	}
}

func TestIOLatencyScriptPredicate(t *testing.T) {
	prog, err := ioLatencyProgram([]blockdev.BlockDevice{{Name: "vda", Major: 254, Minor: 0}, {Name: "nvme0n1", Major: 259, Minor: 1}}, 4242, true)
	if err != nil {
		t.Fatal(err)
	}
	untasked, err := ioLatencyProgram([]blockdev.BlockDevice{{Name: "vda", Major: 254, Minor: 0}}, 4242, false)
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(untasked, "@b") {
		t.Errorf("program counts bytes by task unasked:\n%s", untasked)
	}
	pred := "args->dev == 266338304 || args->dev == 271581185"
	for _, want := range []string{
		"tracepoint:block:block_rq_issue /" + pred + "/\n",
		"tracepoint:block:block_rq_complete /(" + pred + ") && @start[args->dev, args->sector]/\n",
		"tracepoint:signal:signal_generate /pid == 4242 && args->sig == 18/\n",
		"@h[args->dev, $b] = count();",
		"tracepoint:block:block_bio_queue /" + pred + "/\n",
		"print(@b);",
	} {
		if !strings.Contains(prog, want) {
			t.Errorf("program lacks %q:\n%s", want, prog)
		}
	}
	if strings.Contains(prog, "{{") || strings.Contains(prog, "<no value>") {
		t.Error("template not filled in")
	}
	if strings.Contains(prog, "interval:") {
		t.Error("program prints on a timer, not when asked")
	}
	for interval, want := range map[time.Duration]time.Duration{
		time.Second: 250 * time.Millisecond, 10 * time.Second: 250 * time.Millisecond,
		100 * time.Millisecond: 50 * time.Millisecond, 10 * time.Millisecond: 10 * time.Millisecond,
	} {
		if got := chunkWait(interval); got != want {
			t.Errorf("chunkWait(%v) = %v, want %v", interval, got, want)
		}
	}
}

// bucketSnippet is the script's bucket computation, as bpftrace gets it.
func bucketSnippet(t *testing.T) string {
	var b strings.Builder
	if err := ioLatencyTemplate.ExecuteTemplate(&b, "bucket", nil); err != nil {
		t.Fatal(err)
	}
	return b.String()
}

// bucketSamples are latencies around every edge that matters: each value below 16,
// both sides of each power of two and of sub-bucket edges, and random ones.
func bucketSamples() []uint64 {
	var vs []uint64
	for v := range uint64(300) {
		vs = append(vs, v)
	}
	for p := 4; p < 63; p++ {
		for _, v := range []uint64{1 << p, 1<<p - 1, 1<<p + 1, 17 << (p - 4), 17<<(p-4) - 1, 31 << (p - 4), 1<<(p+1) - 1} {
			vs = append(vs, v)
		}
	}
	r := rand.New(rand.NewPCG(1, 2))
	for range 200 {
		vs = append(vs, r.Uint64()>>r.IntN(64))
	}
	return vs
}

// TestIOLatencyBucketAgreesWithScript runs the script's bucket arithmetic, as read from
// its text, on sample latencies and compares with latencyBucket: the two must never
// drift apart, or the percentiles would be computed from the wrong bucket edges.
func TestIOLatencyBucketAgreesWithScript(t *testing.T) {
	src := bucketSnippet(t)
	// The binary search for the leading one: shifts in order; the last only adds.
	search := regexp.MustCompile(`if \(\$x >> (\d+)\) \{ \$x = \$x >> (\d+); \$p = \$p \+ (\d+); \}`)
	last := regexp.MustCompile(`if \(\$x >> 1\) \{ \$p = \$p \+ 1; \}`)
	linear := regexp.MustCompile(`\$b = \$v;\s+if \(\$p >= (\d+)\) \{ \$b = \$p \* (\d+) \+ \(\(\$v >> \(\$p - (\d+)\)\) & (\d+)\); \}`)
	var shifts []uint
	for _, m := range search.FindAllStringSubmatch(src, -1) {
		if m[1] != m[2] || m[1] != m[3] {
			t.Fatalf("search step %q shifts and adds different amounts", m[0])
		}
		n, _ := strconv.Atoi(m[1])
		shifts = append(shifts, uint(n))
	}
	lin := linear.FindStringSubmatch(src)
	if len(shifts) != 5 || !last.MatchString(src) || lin == nil {
		t.Fatalf("the script's bucket code no longer has the shape this test reads (%d search steps, linear part %q):\n%s", len(shifts), lin, src)
	}
	var k [4]uint64
	for i := range k {
		k[i], _ = strconv.ParseUint(lin[i+1], 10, 64)
	}
	script := func(v uint64) uint64 {
		x, p := v, uint64(0)
		for _, s := range shifts {
			if x>>s != 0 {
				x, p = x>>s, p+uint64(s)
			}
		}
		if x>>1 != 0 {
			p++
		}
		if p < k[0] {
			return v
		}
		return p*k[1] + (v>>(p-k[2]))&k[3]
	}
	for _, v := range bucketSamples() {
		if got, want := script(v), latencyBucket(v); got != uint64(want) {
			t.Errorf("latency %d ns: script bucket %d, latencyBucket %d", v, got, want)
		}
	}
	// Documented edges, so that a change to both at once still shows.
	for v, want := range map[uint64]int{15: 15, 16: 64, 17: 65, 31: 79, 32: 80, 33: 80, 34: 81, 1e6: 318, 1 << 20: 320} {
		if got := latencyBucket(v); got != want {
			t.Errorf("latencyBucket(%d) = %d, want %d", v, got, want)
		}
	}
}

func skipUnlessBpftrace(t *testing.T) {
	t.Helper()
	if os.Geteuid() != 0 {
		t.Skip("not root: bpftrace needs root")
	}
	if _, err := exec.LookPath("bpftrace"); err != nil {
		t.Skip("no bpftrace on PATH")
	}
}

// TestIOLatencyBucketInBpftrace runs the script's bucket code itself in bpftrace, where
// BPF's integer semantics rather than this test's reading of them apply.
func TestIOLatencyBucketInBpftrace(t *testing.T) {
	skipUnlessBpftrace(t)
	vs := bucketSamples()
	// Literals above int64 are not bpftrace's; the random samples go that far.
	vs = slices.DeleteFunc(vs, func(v uint64) bool { return v >= 1<<62 })
	tmpl := template.Must(template.Must(ioLatencyTemplate.Clone()).New("test").Parse(
		"BEGIN {\n{{range .}}\t$v = (uint64){{.}};\n{{template \"bucket\"}}\n\tprintf(\"%llu %llu\\n\", $v, $b);\n{{end}}\texit();\n}\n"))
	var prog strings.Builder
	if err := tmpl.Execute(&prog, vs); err != nil {
		t.Fatal(err)
	}
	// Too long for an argument.
	file := filepath.Join(t.TempDir(), "bucket.bt")
	if err := os.WriteFile(file, []byte(prog.String()), 0o600); err != nil {
		t.Fatal(err)
	}
	out, err := exec.Command("bpftrace", file).CombinedOutput()
	if err != nil {
		if err := fmt.Errorf("%w: %s", err, out); iolatTestEnvironment(err) {
			t.Skipf("bpftrace cannot run a BEGIN probe here: %v", err)
		}
		t.Fatalf("%v\n%s", err, out)
	}
	seen := 0
	for line := range strings.Lines(string(out)) {
		var v, b uint64
		if n, _ := fmt.Sscanf(line, "%d %d", &v, &b); n != 2 {
			continue
		}
		seen++
		if want := latencyBucket(v); b != uint64(want) {
			t.Errorf("latency %d ns: bpftrace bucket %d, latencyBucket %d", v, b, want)
		}
	}
	if seen != len(vs) {
		t.Fatalf("bpftrace printed %d buckets for %d latencies:\n%s", seen, len(vs), out)
	}
}

// iolatTestEnvironment tells Start's failures that are this machine's (no BPF, no
// tracepoints, a container) from the script's own.
func iolatTestEnvironment(err error) bool {
	for _, s := range []string{"not root", "root user", "no bpftrace", "tracefs", "tracepoint not found",
		"not permitted", "ermission denied", "Error attaching probe", "does not support"} {
		if strings.Contains(err.Error(), s) {
			return true
		}
	}
	return false
}

// TestIOLatencyPrintsWhenAsked: bpftrace prints the histogram when Collect asks for
// it, not on a timer of its own (every print is a pass over the map, which ten
// times an interval cost more than the rest of the sampler).
func TestIOLatencyPrintsWhenAsked(t *testing.T) {
	skipUnlessBpftrace(t)
	_, disk := ownDisk(t, 16<<20)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	l, err := StartIOLatency(ctx, []blockdev.BlockDevice{disk}, 100*time.Millisecond, false)
	if err != nil {
		if iolatTestEnvironment(err) {
			t.Skipf("per-I/O latency not available: %v", err)
		}
		t.Fatal(err)
	}
	defer l.Close()
	chunks := func() uint64 {
		l.mu.Lock()
		defer l.mu.Unlock()
		return l.chunks
	}
	// The chunks asked for until bpftrace attached may still be on their way.
	time.Sleep(300 * time.Millisecond)
	before := chunks()
	time.Sleep(time.Second)
	if n := chunks() - before; n > 0 {
		t.Errorf("%d chunks printed in 1 s without being asked for", n)
	}
	var s Sample
	for range 2 {
		if err := l.Collect(ctx, &s); err != nil {
			t.Fatal(err)
		}
	}
	if n := chunks() - before; n != 2 {
		t.Errorf("2 Collects got %d chunks, want 2", n)
	}
}

// TestIOLatencyDisk traces synchronous direct writes to a disk of the test's own
// (ownDisk) and checks the histogram's I/O count against /proc/diskstats over the same
// span.
func TestIOLatencyDisk(t *testing.T) {
	skipUnlessBpftrace(t)
	dir, disk := ownDisk(t, 64<<20)
	if _, err := os.Stat(fmt.Sprintf("/sys/dev/block/%d:%d/mq", disk.Major, disk.Minor)); err != nil {
		t.Skipf("%s is not request-based (blk-mq): no block_rq events", disk.Name)
	}
	const interval = time.Second
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	l, err := StartIOLatency(ctx, []blockdev.BlockDevice{disk}, interval, false)
	if err != nil {
		if iolatTestEnvironment(err) {
			t.Skipf("per-I/O latency not available: %v", err)
		}
		t.Fatal(err)
	}
	defer func() {
		if err := l.Close(); err != nil {
			t.Error(err)
		}
	}()
	settle := chunkWait(interval)

	fd, err := unix.Open(filepath.Join(dir, "f"), unix.O_WRONLY|unix.O_CREAT|unix.O_DIRECT|unix.O_DSYNC, 0o600)
	if err != nil {
		t.Skipf("O_DIRECT here: %v", err)
	}
	defer unix.Close(fd)
	// O_DIRECT wants an aligned buffer: a page from mmap is.
	buf, err := unix.Mmap(-1, 0, 4096, unix.PROT_READ|unix.PROT_WRITE, unix.MAP_ANON|unix.MAP_PRIVATE)
	if err != nil {
		t.Fatal(err)
	}
	defer unix.Munmap(buf)
	for i := range buf {
		buf[i] = byte(i)
	}

	time.Sleep(settle)
	var s Sample
	if err := l.Collect(ctx, &s); err != nil {
		t.Fatal(err)
	}
	before := completedIOs(t, disk.Name)
	start := time.Now()
	const blocks = 2000
	for i := range blocks {
		if _, err := unix.Pwrite(fd, buf, int64(i)*4096); err != nil {
			if errors.Is(err, syscall.EINVAL) && i == 0 {
				t.Skipf("O_DIRECT write here: %v", err)
			}
			t.Fatal(err)
		}
	}
	took := time.Since(start)
	// The writes have completed; wait for the chunks that count them.
	time.Sleep(settle)
	after := completedIOs(t, disk.Name)
	if err := l.Collect(ctx, &s); err != nil {
		t.Fatal(err)
	}
	if len(s.Latency) != 1 {
		t.Fatalf("got %+v, want one device", s.Latency)
	}
	lat, completed := s.Latency[0], after-before
	t.Logf("%s: %d writes of 4 KiB in %v; histogram %d I/Os, /proc/diskstats %d reads+writes; p50 %.3f ms, p99 %.3f ms, p99.9 %.3f ms",
		disk.Name, blocks, took.Round(time.Millisecond), lat.IOs, completed, lat.P50Ms, lat.P99Ms, lat.P999Ms)
	if lat.Device != disk.Name {
		t.Errorf("device %q, want %q", lat.Device, disk.Name)
	}
	if completed < blocks {
		t.Fatalf("/proc/diskstats counts %d I/Os for %d synchronous writes", completed, blocks)
	}
	if diff := float64(lat.IOs) - float64(completed); diff < -0.1*float64(completed) || diff > 0.1*float64(completed) {
		t.Errorf("histogram counts %d I/Os, /proc/diskstats %d: more than 10%% apart", lat.IOs, completed)
	}
	if !(0 < lat.P50Ms && lat.P50Ms <= lat.P99Ms && lat.P99Ms <= lat.P999Ms) {
		t.Errorf("percentiles out of order: %+v", lat)
	}
}

// TestIOLatencyFakeBpftrace runs StartIOLatency against stand-ins for bpftrace that
// fail to attach, stop on their own, or run until closed.
func TestIOLatencyFakeBpftrace(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("not root: StartIOLatency refuses before running anything")
	}
	if _, err := os.Stat(tracefsDir + "/events"); err != nil {
		t.Skip("no tracefs: StartIOLatency would mount it")
	}
	devs := []blockdev.BlockDevice{{Name: "vda", Major: 254}}
	fake := func(t *testing.T, script string) {
		dir := t.TempDir()
		if err := os.WriteFile(filepath.Join(dir, "bpftrace"), []byte("#!/bin/sh\n"+script), 0o755); err != nil {
			t.Fatal(err)
		}
		t.Setenv("PATH", dir)
	}
	const memlock = `echo 'ERROR: Unknown error -1: couldn'"'"'t set RLIMIT_MEMLOCK for bpftrace.' >&2` + "\n"
	const chunks = "echo 'Attaching 4 probes...'\nwhile :; do echo '@h[266338304, 251]: 1'; echo '-- 1'; /bin/sleep 0.05; done\n"

	t.Run("attach", func(t *testing.T) {
		fake(t, memlock+"echo 'stdin:1:1-26: ERROR: tracepoint not found: block:block_rq_issue' >&2\necho 'tracepoint:block:block_rq_issue' >&2\nexit 1\n")
		_, err := StartIOLatency(context.Background(), devs, time.Second, false)
		if want := "bpftrace failed to attach: stdin:1:1-26: ERROR: tracepoint not found: block:block_rq_issue"; err == nil || err.Error() != want {
			t.Fatalf("got %v, want %q", err, want)
		}
	})
	t.Run("exit", func(t *testing.T) {
		fake(t, memlock+"echo 'Attaching 4 probes...'\necho '-- 1'\n/bin/sleep 0.2\necho 'ERROR: lost the map' >&2\nexit 1\n")
		l, err := StartIOLatency(context.Background(), devs, time.Second, false)
		if err != nil {
			t.Fatal(err)
		}
		<-l.exited
		var s Sample
		errs := []error{l.Collect(context.Background(), &s), l.Collect(context.Background(), &s), l.Close()}
		if want := "bpftrace stopped: exit status 1: ERROR: lost the map"; errs[0] == nil || errs[0].Error() != want || errs[1] != nil || errs[2] != nil {
			t.Fatalf("Collect, Collect, Close: %v; want %q once", errs, want)
		}
	})
	t.Run("close", func(t *testing.T) {
		fake(t, memlock+chunks)
		l, err := StartIOLatency(context.Background(), devs, time.Second, false)
		if err != nil {
			t.Fatal(err)
		}
		pid := l.cmd.Process.Pid
		start := time.Now()
		if err := l.Close(); err != nil {
			t.Fatal(err)
		}
		// The whole group is gone, the shell's sleep too, and not by WaitDelay's SIGKILL.
		// (Dead, not necessarily reaped: PID 1 here reaps orphans when it gets to it.)
		for deadline := time.Now().Add(time.Second); ; time.Sleep(10 * time.Millisecond) {
			alive := iolatTestGroupAlive(t, pid)
			if len(alive) == 0 {
				break
			}
			if time.Now().After(deadline) {
				t.Fatalf("process group %d still running after Close: %v", pid, alive)
			}
		}
		if d := time.Since(start); d > stopDelay/2 {
			t.Errorf("Close took %v", d)
		}
	})
	t.Run("cancel", func(t *testing.T) {
		fake(t, memlock+chunks)
		ctx, cancel := context.WithCancel(context.Background())
		l, err := StartIOLatency(ctx, devs, time.Second, false)
		if err != nil {
			t.Fatal(err)
		}
		cancel()
		<-l.exited
		var s Sample
		if err := l.Collect(context.Background(), &s); err == nil {
			t.Error("Collect after bpftrace was stopped by the context: no error")
		}
		if err := l.Close(); err != nil {
			t.Error(err)
		}
	})
}

// iolatTestGroupAlive lists the processes of group pgid that are not zombies.
func iolatTestGroupAlive(t *testing.T, pgid int) []string {
	t.Helper()
	stats, err := filepath.Glob("/proc/[0-9]*/stat")
	if err != nil {
		t.Fatal(err)
	}
	var alive []string
	for _, f := range stats {
		b, err := os.ReadFile(f)
		if err != nil {
			continue // exited meanwhile
		}
		// "pid (comm) state ppid pgrp ...": comm may hold spaces and parentheses.
		i := strings.LastIndexByte(string(b), ')')
		if i < 0 {
			continue
		}
		if fs := strings.Fields(string(b[i+1:])); len(fs) < 3 || fs[2] != strconv.Itoa(pgid) || fs[0] == "Z" {
			continue
		}
		alive = append(alive, string(b[:i+1]))
	}
	return alive
}
