// Package durable writes files that must survive a crash once storbench has said they
// are written: an instance's records, a study's stored steps. A file is replaced whole
// (a reader sees the old content or the new, never half) and synced with the
// directory that names it, so that a power cut or an I/O error that remounts the
// filesystem read-only seconds later keeps it as written.
package durable

import (
	"fmt"
	"os"
	"path/filepath"
)

// TempSuffix names the file WriteFile writes beside path (path + TempSuffix) before it
// renames it over path: a crash can leave one.
const TempSuffix = ".tmp"

// WriteFile replaces path with data: a new file beside it (mode, less the umask),
// synced, renamed over path, then path's directory synced.
func WriteFile(path string, data []byte, mode os.FileMode) error {
	tmp := path + TempSuffix
	// A leftover would keep its mode; O_EXCL then refuses a link put in its place.
	_ = os.Remove(tmp)
	f, err := os.OpenFile(tmp, os.O_WRONLY|os.O_CREATE|os.O_EXCL, mode)
	if err != nil {
		return err
	}
	_, err = f.Write(data)
	if err == nil {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(tmp, path)
	}
	if err != nil {
		os.Remove(tmp)
		return err
	}
	return SyncDir(filepath.Dir(path))
}

// SyncDir makes the names in dir durable: a file renamed, made or removed there is
// so after a crash only once its directory is synced.
func SyncDir(dir string) error {
	d, err := os.Open(dir)
	if err != nil {
		return err
	}
	err = d.Sync()
	if cerr := d.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return fmt.Errorf("sync directory %s: %w", dir, err)
	}
	return nil
}

// MkdirAll makes dir and its missing parents (0755, less the umask), durably: the
// parent of each directory made is synced.
func MkdirAll(dir string) error {
	var made []string
	for p := dir; filepath.Dir(p) != p; p = filepath.Dir(p) {
		if _, err := os.Lstat(p); err == nil {
			break
		}
		made = append(made, p)
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	for i := len(made) - 1; i >= 0; i-- {
		if err := SyncDir(filepath.Dir(made[i])); err != nil {
			return err
		}
	}
	return nil
}
