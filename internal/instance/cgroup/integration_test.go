package cgroup

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// These tests make real groups. They run as root on a machine with cgroup v1 memory and
// cpuset hierarchies, and skip, saying why, anywhere else.

func needV1(t *testing.T) {
	t.Helper()
	if os.Geteuid() != 0 {
		t.Skipf("needs root to create cgroups (uid %d)", os.Geteuid())
	}
	v, err := Support()
	if err != nil {
		t.Skipf("no usable cgroups: %v", err)
	}
	if v != V1 {
		t.Skipf("these tests are for cgroup v1; this machine offers %v", v)
	}
}

// groupName is unique per test process; the group is destroyed at the end of the test
// (after the processes the test started are killed).
func groupName(t *testing.T, what string) string {
	name := fmt.Sprintf("test-%d-%s", os.Getpid(), what)
	t.Cleanup(func() {
		if g, err := Open(name); err == nil {
			if err := g.Destroy(); err != nil {
				t.Errorf("cleanup: %v", err)
			}
		}
	})
	return name
}

// gated starts sh -c script in its own process group, first waiting for a line on stdin
// so that the caller can Add it to a group before the script runs; the test's end
// kills the process group.
func gated(t *testing.T, script string) (*exec.Cmd, io.WriteCloser) {
	t.Helper()
	cmd := exec.Command("sh", "-c", "read _; "+script)
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	stdin, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	pgid := cmd.Process.Pid
	t.Cleanup(func() {
		_ = syscall.Kill(-pgid, syscall.SIGKILL)
		if cmd.ProcessState == nil {
			_ = cmd.Wait()
		}
	})
	return cmd, stdin
}

// waitFor runs cmd's Wait with a time limit.
func waitFor(t *testing.T, cmd *exec.Cmd, limit time.Duration) error {
	t.Helper()
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	select {
	case err := <-done:
		return err
	case <-time.After(limit):
		_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
		<-done
		t.Fatalf("%v did not finish within %v", cmd.Args, limit)
		return nil
	}
}

func readTrim(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return strings.TrimSpace(string(b))
}

// statValue is one "key value" line of a memory.stat or memory.oom_control file; -1 when
// the key is absent.
func statValue(t *testing.T, path, key string) int64 {
	t.Helper()
	for _, line := range strings.Split(readTrim(t, path), "\n") {
		if k, v, ok := strings.Cut(line, " "); ok && k == key {
			n, err := strconv.ParseInt(v, 10, 64)
			if err != nil {
				t.Fatalf("%s: %q", path, line)
			}
			return n
		}
	}
	return -1
}

func TestIntegrationV1Group(t *testing.T) {
	needV1(t)
	name := groupName(t, "group")
	g, err := Create(name, Limits{MemoryBytes: 64 << 20, CPUs: "0"})
	if err != nil {
		t.Fatal(err)
	}

	// The shell is added, then forks a sleep: both must be in the group.
	cmd, gate := gated(t, "sleep 30 & wait")
	sh := cmd.Process.Pid
	if err := g.Add(sh); err != nil {
		t.Fatal(err)
	}
	if _, err := io.WriteString(gate, "go\n"); err != nil {
		t.Fatal(err)
	}
	var pids []int
	for deadline := time.Now().Add(5 * time.Second); len(pids) < 2 && time.Now().Before(deadline); time.Sleep(10 * time.Millisecond) {
		if pids, err = g.Pids(); err != nil {
			t.Fatal(err)
		}
	}
	if len(pids) != 2 || !slices.Contains(pids, sh) {
		t.Fatalf("Pids() = %v, want the shell %d and its sleep", pids, sh)
	}
	for _, pid := range pids {
		cg := readTrim(t, fmt.Sprintf("/proc/%d/cgroup", pid))
		for _, c := range []string{"memory", "cpuset"} {
			if !strings.Contains(cg, ":"+c+":/storbench/"+name+"\n") && !strings.HasSuffix(cg, ":"+c+":/storbench/"+name) {
				t.Errorf("process %d not in the %s group:\n%s", pid, c, cg)
			}
		}
		status := readTrim(t, fmt.Sprintf("/proc/%d/status", pid))
		if !strings.Contains(status, "Cpus_allowed_list:\t0\n") {
			t.Errorf("process %d may run on other CPUs than 0:\n%s", pid, status)
		}
	}
	if got := readTrim(t, filepath.Join(root, "memory/storbench", name, "memory.limit_in_bytes")); got != "67108864" {
		t.Errorf("memory.limit_in_bytes = %s, want 67108864", got)
	}
	applied := g.Applied()
	for _, want := range []string{"memory.limit_in_bytes=67108864", "cpuset.cpus=0"} {
		if !slices.Contains(applied, want) {
			t.Errorf("Applied() = %q, lacks %q", applied, want)
		}
	}
	t.Logf("applied: %q", applied)

	err = g.Destroy()
	wantErr(t, err, "still in the group", strconv.Itoa(sh))
	t.Logf("destroy with processes: %v", err)

	if err := syscall.Kill(-sh, syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	_ = cmd.Wait()
	for deadline := time.Now().Add(5 * time.Second); ; time.Sleep(10 * time.Millisecond) {
		if pids, _ = g.Pids(); len(pids) == 0 || time.Now().After(deadline) {
			break
		}
	}
	o, err := Open(name) // as a later invocation would
	if err != nil {
		t.Fatal(err)
	}
	if err := o.Destroy(); err != nil {
		t.Fatal(err)
	}
	for _, c := range []string{"memory", "cpuset", "blkio"} {
		if _, err := os.Stat(filepath.Join(root, c, "storbench", name)); !errors.Is(err, fs.ErrNotExist) {
			t.Errorf("%s group still there after Destroy (%v)", c, err)
		}
	}
	if _, err := Open(name); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("Open after Destroy: %v", err)
	}
}

