package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestRestoreTooBig: a physical restore whose copy cannot fit on the instance's
// filesystem stops with one line before touching anything; the instance still runs
// on its data as it was (changed after the backup) and can be restored once there is
// room.
func TestRestoreTooBig(t *testing.T) {
	if testing.Short() {
		t.Skip("mounts a filesystem, builds and restores")
	}
	mnt := smallDisk(t, 700)
	dsn := managedInstance(t, filepath.Join(mnt, "pg"), "restore-big")
	if code, out, errOut := storbench(t, "build", "--dsn", dsn, "--warehouses", "1"); code != 0 {
		t.Fatalf("build: exit %d\n%s%s", code, out, errOut)
	}
	bk := filepath.Join(diskTempDir(t, "restore-big-"), "bk")
	if code, out, errOut := storbench(t, "backup", "--instance", "restore-big", "--to", bk); code != 0 {
		t.Fatalf("backup: exit %d\n%s%s", code, out, errOut)
	}
	exec(t, dsn, "UPDATE district SET d_next_o_id = d_next_o_id + 1")
	want := nextOrderIDs(t, dsn)

	filler := fillTo(t, mnt, 80<<20) // less than the backup, more than the server needs
	code, out, errOut := storbench(t, "restore", "--instance", "restore-big", "--from", bk)
	t.Log(strings.TrimSpace(errOut))
	if code == 0 || strings.Count(strings.TrimRight(errOut, "\n"), "\n") != 0 || !strings.Contains(errOut, "does not fit") {
		t.Errorf("restore onto a full filesystem: exit %d, stderr %q; want one line saying it does not fit\n%s", code, errOut, out)
	}
	if got := nextOrderIDs(t, dsn); got != want {
		t.Errorf("after the refused restore sum(d_next_o_id) = %d, want %d (the data as it was)", got, want)
	}
	if _, err := os.Stat(filepath.Join(mnt, "pg", "data.restoring")); !os.IsNotExist(err) {
		t.Errorf("a partial copy is left: %v", err)
	}

	if err := os.Remove(filler); err != nil {
		t.Fatal(err)
	}
	if code, out, errOut := storbench(t, "restore", "--instance", "restore-big", "--from", bk); code != 0 {
		t.Fatalf("restore with room: exit %d\n%s%s", code, out, errOut)
	}
	if got := nextOrderIDs(t, dsn); got != want-10 {
		t.Errorf("after the restore sum(d_next_o_id) = %d, want the backup's %d", got, want-10)
	}
}
