package study

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestFreshQuickDirRemovesOnlyTheDatabase: quick's fresh start removes from its own
// SQLite directory the database file and the files SQLite makes beside it, exactly:
// a user's tpcc.db-backup stays (before, every file named tpcc.db-… went).
func TestFreshQuickDirRemovesOnlyTheDatabase(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	for _, f := range []string{quickMarker, "tpcc.db", "tpcc.db-wal", "tpcc.db-shm", "tpcc.db-journal", "tpcc.db-backup", "notes.txt"} {
		if err := os.WriteFile(filepath.Join(dir, f), []byte("x"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	kept, err := freshQuickDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	if got := strings.Join(kept, ","); got != "notes.txt,tpcc.db-backup" {
		t.Errorf("kept %s, want notes.txt,tpcc.db-backup", got)
	}
	var left []string
	entries, _ := os.ReadDir(dir)
	for _, e := range entries {
		left = append(left, e.Name())
	}
	if got := strings.Join(left, ","); got != quickMarker+",notes.txt,tpcc.db-backup" {
		t.Errorf("left %s, want the marker and the user's files", got)
	}
}