func TestIntegrationV1Reuse(t *testing.T) {
	needV1(t)
	name := groupName(t, "reuse")
	if _, err := Create(name, Limits{MemoryBytes: 64 << 20, CPUs: "0"}); err != nil {
		t.Fatal(err)
	}
	g, err := Create(name, Limits{})
	if err != nil {
		t.Fatal(err)
	}
	all := readTrim(t, filepath.Join(root, "cpuset/cpuset.cpus"))
	applied := g.Applied()
	for _, want := range []string{"memory.limit_in_bytes=9223372036854771712 (no limit)", "cpuset.cpus=" + all} {
		if !slices.Contains(applied, want) {
			t.Errorf("Applied() = %q, lacks %q", applied, want)
		}
	}
}

func TestIntegrationV1Rejects(t *testing.T) {
	needV1(t)
	name := groupName(t, "rejects")
	online := readTrim(t, filepath.Join(sysRoot, "devices/system/cpu/online"))
	cpus, err := parseCPUList(online)
	if err != nil {
		t.Fatal(err)
	}
	beyond := strconv.Itoa(cpus[len(cpus)-1] + 1)
	for _, tc := range []struct {
		name  string
		l     Limits
		parts []string
	}{
		{name, Limits{CPUs: beyond}, []string{"CPU " + beyond + " not online", "this machine's CPUs are " + online}},
		{name, Limits{CPUs: " "}, []string{"empty CPU list"}},
		{name, Limits{CPUs: ","}, []string{`cpuset ","`}},
		{name, Limits{MemoryBytes: 4096}, []string{"at least"}},
		{"a/b", Limits{}, []string{"group name"}},
		{"..", Limits{}, []string{"group name"}},
	} {
		_, err := Create(tc.name, tc.l)
		wantErr(t, err, tc.parts...)
	}
	for _, c := range []string{"memory", "cpuset"} {
		if _, err := os.Stat(filepath.Join(root, c, "storbench", name)); err == nil {
			t.Errorf("%s group made by a rejected Create", c)
		}
	}
}

// A process that needs more than the limit is killed by the group's OOM killer, while
// the machine has plenty of memory.
func TestIntegrationV1OOM(t *testing.T) {
	needV1(t)
	g, err := Create(groupName(t, "oom"), Limits{MemoryBytes: 32 << 20})
	if err != nil {
		t.Fatal(err)
	}
	// tail keeps the whole newline-free input: 200 MB of anonymous memory.
	cmd, gate := gated(t, "head -c 200M /dev/zero | tail > /dev/null")
	if err := g.Add(cmd.Process.Pid); err != nil {
		t.Fatal(err)
	}
	if _, err := io.WriteString(gate, "go\n"); err != nil {
		t.Fatal(err)
	}
	err = waitFor(t, cmd, time.Minute)
	if err == nil {
		t.Fatal("200 MB fitted in a 32 MB group")
	}
	dir := filepath.Join(root, "memory/storbench", g.Name())
	kills := statValue(t, filepath.Join(dir, "memory.oom_control"), "oom_kill")
	t.Logf("exit: %v; oom_kill %d; failcnt %s", err, kills, readTrim(t, filepath.Join(dir, "memory.failcnt")))
	if kills == 0 {
		t.Errorf("exit %v, but memory.oom_control counts no OOM kill", err)
	}
}

