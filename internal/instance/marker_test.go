package instance

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/storbench/storbench/internal/input"
)

func TestClaimAndRelease(t *testing.T) {
	base := t.TempDir()
	// A new directory is created, marked, and removed whole by release.
	fresh := filepath.Join(base, "fresh")
	if _, _, err := claim(fresh, "a"); err != nil {
		t.Fatal(err)
	}
	if _, err := release(fresh, "a", nil); err != nil {
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
	if _, _, err := claim(user, "a"); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(user, "data"), []byte("x"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(user, "notes.txt"), []byte("mine"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := release(user, "a", nil); err != nil {
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
	if _, err := release(unmarked, "a", nil); !errors.Is(err, input.ErrInvalid) {
		t.Errorf("release of an unmarked directory: %v", err)
	}
	other := filepath.Join(base, "other")
	if _, _, err := claim(other, "b"); err != nil {
		t.Fatal(err)
	}
	if _, err := release(other, "a", nil); !errors.Is(err, input.ErrInvalid) {
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
	_, warning, err := claim(dir, "a")
	if err != nil {
		t.Fatal(err)
	}
	defer release(dir, "a", nil)
	if !strings.Contains(warning, "tmpfs") {
		t.Errorf("no tmpfs warning for %s: %q", dir, warning)
	}
}

// TestReleaseKeepsWhatStorbenchDidNotMake: a directory storbench created keeps the
// files a user added in it (and says so), and a marker copied into another directory
// gets nothing there removed.
func TestReleaseKeepsWhatStorbenchDidNotMake(t *testing.T) {
	base := t.TempDir()
	made := filepath.Join(base, "made")
	if _, _, err := claim(made, "a"); err != nil {
		t.Fatal(err)
	}
	for _, f := range []string{"backup.json", "mine.txt"} {
		if err := os.WriteFile(filepath.Join(made, f), []byte("x"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	kept, err := release(made, "a", nil)
	if err != nil || !strings.Contains(kept, "mine.txt") || strings.Contains(kept, "\n") {
		t.Errorf("release of a created directory holding a user's file: kept %q, %v", kept, err)
	}
	entries, _ := os.ReadDir(made)
	if len(entries) != 1 || entries[0].Name() != "mine.txt" {
		t.Errorf("%s holds %v after release, want only the user's mine.txt", made, entries)
	}

	// A backup's marker copied into another directory: neither RemoveBackup nor a
	// restore from there touches it.
	bk := filepath.Join(base, "bk")
	if _, _, err := claim(bk, "a"); err != nil {
		t.Fatal(err)
	}
	other := filepath.Join(base, "other")
	if err := os.MkdirAll(filepath.Join(other, "base"), 0o755); err != nil {
		t.Fatal(err)
	}
	marker, err := os.ReadFile(filepath.Join(bk, markerFile))
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(other, markerFile), marker, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(other, "base", "precious"), []byte("x"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := RemoveBackup(other, "a"); !errors.Is(err, input.ErrInvalid) || !strings.Contains(err.Error(), "copied") {
		t.Errorf("RemoveBackup of a directory with a copied marker: %v", err)
	}
	if _, err := checkMarker(other); !errors.Is(err, input.ErrInvalid) {
		t.Errorf("checkMarker of a directory with a copied marker: %v", err)
	}
	if _, err := os.Stat(filepath.Join(other, "base", "precious")); err != nil {
		t.Errorf("the copied marker's directory lost its files: %v", err)
	}
	// Its own directory is still removed whole.
	if err := RemoveBackup(bk, "a"); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(bk); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("RemoveBackup left %s", bk)
	}
}

// A directory that holds another instance's data is refused naming that instance,
// not as a directory storbench did not create.
func TestClaimNamesTheInstanceHoldingTheDirectory(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "pg")
	if _, _, err := claim(dir, "a-0badcafe"); err != nil {
		t.Fatal(err)
	}
	_, _, err := claim(dir, "b")
	if err == nil || !strings.Contains(err.Error(), "holds instance a-0badcafe") || strings.Contains(err.Error(), "did not create it") {
		t.Errorf("claim of another instance's directory: %v", err)
	}
}

// A directory that holds a backup is refused as a backup, with when it was taken, not
// as an instance to destroy (instance list does not show it, and destroying the
// instance it was taken of would not free it).
func TestClaimNamesTheBackupInTheDirectory(t *testing.T) {
	t.Parallel()
	dir := filepath.Join(t.TempDir(), "backup")
	if _, _, err := claim(dir, "demo"); err != nil {
		t.Fatal(err)
	}
	if err := os.Mkdir(backupFiles(dir), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(backupRecord(dir), []byte(`{"logical":false,"jobs":1,"engine":"postgres"}`), 0o644); err != nil {
		t.Fatal(err)
	}
	taken := time.Date(2026, 3, 4, 5, 6, 7, 0, time.Local)
	if err := os.Chtimes(backupRecord(dir), taken, taken); err != nil {
		t.Fatal(err)
	}
	_, _, err := claim(dir, "other")
	want := dir + " holds a backup of instance demo taken 2026-03-04 05:06:07: remove it, or name an empty or new directory"
	if !errors.Is(err, input.ErrInvalid) || !strings.Contains(err.Error(), want) || strings.Contains(err.Error(), "destroy") {
		t.Errorf("claim of a backup's directory: %v\nwant %q", err, want)
	}
}
