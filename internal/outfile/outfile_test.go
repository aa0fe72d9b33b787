package outfile

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/storbench/storbench/internal/input"
)

// Check replaces only what storbench wrote (known by its head) or an empty file, and
// refuses, as bad input naming the flag, a user's file, a directory and a missing
// directory.
func TestCheck(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	samples := CSV("a samples CSV storbench wrote", "t,time,interval_s")
	write := func(name, text string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	// A link to a result storbench wrote elsewhere: writing through it would replace
	// that file, which may be anyone's (the case: a link to a user's file
	// that happens to look like a result).
	elsewhere := filepath.Join(t.TempDir(), "theirs.json")
	if err := os.WriteFile(elsewhere, []byte(`{"storbench_version": "dev"}`), 0o644); err != nil {
		t.Fatal(err)
	}
	link := filepath.Join(dir, "link.json")
	if err := os.Symlink(elsewhere, link); err != nil {
		t.Fatal(err)
	}
	dangling := filepath.Join(dir, "dangling.json")
	if err := os.Symlink(filepath.Join(dir, "nowhere.json"), dangling); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		name string
		path string
		kind Kind
		want string // "" : allowed
	}{
		{"no file asked for", "", JSON, ""},
		{"new file", filepath.Join(dir, "new.json"), JSON, ""},
		{"empty file", write("empty.json", ""), JSON, ""},
		{"a result", write("run.json", "{\n  \"storbench_version\": \"dev\",\n  \"config\": {}\n}\n"), JSON, ""},
		{"a samples CSV", write("s.csv", "t,time,interval_s,cpu_idle\n0,x,1,50\n"), samples, ""},
		{"a samples CSV of its first columns only", write("s2.csv", "t,time,interval_s\r\n"), samples, ""},
		{"a user's JSON", write("user.json", `{"mine": true}`), JSON, "exists and is not a result storbench wrote: remove it, or give another --json"},
		{"a user's text", write("notes.txt", "precious\n"), JSON, "exists and is not a result storbench wrote"},
		{"a longer column name", write("s3.csv", "t,time,interval_seconds\n"), samples, "exists and is not a samples CSV storbench wrote"},
		{"a directory", dir, JSON, "is not a regular file: give a file name"},
		{"a link to a result", link, JSON, "link.json is a symbolic link (to " + elsewhere + "): storbench does not write through links"},
		{"a link to no file", dangling, JSON, "is a symbolic link"},
		{"a missing directory", filepath.Join(dir, "nodir", "x.json"), JSON, "the directory " + filepath.Join(dir, "nodir") + " does not exist: create it, or give another --json"},
	} {
		err := Target{Path: c.path, Flag: "--json", Kind: c.kind}.Check()
		switch {
		case c.want == "" && err != nil:
			t.Errorf("%s: %v, want it allowed", c.name, err)
		case c.want != "" && (err == nil || !errors.Is(err, input.ErrInvalid) || !strings.Contains(err.Error(), c.want)):
			t.Errorf("%s: %v, want an input error with %q", c.name, err, c.want)
		}
	}
	if b, _ := os.ReadFile(filepath.Join(dir, "notes.txt")); string(b) != "precious\n" {
		t.Errorf("Check changed a user's file: %q", b)
	}
}

// Create refuses a link, even one put in the file's place after the command's check
// (the open itself does not follow it), and leaves the file it points to as it was.
func TestCreateRefusesLink(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	elsewhere := filepath.Join(t.TempDir(), "theirs.json")
	const theirs = `{"storbench_version": "theirs"}`
	if err := os.WriteFile(elsewhere, []byte(theirs), 0o644); err != nil {
		t.Fatal(err)
	}
	target := Target{Path: filepath.Join(dir, "run.json"), Flag: "--json", Kind: JSON}
	if err := target.Check(); err != nil {
		t.Fatalf("a new file: %v", err)
	}
	if err := os.Symlink(elsewhere, target.Path); err != nil {
		t.Fatal(err)
	}
	if f, err := target.Create(); err == nil || !errors.Is(err, input.ErrInvalid) {
		if f != nil {
			f.Close()
		}
		t.Fatalf("Create through a link: %v, want an input error", err)
	}
	// After Create's own check: the open alone.
	if f, err := target.open(); err == nil || !errors.Is(err, input.ErrInvalid) {
		if f != nil {
			f.Close()
		}
		t.Fatalf("the open through a link: %v, want an input error", err)
	}
	if b, _ := os.ReadFile(elsewhere); string(b) != theirs {
		t.Errorf("the linked file was changed: %q", b)
	}
}
