package mariadb_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/storbench/storbench/internal/instance"
)

// TestRestoreInterrupted: a physical restore interrupted while mariadb-backup copies
// back says in one line that it was abandoned and the data kept, removes its partial
// copies (data and log), and leaves the instance running on its data as it was.
func TestRestoreInterrupted(t *testing.T) {
	needMariaDB(t)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	reg := registry(t)
	base := t.TempDir()
	spec := instance.Spec{Name: "mdb-restore-intr", Engine: "mariadb", Path: filepath.Join(base, "inst"),
		WALPath: filepath.Join(base, "wal"), MaxConnections: 10}
	if _, _, err := reg.Create(ctx, spec); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = reg.Destroy(context.Background(), spec.Name) })
	st, err := reg.Start(ctx, spec.Name)
	if err != nil {
		t.Fatal(err)
	}
	db := open(t, st.DSN())
	exec1(t, db, "CREATE TABLE t (id INT PRIMARY KEY, v INT)")
	exec1(t, db, "INSERT INTO t VALUES (1, 1), (2, 2)")
	backup := filepath.Join(t.TempDir(), "bk")
	if _, err := reg.Backup(ctx, spec.Name, backup, instance.BackupMethod{Jobs: 1}); err != nil {
		t.Fatal(err)
	}
	exec1(t, db, "INSERT INTO t VALUES (3, 3)") // after the backup: the data to keep
	want := rows(t, db)
	db.Close()

	// The copy's directory exists before mariadb-backup starts: the interrupt lands
	// while it copies back.
	restoring := filepath.Join(spec.Path, "data", "db.restoring")
	cctx, stop := context.WithCancel(ctx)
	defer stop()
	go func() {
		for cctx.Err() == nil {
			if _, err := os.Stat(restoring); err == nil {
				stop()
				return
			}
			time.Sleep(time.Millisecond)
		}
	}()
	_, err = reg.Restore(cctx, spec.Name, backup, 0)
	if err == nil {
		t.Fatal("the restore completed before the interrupt")
	}
	msg := err.Error()
	t.Log(msg)
	if !errors.Is(err, context.Canceled) || strings.Contains(msg, "\n") || strings.Contains(msg, "context canceled") ||
		!strings.Contains(msg, "interrupted") || !strings.Contains(msg, "unchanged") {
		t.Errorf("interrupted restore: %q; want one line saying it was abandoned and the data kept", msg)
	}
	for _, d := range []string{restoring, filepath.Join(spec.WALPath, "wal.restoring")} {
		if _, err := os.Stat(d); !errors.Is(err, os.ErrNotExist) {
			t.Errorf("the partial copy %s is left: %v", d, err)
		}
	}
	if s, _ := reg.Status(spec.Name); s.PID == 0 {
		t.Fatal("the instance is not running after the interrupted restore")
	}
	if got := rows(t, open(t, st.DSN())); got != want {
		t.Errorf("after the interrupted restore: %s, want %s (the data as it was)", got, want)
	}
}
