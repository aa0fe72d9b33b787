package instance

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/storbench/storbench/internal/input"
)

// TestListShowsBadRecords: one instance's state file cut short, a create that only
// wrote its claim, a state file cut short without a claim: List shows each with its
// condition beside the good one; Load refuses each naming destroy; destroy forgets
// the one it cannot find directories for only with force, saying what it left.
func TestListShowsBadRecords(t *testing.T) {
	r := Registry{Dir: filepath.Join(t.TempDir(), "instances")}
	for _, name := range []string{"good", "cut", "half"} {
		st := &State{Spec: Spec{Name: name, Engine: "postgres", Path: "/nowhere/" + name}}
		if err := r.writeClaim(st); err != nil {
			t.Fatal(err)
		}
		if name != "half" {
			if err := r.save(st); err != nil {
				t.Fatal(err)
			}
		}
	}
	if err := r.save(&State{Spec: Spec{Name: "lost", Engine: "postgres", Path: "/nowhere/lost"}}); err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"cut", "lost"} {
		if err := os.Truncate(r.file(name), 10); err != nil {
			t.Fatal(err)
		}
	}
	all, err := r.List()
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]*State{}
	for _, st := range all {
		got[st.Name] = st
	}
	for name, want := range map[string]string{"good": "", "cut": Damaged, "half": Incomplete, "lost": Damaged} {
		st := got[name]
		if st == nil || st.Condition != want {
			t.Errorf("%s: listed %+v, want condition %q", name, st, want)
			continue
		}
		if name != "lost" && st.Path != "/nowhere/"+name {
			t.Errorf("%s: path %q, want its claim's", name, st.Path)
		}
		_, err := r.Load(name)
		switch {
		case want == "" && err != nil:
			t.Errorf("load %s: %v", name, err)
		case want != "" && (!errors.Is(err, input.ErrInvalid) || !strings.Contains(err.Error(), "storbench instance destroy --name "+name)):
			t.Errorf("load %s: %v; want bad input naming destroy", name, err)
		}
	}
	if p := got["cut"].Problem; !strings.Contains(p, "unexpected end of JSON input") {
		t.Errorf("cut: problem %q", p)
	}
	if p := got["lost"].Problem; !strings.Contains(p, "no readable record of its directories") {
		t.Errorf("lost: problem %q", p)
	}
	if _, err := r.DestroyKept(context.Background(), "lost", false); !errors.Is(err, input.ErrInvalid) || !strings.Contains(err.Error(), "--force") {
		t.Errorf("destroy of an instance whose directories are unknown: %v; want bad input naming --force", err)
	}
	kept, err := r.DestroyKept(context.Background(), "lost", true)
	if err != nil || len(kept) != 1 || !strings.Contains(kept[0], "left as they are") || r.Recorded("lost") {
		t.Errorf("destroy --force: %q, %v, still recorded: %v", kept, err, r.Recorded("lost"))
	}
}

// TestCheckPathText: relative paths and control characters are refused naming the
// setting; an absolute path without them is not refused.
func TestCheckPathText(t *testing.T) {
	for dir, want := range map[string]string{"pg": "not an absolute path", "/a\nb": "control character", "/a\x7fb": "control character", "/mnt/nvme0/pg": ""} {
		err := CheckPath("--wal-path", dir)
		switch {
		case want == "" && err != nil:
			t.Errorf("%q: %v, want no refusal", dir, err)
		case want != "" && (!errors.Is(err, input.ErrInvalid) || !strings.Contains(err.Error(), want) || !strings.Contains(err.Error(), "--wal-path")):
			t.Errorf("%q: %v, want bad input naming --wal-path: %s", dir, err, want)
		}
	}
}

// TestResolvedWithin: a path through a symbolic link, below directories yet to be
// made, is seen inside the link's target.
func TestResolvedWithin(t *testing.T) {
	base := t.TempDir()
	real := filepath.Join(base, "real")
	if err := os.Mkdir(real, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(real, filepath.Join(base, "link")); err != nil {
		t.Fatal(err)
	}
	own := Resolved(real)
	for path, in := range map[string]bool{
		filepath.Join(base, "link", "x", "y"): true,
		filepath.Join(base, "link"):           true,
		filepath.Join(base, "realx"):          false,
		base:                                  false,
		filepath.Join(real, "..x"):            true,
	} {
		if got := Within(Resolved(path), own); got != in {
			t.Errorf("%s inside %s: %v, want %v", path, real, got, in)
		}
	}
}