// The page cache a group's process brings in is charged to the group: reading a file
// five times the limit succeeds (the cache is reclaimed within the group) and the
// group's usage, mostly cache, reaches the limit. The file is written outside the group
// and dropped from the cache first: buffered writes in a small v1 group can be
// OOM-killed when writeback is slow (another test loading the disk), reads cannot.
func TestIntegrationV1PageCache(t *testing.T) {
	needV1(t)
	dir := t.TempDir()
	var st syscall.Statfs_t
	if err := syscall.Statfs(dir, &st); err != nil {
		t.Fatal(err)
	}
	if st.Type == 0x01021994 { // tmpfs: its pages cannot be reclaimed without swap
		t.Skipf("%s is on tmpfs", dir)
	}
	const limit = 32 << 20
	g, err := Create(groupName(t, "cache"), Limits{MemoryBytes: limit})
	if err != nil {
		t.Fatal(err)
	}
	file := filepath.Join(dir, "f")
	if out, err := exec.Command("dd", "if=/dev/zero", "of="+file, "bs=1M", "count=160", "conv=fsync",
		"oflag=nocache", "status=none").CombinedOutput(); err != nil {
		t.Fatalf("write the test file: %v: %s", err, out)
	}
	// GNU dd's documented way to drop a whole file's pages from the cache.
	if out, err := exec.Command("dd", "if="+file, "iflag=nocache", "count=0", "status=none").CombinedOutput(); err != nil {
		t.Fatalf("drop the test file's cache: %v: %s", err, out)
	}
	cmd, gate := gated(t, "dd if="+file+" of=/dev/null bs=1M status=none")
	if err := g.Add(cmd.Process.Pid); err != nil {
		t.Fatal(err)
	}
	if _, err := io.WriteString(gate, "go\n"); err != nil {
		t.Fatal(err)
	}
	if err := waitFor(t, cmd, 2*time.Minute); err != nil {
		t.Fatalf("reading 160 MB in a 32 MB group: %v", err)
	}
	mem := filepath.Join(root, "memory/storbench", g.Name())
	peak, err := strconv.ParseInt(readTrim(t, filepath.Join(mem, "memory.max_usage_in_bytes")), 10, 64)
	if err != nil {
		t.Fatal(err)
	}
	cache := statValue(t, filepath.Join(mem, "memory.stat"), "cache")
	t.Logf("peak usage %d, cache now %d, limit %d", peak, cache, limit)
	if peak > limit || peak < limit/2 {
		t.Errorf("peak usage %d; want between %d and the limit %d: page cache not charged?", peak, limit/2, limit)
	}
	if cache < limit/4 {
		t.Errorf("cache charged to the group %d; want at least %d", cache, limit/4)
	}
}

// A read throttle slows direct reads from the device holding the test's directory.
func TestIntegrationV1IO(t *testing.T) {
	needV1(t)
	dir := t.TempDir()
	var st syscall.Stat_t
	if err := syscall.Stat(dir, &st); err != nil {
		t.Fatal(err)
	}
	major := (st.Dev>>8)&0xfff | (st.Dev>>32)&^0xfff
	minor := st.Dev&0xff | (st.Dev>>12)&^0xff
	dev := fmt.Sprintf("%d:%d", major, minor)
	if err := checkDevice(dev); err != nil {
		t.Skipf("%s is not on a whole block device: %v", dir, err)
	}
	if err := v1Support(true); err != nil {
		t.Skip(err)
	}
	file := filepath.Join(dir, "f")
	if err := os.WriteFile(file, make([]byte, 8<<20), 0o644); err != nil {
		t.Fatal(err)
	}

	const bps = 4 << 20
	name := groupName(t, "io")
	g, err := Create(name, Limits{IO: []IOLimit{{Device: dev, ReadBPS: bps, WriteIOPS: 1000}}})
	if err != nil {
		t.Fatal(err)
	}
	applied := g.Applied()
	for _, want := range []string{
		fmt.Sprintf("blkio.throttle.read_bps_device=%s %d", dev, bps),
		fmt.Sprintf("blkio.throttle.write_iops_device=%s 1000", dev),
	} {
		if !slices.Contains(applied, want) {
			t.Errorf("Applied() = %q, lacks %q", applied, want)
		}
	}
	cmd, gate := gated(t, "dd if="+file+" of=/dev/null bs=1M iflag=direct status=none")
	if err := g.Add(cmd.Process.Pid); err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	if _, err := io.WriteString(gate, "go\n"); err != nil {
		t.Fatal(err)
	}
	if err := waitFor(t, cmd, time.Minute); err != nil {
		t.Fatal(err)
	}
	took := time.Since(start)
	t.Logf("8 MiB read at %d B/s in %v", bps, took)
	if took < 1200*time.Millisecond {
		t.Errorf("8 MiB read in %v under a 4 MiB/s throttle", took)
	}

	// Re-used without IO limits: the throttles are cleared, the blkio group stays until
	// Destroy.
	g, err = Create(name, Limits{})
	if err != nil {
		t.Fatal(err)
	}
	for _, a := range g.Applied() {
		if strings.HasPrefix(a, "blkio.") {
			t.Errorf("throttle left after reset: %s", a)
		}
	}
	if err := syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL); err != nil && !errors.Is(err, syscall.ESRCH) {
		t.Fatal(err)
	}
	if err := g.Destroy(); err != nil {
		t.Fatal(err)
	}
	if isDir(filepath.Join(root, "blkio/storbench", name)) {
		t.Error("blkio group left after Destroy")
	}
}
