package postgres_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/storbench/storbench/internal/input"
	"github.com/storbench/storbench/internal/instance"
	"github.com/storbench/storbench/internal/testsupport/pgtest"
)

// TestDestroyKeepsUserFiles: destroy removes what storbench made in a directory it
// created, keeps a file the user added there (and says so in one line), and refuses a
// directory holding a marker copied from the instance's real one.
func TestDestroyKeepsUserFiles(t *testing.T) {
	if testing.Short() {
		t.Skip("initialises PostgreSQL instances")
	}
	ctx := context.Background()
	reg := registry(t)
	base := t.TempDir()

	t.Run("a user's file in a created directory", func(t *testing.T) {
		path := filepath.Join(base, "keep")
		if _, _, err := reg.Create(ctx, instance.Spec{Name: "files-keep", Engine: "postgres", Path: path, MaxConnections: 10}); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = reg.Destroy(context.Background(), "files-keep") })
		if _, err := reg.Start(ctx, "files-keep"); err != nil {
			t.Fatal(err)
		}
		notes := filepath.Join(path, "notes.txt")
		if err := os.WriteFile(notes, []byte("mine"), 0o644); err != nil {
			t.Fatal(err)
		}
		kept, err := reg.DestroyKept(ctx, "files-keep", false)
		if err != nil {
			t.Fatal(err)
		}
		if len(kept) != 1 || !strings.Contains(kept[0], "notes.txt") || strings.Contains(kept[0], "\n") {
			t.Errorf("destroy says %q; want one line naming notes.txt", kept)
		}
		if b, err := os.ReadFile(notes); err != nil || string(b) != "mine" {
			t.Errorf("destroy removed the user's %s: %v", notes, err)
		}
		entries, _ := os.ReadDir(path)
		if len(entries) != 1 {
			t.Errorf("%s holds %v after destroy; want only notes.txt", path, entries)
		}
	})

	t.Run("a copied marker", func(t *testing.T) {
		path := filepath.Join(base, "pg")
		if _, _, err := reg.Create(ctx, instance.Spec{Name: "files-copied", Engine: "postgres", Path: path, MaxConnections: 10}); err != nil {
			t.Fatal(err)
		}
		// The instance's directory moved away, another made in its place holding the
		// user's data and a copy of the marker.
		moved := filepath.Join(base, "pg-moved")
		if err := os.Rename(path, moved); err != nil {
			t.Fatal(err)
		}
		precious := filepath.Join(path, "data", "precious")
		if err := os.MkdirAll(filepath.Dir(precious), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(precious, []byte("the user's"), 0o644); err != nil {
			t.Fatal(err)
		}
		marker, err := os.ReadFile(filepath.Join(moved, ".storbench-instance"))
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(path, ".storbench-instance"), marker, 0o644); err != nil {
			t.Fatal(err)
		}
		_, err = reg.DestroyKept(ctx, "files-copied", false)
		if !errors.Is(err, input.ErrInvalid) || strings.Contains(err.Error(), "\n") {
			t.Errorf("destroy of a directory with a copied marker: %v; want one line of bad input", err)
		}
		if b, err := os.ReadFile(precious); err != nil || string(b) != "the user's" {
			t.Errorf("destroy removed the user's %s: %v", precious, err)
		}
		// Put back, the instance's own directory is destroyed whole.
		if err := os.RemoveAll(path); err != nil {
			t.Fatal(err)
		}
		if err := os.Rename(moved, path); err != nil {
			t.Fatal(err)
		}
		if err := reg.Destroy(ctx, "files-copied"); err != nil {
			t.Fatal(err)
		}
		if _, err := os.Stat(path); !errors.Is(err, os.ErrNotExist) {
			t.Errorf("destroy left %s: %v", path, err)
		}
	})
}

// TestRestoreInterrupted: a physical restore interrupted while it copies says in one
// line that it was abandoned and the data kept, removes its partial copy, and leaves
// the instance running on its data as it was; a restore left alone then completes.
func TestRestoreInterrupted(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a PostgreSQL server")
	}
	ctx := context.Background()
	reg := registry(t)
	path := filepath.Join(t.TempDir(), "pg")
	if _, _, err := reg.Create(ctx, instance.Spec{Name: "restore-intr", Engine: "postgres", Path: path, MaxConnections: 10}); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = reg.Destroy(context.Background(), "restore-intr") })
	st, err := reg.Start(ctx, "restore-intr")
	if err != nil {
		t.Fatal(err)
	}
	// Enough data that the copy takes a while to make.
	pgtest.Exec(t, st.DSN(), "CREATE TABLE filler AS SELECT g, repeat('x', 500) AS pad FROM generate_series(1, 200000) g")
	pgtest.Exec(t, st.DSN(), "CREATE TABLE mark AS SELECT 1 AS v")
	backup := filepath.Join(t.TempDir(), "bk")
	if _, err := reg.Backup(ctx, "restore-intr", backup, instance.BackupMethod{Jobs: 1}); err != nil {
		t.Fatal(err)
	}
	pgtest.Exec(t, st.DSN(), "UPDATE mark SET v = 2") // after the backup: the data to keep

	restoring := filepath.Join(path, "data.restoring")
	cctx, cancel := context.WithCancel(ctx)
	defer cancel()
	go func() {
		for cctx.Err() == nil {
			if _, err := os.Stat(restoring); err == nil {
				cancel()
				return
			}
			time.Sleep(time.Millisecond)
		}
	}()
	_, err = reg.Restore(cctx, "restore-intr", backup, 0)
	if err == nil {
		t.Fatal("the restore completed before the interrupt: make the data larger")
	}
	msg := err.Error()
	t.Log(msg)
	if !errors.Is(err, context.Canceled) || strings.Contains(msg, "\n") || strings.Contains(msg, "context canceled") ||
		!strings.Contains(msg, "interrupted") || !strings.Contains(msg, "unchanged") {
		t.Errorf("interrupted restore: %q; want one line saying it was abandoned and the data kept", msg)
	}
	if _, err := os.Stat(restoring); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("the partial copy %s is left: %v", restoring, err)
	}
	if s, _ := reg.Status("restore-intr"); s.PID == 0 {
		t.Fatal("the instance is not running after the interrupted restore")
	}
	if v := markValue(t, st.DSN()); v != 2 {
		t.Errorf("after the interrupted restore mark = %d, want 2 (the data as it was)", v)
	}

	if _, err := reg.Restore(ctx, "restore-intr", backup, 0); err != nil {
		t.Fatal(err)
	}
	if v := markValue(t, st.DSN()); v != 1 {
		t.Errorf("after the restore mark = %d, want the backup's 1", v)
	}
	if entries, _ := os.ReadDir(path); len(entries) != 2 {
		t.Errorf("%s holds %v after the restore; want data and the marker", path, entries)
	}
}

func markValue(t *testing.T, dsn string) int {
	t.Helper()
	return pgtest.Scalar[int](t, dsn, "SELECT v FROM mark")
}
