package engine

import (
	"context"
	"fmt"
	"os"
	"strings"

	"golang.org/x/sys/unix"

	"github.com/storbench/storbench/internal/dburl"
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

// nearlyNoInodes is the count of free inodes below which a failure is put down to
// the filesystem's inodes: a server creates a file per table and index fork and per
// WAL segment (measured, a PostgreSQL build: 51 new files for 1 warehouse, 109 for 8;
// MariaDB's 25, SQLite's 3), and a run a few more (WAL segments, temporary files).
// A filesystem in ordinary use has thousands free (ext4: one per 16 KB).
const nearlyNoInodes = 256

// Full reports whether a directory of the database is nearly full, of space or of
// inodes: a run stops on failures while it is, since they will not heal by themselves.
func (w StorageWatch) Full() bool {
	return w.space().nearly()
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

// LogDir is the database's log (WAL) directory when it has one of its own, else its
// data directory; known as DataDir is.
func (w StorageWatch) LogDir() (string, bool) {
	data, known := w.DataDir()
	if !known || len(w.dirs) < 2 {
		return data, known
	}
	if st, err := os.Stat(w.dirs[1]); err != nil || !st.IsDir() {
		return data, known
	}
	return w.dirs[1], true
}

// fsSpace is what the filesystems of a database's directories have free.
type fsSpace struct {
	lowBytes, lowInodes bool
	where               []string // per filesystem: "DIR has …"
}

func (s fsSpace) nearly() bool { return s.lowBytes || s.lowInodes }

// space reads the free space and inodes of the directories' filesystems, each once.
func (w StorageWatch) space() fsSpace {
	var s fsSpace
	seen := map[uint64]bool{} // filesystems, by device: the WAL is often on the data's
	for _, dir := range w.dirs {
		var st unix.Stat_t
		var fs unix.Statfs_t
		if unix.Stat(dir, &st) != nil || seen[st.Dev] || unix.Statfs(dir, &fs) != nil {
			continue
		}
		seen[st.Dev] = true
		free, total := fs.Bavail*uint64(fs.Bsize), fs.Blocks*uint64(fs.Bsize)
		bytes := fmt.Sprintf("%.1f MB free of %.1f MB", float64(free)/1e6, float64(total)/1e6)
		// Files 0: a filesystem without an inode count (btrfs), whose inodes never run out.
		if fs.Files > 0 && fs.Ffree < nearlyNoInodes {
			s.lowInodes = true
			s.where = append(s.where, fmt.Sprintf("%s has %d inodes free of %d, and %s", dir, fs.Ffree, fs.Files, bytes))
			continue
		}
		s.lowBytes = s.lowBytes || free < nearlyFull
		s.where = append(s.where, fmt.Sprintf("%s has %s", dir, bytes))
	}
	return s
}

// Explain gives an error of a full storage the words an operator needs: which of the
// database's directories are full, of space or of inodes (files), how much they have,
// and what to do then (fix, e.g. "then drop the database and build again"). An error
// the engine classifies as a full disk (out of inodes too: the same ENOSPC), or any
// failure while a directory is nearly full, is explained; other errors are returned
// as they are.
func (w StorageWatch) Explain(db Classifier, err error, fix string) error {
	if err == nil {
		return nil
	}
	s := w.space()
	if !s.nearly() && !db.Classify(err).DiskFull {
		return err
	}
	place := "the database's storage"
	if len(s.where) > 0 {
		place = strings.Join(s.where, "; ")
	}
	if s.lowInodes {
		return fmt.Errorf("the storage is out of inodes or nearly (%s): every file takes one; remove files there, or use a filesystem with more inodes (mkfs.ext4 -i or -N), %s: %w", place, fix, err)
	}
	return fmt.Errorf("the storage is full or nearly (%s): free space there or use a larger target, %s: %w", place, fix, err)
}
