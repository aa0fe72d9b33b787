package instance

import (
	"crypto/sha256"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sort"

	"github.com/storbench/storbench/internal/durable"
)

// A study keeps its instances in a registry of its own, under its results store, so
// they never collide with the user's; a link from the default registry to it lets
// `storbench instance list` show them with what owns them.

// Linked is another registry linked into this one, and what owns it.
type Linked struct {
	Registry Registry `json:"-"`
	Dir      string   `json:"dir"`
	Owner    string   `json:"owner"` // e.g. the study's name
}

func (r Registry) linkDir() string { return filepath.Join(r.Dir, "linked") }

// linkFile is other's link in r, named after other's absolute directory.
func (r Registry) linkFile(other Registry) (string, string, error) {
	abs, err := filepath.Abs(other.Dir)
	if err != nil {
		return "", "", err
	}
	sum := sha256.Sum256([]byte(abs))
	return filepath.Join(r.linkDir(), fmt.Sprintf("%x.json", sum[:8])), abs, nil
}

// Link records other in r, with its owner.
func (r Registry) Link(other Registry, owner string) error {
	file, abs, err := r.linkFile(other)
	if err != nil {
		return err
	}
	if err := durable.MkdirAll(r.linkDir()); err != nil {
		return err
	}
	b, _ := json.Marshal(Linked{Dir: abs, Owner: owner})
	// Durable: after a crash, it is what lets instance list show the study's instances
	// and instance destroy name the study that removes them.
	return durable.WriteFile(file, b, 0o644)
}

// Unlink removes other's link from r (none is fine).
func (r Registry) Unlink(other Registry) error {
	file, _, err := r.linkFile(other)
	if err != nil {
		return err
	}
	if err := os.Remove(file); err != nil && !errors.Is(err, os.ErrNotExist) {
		return err
	}
	return nil
}

// Linked returns the registries linked into r that still exist, by directory.
func (r Registry) Linked() ([]Linked, error) {
	entries, err := os.ReadDir(r.linkDir())
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	var out []Linked
	for _, e := range entries {
		if filepath.Ext(e.Name()) != ".json" {
			continue
		}
		var l Linked
		b, err := os.ReadFile(filepath.Join(r.linkDir(), e.Name()))
		if err != nil || json.Unmarshal(b, &l) != nil || l.Dir == "" {
			continue
		}
		// A results store removed by hand takes its instances' records with it; its
		// link, which only storbench wrote, goes too.
		if _, err := os.Stat(l.Dir); errors.Is(err, os.ErrNotExist) {
			os.Remove(filepath.Join(r.linkDir(), e.Name()))
			continue
		} else if err != nil {
			continue
		}
		l.Registry = Registry{Dir: l.Dir}
		out = append(out, l)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Dir < out[j].Dir })
	return out, nil
}
