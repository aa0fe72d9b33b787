package localserver

import (
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
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
