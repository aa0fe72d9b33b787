package localserver

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// TestWritesDoNotGoThroughLinks: a server's user owns its directory and can put a
// symbolic link, a hard link or a FIFO where storbench (root) writes a
// configuration file: each is refused, and the file it leads to is untouched; a
// regular file is written, and one created belongs to the server's user.
func TestWritesDoNotGoThroughLinks(t *testing.T) {
	dir := t.TempDir()
	host := filepath.Join(dir, "host-file") // a file of the host's, e.g. /etc/shadow
	must := func(err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	must(os.WriteFile(host, []byte("the host's\n"), 0o600))
	planted := map[string]func(path string) error{
		"symbolic link": func(path string) error { return os.Symlink(host, path) },
		"dangling link": func(path string) error { return os.Symlink(filepath.Join(dir, "nowhere"), path) },
		"hard link":     func(path string) error { return os.Link(host, path) },
		"fifo":          func(path string) error { return syscall.Mkfifo(path, 0o600) },
	}
	writes := map[string]func(path string) error{
		"WriteOwn":   func(path string) error { return WriteOwn(path, []byte("storbench's\n"), 0o600, nil) },
		"AppendFile": func(path string) error { return AppendFile(path, "storbench's\n") },
	}
	for kind, plant := range planted {
		for name, write := range writes {
			path := filepath.Join(dir, "conf")
			os.Remove(path)
			must(plant(path))
			if err := write(path); err == nil || !strings.Contains(err.Error(), path) {
				t.Errorf("%s over a %s: %v, want a refusal naming %s", name, kind, err, path)
			}
			if b, _ := os.ReadFile(host); string(b) != "the host's\n" {
				t.Fatalf("%s over a %s wrote the host's file: %q", name, kind, b)
			}
			if _, err := os.Lstat(filepath.Join(dir, "nowhere")); err == nil {
				t.Fatalf("%s over a %s created the link's target", name, kind)
			}
		}
	}

	path := filepath.Join(dir, "own")
	cred := &syscall.Credential{Uid: 65534, Gid: 65534} // nobody
	if os.Geteuid() != 0 {
		cred = nil
	}
	must(WriteOwn(path, []byte("a = 1\n"), 0o600, cred))
	must(AppendFile(path, "b = 2\n"))
	must(WriteOwn(path, []byte("c = 3\n"), 0o600, cred)) // replaced whole
	if b, err := os.ReadFile(path); err != nil || string(b) != "c = 3\n" {
		t.Errorf("the regular file holds %q (%v)", b, err)
	}
	if info, err := os.Stat(path); err != nil || info.Mode().Perm() != 0o600 || cred != nil && info.Sys().(*syscall.Stat_t).Uid != cred.Uid {
		t.Errorf("created %v (%v), want 0600 belonging to the server's user", info.Mode(), err)
	}
}

func TestWaitExited(t *testing.T) {
	ctx := t.Context()
	short := exec.Command("sleep", "0.3")
	long := exec.Command("sleep", "30")
	for _, c := range []*exec.Cmd{short, long} {
		if err := c.Start(); err != nil {
			t.Fatal(err)
		}
	}
	t.Cleanup(func() { _ = long.Process.Kill(); _ = long.Wait() })
	begun := time.Now()
	// Not reaped until after: a zombie counts as exited.
	if err := WaitExited(ctx, short.Process.Pid, 5*time.Second); err != nil {
		t.Errorf("a process that exits: %v", err)
	}
	if took := time.Since(begun); took < 250*time.Millisecond {
		t.Errorf("returned after %v, before the process exited", took)
	}
	_ = short.Wait()
	if err := WaitExited(ctx, short.Process.Pid, time.Second); err != nil {
		t.Errorf("a reaped process: %v", err)
	}
	if err := WaitExited(ctx, long.Process.Pid, 100*time.Millisecond); err == nil {
		t.Error("a process that runs on is reported exited")
	}
	// The command, in parentheses, may itself hold ") Z".
	for stat, want := range map[string]bool{"12 (a) Z b) S 1 2": false, "12 (a) Z b) Z 1 2": true, "12 (x) X 1": true, "12 (x) R 1": false, "garbage": false} {
		if got := exitedState([]byte(stat)); got != want {
			t.Errorf("exitedState(%q) = %v, want %v", stat, got, want)
		}
	}
}
