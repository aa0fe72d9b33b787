package fsplace

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"testing"

	"github.com/storbench/storbench/internal/testsupport/looptest"
	"golang.org/x/sys/unix"
)

// A path not made yet is placed by its nearest existing parent, on that parent's
// filesystem; another mount is another filesystem.
func TestPlaces(t *testing.T) {
	dir := t.TempDir()
	notYet := filepath.Join(dir, "a", "b")
	if got, err := Existing(notYet); err != nil || got != dir {
		t.Errorf("Existing(%s) = %q, %v; want %s", notYet, got, err, dir)
	}
	if got, err := Existing(dir); err != nil || got != dir {
		t.Errorf("Existing(%s) = %q, %v; want itself", dir, got, err)
	}
	if same, err := SameFilesystem(dir, notYet); err != nil || !same {
		t.Errorf("SameFilesystem(%s, %s) = %v, %v; want the same", dir, notYet, same, err)
	}
	// /proc is a filesystem of its own wherever the temporary directory is.
	if same, err := SameFilesystem(notYet, "/proc/self"); err != nil || same {
		t.Errorf("SameFilesystem(%s, /proc/self) = %v, %v; want different", notYet, same, err)
	}
}

// FreeBytes reads the filesystem dir is on: a filesystem of the test's own has less
// than its size free, and a file written and synced there takes its size from it.
func TestFreeBytes(t *testing.T) {
	const size, written = 32 << 20, 8 << 20
	d := looptest.Mount(t, size)
	before, err := FreeBytes(d.Dir)
	if err != nil || before <= written || before > size {
		t.Fatalf("FreeBytes(%s) = %d, %v; want up to the %d bytes of the filesystem, more than %d", d.Dir, before, err, size, written)
	}
	if err := os.WriteFile(filepath.Join(d.Dir, "f"), make([]byte, written), 0o600); err != nil {
		t.Fatal(err)
	}
	unix.Sync()
	after, err := FreeBytes(d.Dir)
	if err != nil || before-after < written {
		t.Errorf("FreeBytes(%s) = %d, %v after writing %d bytes; was %d", d.Dir, after, err, written, before)
	}
	if _, err := FreeBytes(filepath.Join(d.Dir, "missing")); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("FreeBytes of a missing directory: %v, want it does not exist", err)
	}
}
