package metrics

import (
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"testing"
)

// twoRoles names a process "a" by its title, the rest "b" (what an engine's
// ProcessRoles does from a server's titles).
type twoRoles struct{}

func (twoRoles) Roles() []string { return []string{"a", "b"} }
func (twoRoles) ByThread() bool  { return false }
func (twoRoles) Role(title string) (string, bool) {
	if strings.HasPrefix(title, "a") {
		return "a", true
	}
	return "b", true
}

// writeProc writes the /proc files of process pid, child of ppid, as the collector
// reads them.
func writeProc(t *testing.T, root string, pid, ppid int, title string, readBytes uint64, children string) {
	t.Helper()
	dir := filepath.Join(root, fmt.Sprint(pid))
	task := filepath.Join(dir, "task", fmt.Sprint(pid))
	if err := os.MkdirAll(task, 0o755); err != nil {
		t.Fatal(err)
	}
	// proc(5): pid (comm) state ppid … field 22 the start time, 42 the I/O delay.
	fields := make([]string, 52)
	for i := range fields {
		fields[i] = "0"
	}
	fields[0], fields[1], fields[2], fields[3], fields[21] = fmt.Sprint(pid), "(p)", "S", fmt.Sprint(ppid), "12345"
	stat := strings.Join(fields, " ") + "\n"
	io := fmt.Sprintf("rchar: 0\nwchar: 0\nsyscr: 0\nsyscw: 0\nread_bytes: %d\nwrite_bytes: 0\ncancelled_write_bytes: 0\n", readBytes)
	for path, content := range map[string]string{
		filepath.Join(dir, "stat"): stat, filepath.Join(task, "stat"): stat,
		filepath.Join(dir, "io"): io, filepath.Join(task, "io"): io,
		filepath.Join(dir, "cmdline"): title + "\x00", filepath.Join(task, "children"): children,
	} {
		if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

// delayAccountingOff returns a /proc root whose kernel does no delay accounting.
func delayAccountingOff(t *testing.T) string {
	t.Helper()
	root := t.TempDir()
	if err := os.MkdirAll(filepath.Join(root, "sys/kernel"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(root, "sys/kernel/task_delayacct"), []byte("0\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	return root
}

// With delay accounting off, a process's /proc/PID/stat is read when the process is
// first seen, not every interval: at thousands of backends those reads were half of
// what sampling the server cost. Its I/O is still read every interval.
func TestProcessesReadStatOnce(t *testing.T) {
	root := delayAccountingOff(t)
	writeProc(t, root, 100, 1, "main", 0, "101 ")
	writeProc(t, root, 101, 100, "a backend", 1000, "")
	c, _, err := NewProcesses(root, []Server{{Roles: twoRoles{}, Main: 100}}, false)
	if err != nil {
		t.Fatal(err)
	}
	if err := c.Collect(t.Context(), &Sample{}); err != nil {
		t.Fatal(err)
	}
	// A stat that would no longer parse shows whether it is read again.
	if err := os.WriteFile(filepath.Join(root, "101", "stat"), []byte("unreadable"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(root, "101", "io"), []byte("read_bytes: 5000\nwrite_bytes: 0\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	var s Sample
	if err := c.Collect(t.Context(), &s); err != nil {
		t.Fatalf("second interval read the stat again: %v", err)
	}
	var got uint64
	for _, r := range s.ProcessIO {
		if r.Role == "a" {
			got = r.delta.read
		}
	}
	if got != 4000 {
		t.Errorf("role a read %d bytes in the second interval, want 4000 (its I/O is read every interval): %+v", got, s.ProcessIO)
	}
}

// threadRoles tells a server's threads apart by name, as MariaDB's roles do.
type threadRoles struct{ twoRoles }

func (threadRoles) ByThread() bool { return true }

// writeThread writes thread tid of process pid (name "(title)") as the collector
// reads it.
func writeThread(t *testing.T, root string, pid, tid int, title string, readBytes uint64) {
	t.Helper()
	task := filepath.Join(root, fmt.Sprint(pid), "task", fmt.Sprint(tid))
	if err := os.MkdirAll(task, 0o755); err != nil {
		t.Fatal(err)
	}
	fields := make([]string, 52)
	for i := range fields {
		fields[i] = "0"
	}
	fields[0], fields[1], fields[2], fields[3], fields[21] = fmt.Sprint(tid), "("+title+")", "S", "1", "777"
	io := fmt.Sprintf("read_bytes: %d\nwrite_bytes: 0\n", readBytes)
	for name, content := range map[string]string{"stat": strings.Join(fields, " ") + "\n", "io": io} {
		if err := os.WriteFile(filepath.Join(task, name), []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

// With delay accounting off, a thread's stat (its name and start time) is read when
// the thread is first seen, not every interval: a MariaDB of 5,000 connections has
// 5,000 threads. Its I/O is still read every interval.
func TestThreadsReadStatOnce(t *testing.T) {
	root := delayAccountingOff(t)
	writeProc(t, root, 100, 1, "server", 1000, "")
	writeThread(t, root, 100, 100, "main", 0)
	writeThread(t, root, 100, 101, "a connection", 1000)
	c, _, err := NewProcesses(root, []Server{{Roles: threadRoles{}, Main: 100}}, false)
	if err != nil {
		t.Fatal(err)
	}
	if err := c.Collect(t.Context(), &Sample{}); err != nil {
		t.Fatal(err)
	}
	task := filepath.Join(root, "100", "task", "101")
	if err := os.WriteFile(filepath.Join(task, "stat"), []byte("unreadable"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(task, "io"), []byte("read_bytes: 5000\nwrite_bytes: 0\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	var s Sample
	if err := c.Collect(t.Context(), &s); err != nil {
		t.Fatalf("second interval read the thread's stat again: %v", err)
	}
	var got uint64
	for _, r := range s.ProcessIO {
		if r.Role == "a" {
			got = r.delta.read
		}
	}
	if got != 4000 {
		t.Errorf("role a read %d bytes in the second interval, want 4000 (a thread's I/O is read every interval): %+v", got, s.ProcessIO)
	}
}

// BenchmarkThreadsCollect samples a process of 2,000 threads (this one) by thread, as
// the collector samples a MariaDB of 2,000 connections: one op is one interval.
func BenchmarkThreadsCollect(b *testing.B) {
	release := make(chan struct{})
	defer close(release)
	// Each goroutine holds a thread of its own until the benchmark ends.
	var started sync.WaitGroup
	for range 2000 {
		started.Add(1)
		go func() {
			runtime.LockOSThread()
			started.Done()
			<-release
		}()
	}
	started.Wait()
	c, _, err := NewProcesses("/proc", []Server{{Roles: threadRoles{}, Main: os.Getpid()}}, false)
	if err != nil {
		b.Fatal(err)
	}
	for b.Loop() {
		if err := c.Collect(b.Context(), &Sample{}); err != nil {
			b.Fatal(err)
		}
	}
}
