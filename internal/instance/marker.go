package instance

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"github.com/storbench/storbench/internal/input"
)

// markerFile marks a directory that storbench prepared for an instance.
const markerFile = ".storbench-instance"

// marker is the marker file's content.
type marker struct {
	Instance string `json:"instance"`
	// Created: storbench created the directory itself, so destroy removes it too;
	// otherwise destroy empties it and leaves the (user's) directory in place.
	Created bool `json:"created"`
	// Dir is the identity of the directory the marker was written in: a marker copied
	// into another directory names a directory that is not this one, and nothing is
	// removed there. Absent in markers written before it was recorded.
	Dir *DirID `json:"dir,omitempty"`
}

// DirID identifies a directory while it exists: its device and inode.
type DirID struct {
	Dev uint64 `json:"dev"`
	Ino uint64 `json:"ino"`
}

func dirID(dir string) (DirID, error) {
	var st syscall.Stat_t
	if err := syscall.Stat(dir, &st); err != nil {
		return DirID{}, err
	}
	return DirID{Dev: st.Dev, Ino: st.Ino}, nil
}

// tmpfsMagic is statfs's f_type of tmpfs.
const tmpfsMagic = 0x01021994

// CheckParent checks that dir's parent is a directory, so that dir can be made by one
// mkdir: a missing parent is most often a disk not mounted, and making the whole path
// would put the data on the disk below without a word.
func CheckParent(dir string) error {
	parent := filepath.Dir(dir)
	st, err := os.Stat(parent)
	switch {
	case err != nil:
		return fmt.Errorf("%w: %s does not exist (create the mount point or directory first)", input.ErrInvalid, parent)
	case !st.IsDir():
		return fmt.Errorf("%w: %s is not a directory (give a path inside a directory)", input.ErrInvalid, parent)
	}
	return nil
}

// claimable checks that dir may hold an instance: an empty directory, or none with an
// existing parent. It changes nothing, so a create can refuse bad paths before it
// takes the registry's lock.
func claimable(dir string) (exists bool, err error) {
	if err := CheckPath("", dir); err != nil {
		return false, err
	}
	entries, err := os.ReadDir(dir)
	switch {
	case errors.Is(err, os.ErrNotExist):
		return false, CheckParent(dir)
	case err != nil:
		return false, fmt.Errorf("%w: %s is not a readable directory: %w", input.ErrInvalid, dir, err)
	case len(entries) > 0:
		// One that storbench prepared holds a backup, or is another instance's, maybe a
		// study's.
		if m, err := readMarker(dir); err == nil && m.Instance != "" {
			if taken, ok := backupTaken(dir); ok {
				return false, fmt.Errorf("%w: %s holds a backup of instance %s taken %s: remove it, or name an empty or new directory",
					input.ErrInvalid, dir, m.Instance, taken.Format("2006-01-02 15:04:05"))
			}
			return false, fmt.Errorf("%w: %s holds instance %s (storbench instance list shows it, with its study if a study made it): destroy that instance, or name an empty or new directory", input.ErrInvalid, dir, m.Instance)
		}
		return false, fmt.Errorf("%w: %s is not empty and storbench did not create it: name an empty or new directory", input.ErrInvalid, dir)
	}
	return true, nil
}

// backupTaken tells whether dir, which storbench prepared, holds a backup (its files,
// which an instance's directory never has) and when it was taken: when its record was
// written, else (a backup that did not complete) when its files last changed.
func backupTaken(dir string) (time.Time, bool) {
	for _, p := range []string{backupRecord(dir), backupFiles(dir)} {
		if st, err := os.Stat(p); err == nil {
			return st.ModTime(), true
		}
	}
	return time.Time{}, false
}

// CheckDir refuses a directory that an instance of r could not be created in, as
// Create would (CheckPath, then an empty or new directory, outside every instance's
// and backup's directories), unless an instance holds it already: so a plan is
// refused for what its run would be. The instances r records are its owner's (a
// study's, resumed: it takes them over or destroys them), and are not refused;
// every other registry's are. key is the setting that gives dir ("": the caller
// names it, as a study file's line does).
func (r Registry) CheckDir(key, dir string) error {
	if err := CheckPath(key, dir); err != nil {
		return err
	}
	dir = filepath.Clean(dir) // as Create takes it: dir/ is dir, made in its parent
	if Claimed(dir) {
		return nil
	}
	if _, err := claimable(dir); err != nil {
		return err
	}
	home, err := DefaultRegistry()
	if err != nil {
		return nil // no registry: no instance to be inside
	}
	return home.checkOutside(key, dir, "give a directory outside every instance's and backup's", r)
}

