package infile

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
	"unsafe"

	"golang.org/x/sys/unix"

	"github.com/storbench/storbench/internal/input"
)

// Each refusal is one input error naming the file and what is wrong; none blocks.
func TestRefusals(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	write := func(name, text string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	fifo := filepath.Join(dir, "fifo")
	if err := syscall.Mkfifo(fifo, 0o644); err != nil {
		t.Fatal(err)
	}
	write("big", strings.Repeat("x", 2048))
	write("ok.json", `{"a": 1}`+"\n")
	write("torn.json", `{"a": `)
	write("empty.json", "")
	write("two.json", `{"a": 1} {"a": 2}`)
	if err := os.Symlink(filepath.Join(dir, "ok.json"), filepath.Join(dir, "link.json")); err != nil {
		t.Fatal(err)
	}
	if err := os.Mkdir(filepath.Join(dir, "sub"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(dir, filepath.Join(dir, "sub", "up")); err != nil {
		t.Fatal(err)
	}
	k := Kind{What: "test file", Limit: 1 << 10}
	var v struct{ A int }
	for _, c := range []struct {
		name string
		read func() error
		want string
	}{
		{"device", func() error { _, err := k.Read("/dev/zero"); return err }, "test file /dev/zero is not a regular file (a character device)"},
		{"fifo", func() error { _, err := k.Read(fifo); return err }, "test file " + fifo + " is not a regular file (a FIFO)"},
		{"directory", func() error { _, err := k.ReadIn(dir, "sub"); return err }, "is not a regular file (a directory)"},
		{"too big", func() error { _, err := k.ReadIn(dir, "big"); return err }, "big is 2KB, more than the 1KB a test file may hold"},
		{"link", func() error { return k.DecodeJSONIn(dir, "link.json", &v) }, "link.json is a symbolic link"},
		{"link on the way", func() error { return k.DecodeJSONIn(dir, "sub/up/ok.json", &v) }, "sub/up/ok.json is a symbolic link"},
		{"torn", func() error { return k.DecodeJSONIn(dir, "torn.json", &v) }, "torn.json is torn (its JSON ends early)"},
		{"empty", func() error { return k.DecodeJSONIn(dir, "empty.json", &v) }, "empty.json is empty"},
		{"two values", func() error { return k.DecodeJSONIn(dir, "two.json", &v) }, "two.json is not JSON storbench wrote (more follows its value)"},
		{"missing", func() error { _, err := k.ReadIn(dir, "none"); return err }, "none cannot be read: no such file or directory"},
	} {
		done := make(chan error, 1)
		go func() { done <- c.read() }()
		select {
		case err := <-done:
			if !errors.Is(err, input.ErrInvalid) || !strings.Contains(err.Error(), c.want) || strings.Contains(err.Error(), "\n") {
				t.Errorf("%s: %v, want one input error with %q", c.name, err, c.want)
			}
			if c.name == "missing" && !errors.Is(err, fs.ErrNotExist) {
				t.Errorf("missing: %v does not say the file does not exist", err)
			}
		case <-time.After(5 * time.Second):
			t.Fatalf("%s: still reading after 5 s", c.name)
		}
	}
	if b, err := k.Read(filepath.Join(dir, "link.json")); err != nil || len(b) == 0 {
		t.Errorf("Read follows a link a user names: %q, %v", b, err)
	}
	if err := k.DecodeJSONIn(dir, "ok.json", &v); err != nil || v.A != 1 {
		t.Errorf("ok.json: %+v, %v", v, err)
	}
}

// A FIFO or a device is refused without being opened: opening one has effects (a
// watchdog armed, a tape rewound, a FIFO's writer let go), so the type is checked on a
// path-only descriptor first. inotify sees every open of a file but a path-only one;
// the regular file read beside them shows that it sees them here.
func TestNotRegularNeverOpened(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	fifo, dev, file := filepath.Join(dir, "fifo"), filepath.Join(dir, "null"), filepath.Join(dir, "ok.json")
	if err := unix.Mkfifo(fifo, 0o644); err != nil {
		t.Fatal(err)
	}
	// A node of /dev/null's numbers: harmless had it been opened.
	if err := unix.Mknod(dev, unix.S_IFCHR|0o644, int(unix.Mkdev(1, 3))); err != nil {
		t.Skipf("mknod: %v", err)
	}
	if err := os.WriteFile(file, []byte(`{"a": 1}`), 0o644); err != nil {
		t.Fatal(err)
	}
	in, err := unix.InotifyInit1(unix.IN_NONBLOCK | unix.IN_CLOEXEC)
	if err != nil {
		t.Fatal(err)
	}
	defer unix.Close(in)
	watched := map[int32]string{}
	for _, p := range []string{fifo, dev, file} {
		wd, err := unix.InotifyAddWatch(in, p, unix.IN_OPEN)
		if err != nil {
			t.Fatal(err)
		}
		watched[int32(wd)] = filepath.Base(p)
	}
	k := Kind{What: "test file", Limit: 1 << 10}
	var v struct{ A int }
	for _, read := range []func() error{
		func() error { _, err := k.Read(fifo); return err },
		func() error { _, err := k.Read(dev); return err },
		func() error { _, err := k.ReadIn(dir, "fifo"); return err },
		func() error { return k.DecodeJSONIn(dir, "null", &v) },
	} {
		if err := read(); !errors.Is(err, input.ErrInvalid) || !strings.Contains(err.Error(), "is not a regular file") {
			t.Errorf("%v, want a refusal: not a regular file", err)
		}
	}
	if err := k.DecodeJSONIn(dir, "ok.json", &v); err != nil {
		t.Fatal(err)
	}
	opened := map[string]bool{}
	buf := make([]byte, 4096)
	for {
		n, err := unix.Read(in, buf)
		if err != nil || n <= 0 {
			break
		}
		for off := 0; off+unix.SizeofInotifyEvent <= n; {
			ev := (*unix.InotifyEvent)(unsafe.Pointer(&buf[off]))
			opened[watched[ev.Wd]] = true
			off += unix.SizeofInotifyEvent + int(ev.Len)
		}
	}
	if !opened["ok.json"] {
		t.Fatalf("inotify saw no open of the file read: %v", opened)
	}
	for _, name := range []string{"fifo", "null"} {
		if opened[name] {
			t.Errorf("%s was opened before it was refused", name)
		}
	}
}
