package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/storbench/storbench/internal/testsupport/pgtest"
)

// TestRestoreTooBig: a physical restore whose copy cannot fit on the instance's
// filesystem (not even in place of the current data) stops with one line before
// touching anything; the instance still runs on its data as it was, and the backup
// can be restored once there is room.
func TestRestoreTooBig(t *testing.T) {
	t.Parallel() // its own servers, directories and names: see docs/architecture.md#tests
	if testing.Short() {
		t.Skip("mounts a filesystem and restores")
	}
	mnt := smallDisk(t, 400)
	dsn := managedInstance(t, filepath.Join(mnt, "pg"), "restore-big")
	pgtest.Exec(t, dsn, "CREATE TABLE mark AS SELECT 1 AS v")

	// The backup: of another instance (a study's base image is; --force restores
	// it), larger than the filesystem has room for.
	dir := diskTempDir(t, "restore-big-")
	code, out, errOut := storbench(t, "instance", "create", "--path", filepath.Join(dir, "src"), "--name", "restore-big-src")
	if code != 0 {
		t.Fatalf("instance create: exit %d\n%s%s", code, out, errOut)
	}
	t.Cleanup(func() { storbench(t, "instance", "destroy", "--name", "restore-big-src") })
	srcDSN := instanceDSN(t, "restore-big-src")
	pgtest.Exec(t, srcDSN, "CREATE TABLE mark AS SELECT 2 AS v")
	pgtest.Exec(t, srcDSN, "CREATE TABLE extra AS SELECT g, repeat('x', 500) AS pad FROM generate_series(1, 250000) g")
	bk := filepath.Join(dir, "bk")
	if code, out, errOut := storbench(t, "backup", "--instance", "restore-big-src", "--to", bk); code != 0 {
		t.Fatalf("backup: exit %d\n%s%s", code, out, errOut)
	}

	filler := fillTo(t, mnt, 80<<20) // less than the backup, more than the server needs
	code, out, errOut = storbench(t, "restore", "--instance", "restore-big", "--from", bk, "--force")
	t.Log(strings.TrimSpace(errOut))
	if code == 0 || strings.Count(strings.TrimRight(errOut, "\n"), "\n") != 0 || !strings.Contains(errOut, "does not fit") {
		t.Errorf("restore onto a full filesystem: exit %d, stderr %q; want one line saying it does not fit\n%s", code, errOut, out)
	}
	if got := mark(t, dsn); got != 1 {
		t.Errorf("after the refused restore mark = %d, want 1 (the data as it was)", got)
	}
	if _, err := os.Stat(filepath.Join(mnt, "pg", "data.restoring")); !os.IsNotExist(err) {
		t.Errorf("a partial copy is left: %v", err)
	}

	if err := os.Remove(filler); err != nil {
		t.Fatal(err)
	}
	if code, out, errOut := storbench(t, "restore", "--instance", "restore-big", "--from", bk, "--force"); code != 0 {
		t.Fatalf("restore with room: exit %d\n%s%s", code, out, errOut)
	}
	if got := mark(t, dsn); got != 2 {
		t.Errorf("after the restore mark = %d, want the backup's 2", got)
	}
}

func mark(t *testing.T, dsn string) int {
	t.Helper()
	return pgtest.Scalar[int](t, dsn, "SELECT v FROM mark")
}
