package engine

import (
	"context"
	"fmt"
	"os"
	"strings"

	"github.com/storbench/storbench/internal/dburl"
	"golang.org/x/sys/unix"
)

// StorageWatch knows where a database keeps its files, read while it still answers:
// a server whose log can no longer be written stops (PostgreSQL panics), and the
// error its clients get (a reset connection) says nothing of the disk.
type StorageWatch struct {
	dirs []string
}

// WatchStorage reads the directories of the database at dsn (none when the server
// is on another host, whose paths mean nothing here, or cannot say: then only the
// engine's own disk-full errors are explained).
func WatchStorage(ctx context.Context, db Observer, dsn string) StorageWatch {
	u, _ := dburl.Parse(dsn) // not a URL: not local, nothing watched
	return WatchStorageOf(ctx, db, u)
}

// WatchStorageOf is WatchStorage for a DSN parsed once (ParseDSN).
func WatchStorageOf(ctx context.Context, db Observer, u dburl.URL) StorageWatch {
	if _, local := u.Local(); !local {
		return StorageWatch{}
	}
	st, err := db.Storage(ctx)
	if err != nil || st.Data == "" {
		return StorageWatch{}
	}
	w := StorageWatch{dirs: []string{st.Data}}
	if st.WAL != "" && st.WAL != st.Data {
		w.dirs = append(w.dirs, st.WAL)
	}
	return w
}

// nearlyFull is free space below which a failure is put down to the full storage:
// filesystems keep a little for themselves, and a server fails before the last byte
// (PostgreSQL stops when it cannot create its next 16 MB WAL segment).
const nearlyFull = 64 << 20

// Full reports whether a directory of the database is nearly full: a run stops on
// failures while it is, since they will not heal by themselves.
func (w StorageWatch) Full() bool {
	full, _ := w.space()
	return full
}

// DataDir is the database's data directory, when it is known (a database on this
// host that names its directory).
func (w StorageWatch) DataDir() (string, bool) {
	if len(w.dirs) == 0 {
		return "", false
	}
	// A loopback server in a container names a directory of its own filesystem: one
	// this machine does not have says nothing about its space.
	if st, err := os.Stat(w.dirs[0]); err != nil || !st.IsDir() {
		return "", false
	}
	return w.dirs[0], true
}

// FreeBytes is what dir's filesystem has free for an unprivileged writer: the one
// reading of free space that build, restore and fio size their data against.
func FreeBytes(dir string) (int64, error) {
	var fs unix.Statfs_t
	if err := unix.Statfs(dir, &fs); err != nil {
		return 0, err
	}
	return int64(fs.Bavail) * fs.Bsize, nil
}

// space reads the free space of the directories' filesystems, each once.
func (w StorageWatch) space() (nearly bool, where []string) {
	seen := map[uint64]bool{} // filesystems, by device: the WAL is often on the data's
	for _, dir := range w.dirs {
		var st unix.Stat_t
		var fs unix.Statfs_t
		if unix.Stat(dir, &st) != nil || seen[st.Dev] || unix.Statfs(dir, &fs) != nil {
			continue
		}
		seen[st.Dev] = true
		free, total := fs.Bavail*uint64(fs.Bsize), fs.Blocks*uint64(fs.Bsize)
		nearly = nearly || free < nearlyFull
		where = append(where, fmt.Sprintf("%s has %.1f MB free of %.1f MB", dir, float64(free)/1e6, float64(total)/1e6))
	}
	return nearly, where
}

// Explain gives an error of a full storage the words an operator needs: which of the
// database's directories are full, how much space they have, and what to do then
// (fix, e.g. "then drop the database and build again"). An error the engine
// classifies as a full disk, or any failure while a directory is nearly full, is
// explained; other errors are returned as they are.
func (w StorageWatch) Explain(db Database, err error, fix string) error {
	if err == nil {
		return nil
	}
	nearly, where := w.space()
	if !nearly && !db.Classify(err).DiskFull {
		return err
	}
	place := "the database's storage"
	if len(where) > 0 {
		place = strings.Join(where, "; ")
	}
	return fmt.Errorf("the storage is full or nearly (%s): free space there or use a larger target, %s: %w", place, fix, err)
}
