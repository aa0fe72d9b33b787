package instance

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/storbench/storbench/internal/engine"
)

func TestClaimAndRelease(t *testing.T) {
	base := t.TempDir()
	// A new directory is created, marked, and removed whole by release.
	fresh := filepath.Join(base, "fresh")
	if _, err := claim(fresh, "a"); err != nil {
		t.Fatal(err)
	}
	if err := release(fresh, "a"); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(fresh); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("release left %s behind", fresh)
	}
	// A user's empty directory is emptied but kept.
	user := filepath.Join(base, "user")
	if err := os.Mkdir(user, 0o755); err != nil {
		t.Fatal(err)
	}
	if _, err := claim(user, "a"); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(user, "data"), []byte("x"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(user, "notes.txt"), []byte("mine"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := release(user, "a"); err != nil {
		t.Fatal(err)
	}
	entries, err := os.ReadDir(user)
	if err != nil || len(entries) != 1 || entries[0].Name() != "notes.txt" {
		t.Errorf("the user's directory holds %v (%v); want only the user's notes.txt", entries, err)
	}
	// Without the marker, or with another instance's, nothing is removed.
	unmarked := filepath.Join(base, "unmarked")
	if err := os.MkdirAll(filepath.Join(unmarked, "precious"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := release(unmarked, "a"); !errors.Is(err, engine.ErrInput) {
		t.Errorf("release of an unmarked directory: %v", err)
	}
	other := filepath.Join(base, "other")
	if _, err := claim(other, "b"); err != nil {
		t.Fatal(err)
	}
	if err := release(other, "a"); !errors.Is(err, engine.ErrInput) {
		t.Errorf("release of another instance's directory: %v", err)
	}
	for _, d := range []string{filepath.Join(unmarked, "precious"), other} {
		if _, err := os.Stat(d); err != nil {
			t.Errorf("%s was removed: %v", d, err)
		}
	}
}

func TestClaimWarnsOnTmpfs(t *testing.T) {
	var fs syscall.Statfs_t
	if err := syscall.Statfs("/dev/shm", &fs); err != nil || fs.Type != tmpfsMagic {
		t.Skip("/dev/shm is not tmpfs here")
	}
	dir := filepath.Join("/dev/shm", "storbench-claim-test-"+filepath.Base(t.TempDir()))
	warning, err := claim(dir, "a")
	if err != nil {
		t.Fatal(err)
	}
	defer release(dir, "a")
	if !strings.Contains(warning, "tmpfs") {
		t.Errorf("no tmpfs warning for %s: %q", dir, warning)
	}
}
