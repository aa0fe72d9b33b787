package metrics

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
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

// With delay accounting off, a process's /proc/PID/stat is read when the process is
// first seen, not every interval: at thousands of backends those reads were half of
// what sampling the server cost. Its I/O is still read every interval.
func TestProcessesReadStatOnce(t *testing.T) {
	root := t.TempDir()
	if err := os.MkdirAll(filepath.Join(root, "sys/kernel"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(root, "sys/kernel/task_delayacct"), []byte("0\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	writeProc(t, root, 100, 1, "main", 0, "101 ")
	writeProc(t, root, 101, 100, "a backend", 1000, "")
	c, _, err := NewProcesses(root, []Server{{Roles: twoRoles{}, Main: 100}})
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
