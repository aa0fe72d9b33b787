// Package fsplace tells where a path lies before it is made: its nearest directory
// that exists, and the filesystem that holds it. A build's space check, a study's
// note on a backup beside the data and the disks a backup is watched on all place a
// directory storbench is about to make by the parent it will be made in.
package fsplace

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"

	"golang.org/x/sys/unix"
)

// Existing is path, or its nearest parent that exists: where path will be made. Its
// error is the first that is not "does not exist" (a parent that may not be read).
func Existing(path string) (string, error) {
	for {
		_, err := os.Stat(path)
		if err == nil {
			return path, nil
		}
		if !errors.Is(err, fs.ErrNotExist) || filepath.Dir(path) == path {
			return "", err
		}
		path = filepath.Dir(path)
	}
}

// Device is the device number of the filesystem that holds path, or its nearest
// existing parent.
func Device(path string) (uint64, error) {
	dir, err := Existing(path)
	if err != nil {
		return 0, err
	}
	var st unix.Stat_t
	if err := unix.Stat(dir, &st); err != nil {
		return 0, &fs.PathError{Op: "stat", Path: dir, Err: err}
	}
	return st.Dev, nil
}

// SameFilesystem tells whether a and b (or their nearest existing parents) are on
// one filesystem; its error says when either could not be placed.
func SameFilesystem(a, b string) (bool, error) {
	da, err := Device(a)
	if err != nil {
		return false, err
	}
	db, err := Device(b)
	if err != nil {
		return false, err
	}
	return da == db, nil
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
