package instance

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"syscall"

	"github.com/storbench/storbench/internal/engine"
)

// markerFile marks a directory that storbench prepared for an instance.
const markerFile = ".storbench-instance"

// marker is the marker file's content.
type marker struct {
	Instance string `json:"instance"`
	// Created: storbench created the directory itself, so destroy removes it too;
	// otherwise destroy empties it and leaves the (user's) directory in place.
	Created bool `json:"created"`
}

// tmpfsMagic is statfs's f_type of tmpfs.
const tmpfsMagic = 0x01021994

// claim checks that dir may hold an instance and marks it: dir must be an empty
// directory (or not exist, with an existing parent, and then storbench creates it).
// It returns a warning when dir is on tmpfs (memory, not storage).
func claim(dir, instance string) (warning string, err error) {
	if !filepath.IsAbs(dir) {
		return "", fmt.Errorf("%w: %s is not an absolute path", engine.ErrInput, dir)
	}
	created := false
	entries, err := os.ReadDir(dir)
	switch {
	case errors.Is(err, os.ErrNotExist):
		parent := filepath.Dir(dir)
		if st, perr := os.Stat(parent); perr != nil || !st.IsDir() {
			return "", fmt.Errorf("%w: %s does not exist (create the mount point or directory first)", engine.ErrInput, parent)
		}
		if err := os.Mkdir(dir, 0o755); err != nil {
			return "", fmt.Errorf("%w: cannot create %s: %v", engine.ErrInput, dir, err)
		}
		created = true
	case err != nil:
		return "", fmt.Errorf("%w: %s is not a readable directory: %v", engine.ErrInput, dir, err)
	case len(entries) > 0:
		return "", fmt.Errorf("%w: %s is not empty and storbench did not create it: name an empty or new directory", engine.ErrInput, dir)
	}
	b, _ := json.Marshal(marker{Instance: instance, Created: created})
	if err := os.WriteFile(filepath.Join(dir, markerFile), b, 0o644); err != nil {
		if created {
			os.Remove(dir)
		}
		return "", fmt.Errorf("%w: %s is not writable: %v", engine.ErrInput, dir, err)
	}
	var fs syscall.Statfs_t
	if syscall.Statfs(dir, &fs) == nil && fs.Type == tmpfsMagic {
		warning = fmt.Sprintf("%s is on tmpfs: the instance will measure memory, not storage", dir)
	}
	return warning, nil
}

// checkMarker refuses a directory storbench did not prepare.
func checkMarker(dir string) error {
	if _, err := os.Stat(filepath.Join(dir, markerFile)); err != nil {
		return fmt.Errorf("%w: %s is not a storbench backup (no %s marker)", engine.ErrInput, dir, markerFile)
	}
	return nil
}

// release removes what storbench put in dir, and dir itself when storbench created
// it (a directory the user made keeps anything else found in it). A directory without storbench's marker for this instance is left untouched.
func release(dir, instance string) error {
	b, err := os.ReadFile(filepath.Join(dir, markerFile))
	if errors.Is(err, os.ErrNotExist) {
		if _, serr := os.Stat(dir); errors.Is(serr, os.ErrNotExist) {
			return nil // already gone
		}
		return fmt.Errorf("%w: %s has no storbench marker: not removing it", engine.ErrInput, dir)
	}
	if err != nil {
		return err
	}
	var m marker
	if err := json.Unmarshal(b, &m); err != nil || m.Instance != instance {
		return fmt.Errorf("%w: %s is marked for another instance (%q): not removing it", engine.ErrInput, dir, m.Instance)
	}
	if m.Created {
		return os.RemoveAll(dir)
	}
	// The user's directory: only what storbench put there goes.
	for _, name := range ownEntries {
		if err := os.RemoveAll(filepath.Join(dir, name)); err != nil {
			return err
		}
	}
	return nil
}

// ownEntries are the names storbench creates in a directory it prepared: the servers'
// data and WAL directories, a backup's files and record, and the marker (last).
var ownEntries = []string{"data", "wal", "base", "backup.json", markerFile}
