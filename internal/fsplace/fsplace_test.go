package fsplace

import (
	"path/filepath"
	"testing"
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