// claim checks that dir may hold an instance (claimable) and marks it, creating it
// when it does not exist. It returns dir's identity (the marker records it too) and a
// warning when dir is on tmpfs (memory, not storage).
func claim(dir, instance string) (id DirID, warning string, err error) {
	exists, err := claimable(dir)
	if err != nil {
		return DirID{}, "", err
	}
	created := false
	if !exists {
		if err := os.Mkdir(dir, 0o755); err != nil {
			return DirID{}, "", fmt.Errorf("%w: cannot create %s: %w", input.ErrInvalid, dir, err)
		}
		created = true
	}
	id, err = dirID(dir)
	if err == nil {
		b, _ := json.Marshal(marker{Instance: instance, Created: created, Dir: &id})
		err = os.WriteFile(filepath.Join(dir, markerFile), b, 0o644)
	}
	if err != nil {
		if created {
			os.Remove(dir)
		}
		return DirID{}, "", fmt.Errorf("%w: %s is not writable: %w", input.ErrInvalid, dir, err)
	}
	var fs syscall.Statfs_t
	if syscall.Statfs(dir, &fs) == nil && fs.Type == tmpfsMagic {
		warning = fmt.Sprintf("%s is on tmpfs: the instance will measure memory, not storage", dir)
	}
	return id, warning, nil
}

// checkMarker returns the marker of a directory storbench prepared; it refuses one
// without its marker, or whose marker was copied there from another directory.
func checkMarker(dir string) (marker, error) {
	m, err := readMarker(dir)
	if err != nil {
		return m, fmt.Errorf("%w: %s is not a storbench backup (no readable %s marker)", input.ErrInvalid, dir, markerFile)
	}
	return m, checkIdentity(dir, m, nil)
}

// markedFor tells whether dir holds storbench's marker for the named instance.
func markedFor(dir, instance string) bool {
	m, err := readMarker(dir)
	return err == nil && m.Instance == instance
}

func readMarker(dir string) (marker, error) {
	var m marker
	b, err := os.ReadFile(filepath.Join(dir, markerFile))
	if err == nil {
		err = json.Unmarshal(b, &m)
	}
	return m, err
}

// checkIdentity refuses dir when it is not the directory its marker was written in
// or, with want (the instance's record of it), not that directory: a marker copied
// elsewhere, or the directory replaced by another, must not get anything removed.
func checkIdentity(dir string, m marker, want *DirID) error {
	id, err := dirID(dir)
	if err != nil {
		return err
	}
	if (m.Dir != nil && *m.Dir != id) || (want != nil && *want != id) {
		return fmt.Errorf("%w: %s is not the directory storbench prepared (its %s marker was copied there, or the directory was replaced): nothing in it is removed; remove it yourself if it is storbench's",
			input.ErrInvalid, dir, markerFile)
	}
	return nil
}

// release removes what storbench put in dir (the names it creates, see ownEntries),
// then dir itself when storbench created it and nothing else is left in it. A
// directory without storbench's marker for this instance, or that is not the
// directory the marker (or want, the instance's record) names, is left untouched.
// Markers and records written before directories' identities were recorded have
// none: then only the names storbench creates are removed, as in any directory.
// kept says, in one line, why a directory storbench created stays.
func release(dir, instance string, want *DirID) (kept string, err error) {
	m, err := readMarker(dir)
	if errors.Is(err, os.ErrNotExist) {
		if _, serr := os.Stat(dir); errors.Is(serr, os.ErrNotExist) {
			return "", nil // already gone
		}
		return "", fmt.Errorf("%w: %s has no storbench marker: not removing it", input.ErrInvalid, dir)
	}
	if err != nil || m.Instance != instance {
		return "", fmt.Errorf("%w: %s is marked for another instance (%q): not removing it", input.ErrInvalid, dir, m.Instance)
	}
	if err := checkIdentity(dir, m, want); err != nil {
		return "", err
	}
	for _, name := range ownEntries {
		if err := os.RemoveAll(filepath.Join(dir, name)); err != nil {
			return "", err
		}
	}
	if !m.Created {
		return "", nil // the user's directory stays
	}
	if err := os.Remove(dir); err == nil || errors.Is(err, os.ErrNotExist) {
		return "", nil
	}
	left, err := os.ReadDir(dir)
	if err != nil {
		return "", err
	}
	names := make([]string, 0, 3)
	for _, e := range left[:min(len(left), 3)] {
		names = append(names, e.Name())
	}
	more := ""
	if len(left) > len(names) {
		more = fmt.Sprintf(" and %d more", len(left)-len(names))
	}
	return fmt.Sprintf("%s kept: it holds %s%s, which storbench did not create", dir, strings.Join(names, ", "), more), nil
}

// ownEntries are the names storbench creates in a directory it prepared: the servers'
// data and WAL directories (and, during a restore, their new copies and the replaced
// ones, see ReplaceDirs), a backup's files and record, and the marker (last).
var ownEntries = []string{"data", "wal", "data" + restoringSuffix, "wal" + restoringSuffix,
	"data" + replacedSuffix, "wal" + replacedSuffix, "base", "backup.json", markerFile}
