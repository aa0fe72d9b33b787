// Package outfile guards the files a user names for storbench's output (--json,
// --csv, --metrics-csv, report -o): a file there is replaced only when it is empty or
// one storbench wrote, recognised by its head, so that a user's own file of that name
// is never lost. Commands check their files before any work begins, so a refusal
// costs no measurement and writes nothing.
package outfile

import (
	"bytes"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"syscall"

	"github.com/storbench/storbench/internal/input"
)

// Kind is what storbench writes to a file, and how it knows such a file again.
type Kind struct {
	// What names such a file in messages: "a result storbench wrote".
	What string
	// Is tells, from the file's first kilobytes, whether storbench wrote it.
	Is func(head []byte) bool
}

// headSize is how much of a file Kind.Is sees.
const headSize = 4096

// JSON is a result storbench writes as JSON (run, fio, backup and restore --json):
// an object that records storbench's version near its start.
var JSON = Kind{What: "a result storbench wrote", Is: func(head []byte) bool {
	return bytes.HasPrefix(bytes.TrimSpace(head), []byte("{")) && bytes.Contains(head, []byte(`"storbench_version"`))
}}

// CSV is a CSV file storbench writes whose header begins with columns, named what.
func CSV(what string, columns string) Kind {
	return Kind{What: what, Is: func(head []byte) bool {
		rest, ok := bytes.CutPrefix(head, []byte(columns))
		return ok && (len(rest) == 0 || rest[0] == ',' || rest[0] == '\n' || rest[0] == '\r')
	}}
}

// Target is a file a command is to write.
type Target struct {
	Path string
	// Flag is the flag to change for another file, for messages: "--json".
	Flag string
	Kind Kind
}

// Check refuses, as bad input, a path whose directory does not exist, that is not a
// regular file, that is a symbolic link, or that holds a file storbench did not
// write. A link is refused rather than followed: writing through it replaces the file
// it points to, which may be anywhere and anyone's. A target without a path (its flag
// not given) passes: nothing is to be written.
func (t Target) Check() error {
	if t.Path == "" {
		return nil
	}
	dir := filepath.Dir(t.Path)
	if st, err := os.Stat(dir); err != nil || !st.IsDir() {
		return fmt.Errorf("%w: %s %s: the directory %s does not exist: create it, or give another %s", input.ErrInvalid, t.Flag, t.Path, dir, t.Flag)
	}
	st, err := os.Lstat(t.Path)
	switch {
	case os.IsNotExist(err):
		return nil
	case err != nil:
		return fmt.Errorf("%w: %s %s: %v: give another %s", input.ErrInvalid, t.Flag, t.Path, err, t.Flag)
	case st.Mode()&os.ModeSymlink != 0:
		to, _ := os.Readlink(t.Path)
		return fmt.Errorf("%w: %s %s is a symbolic link (to %s): storbench does not write through links; give the file's own path, or another %s", input.ErrInvalid, t.Flag, t.Path, to, t.Flag)
	case !st.Mode().IsRegular():
		return fmt.Errorf("%w: %s %s is not a regular file: give a file name", input.ErrInvalid, t.Flag, t.Path)
	case st.Size() > 0 && !t.written():
		return fmt.Errorf("%w: %s exists and is not %s: remove it, or give another %s", input.ErrInvalid, t.Path, t.Kind.What, t.Flag)
	}
	return nil
}

// written tells whether the file at the target's path is one storbench wrote.
func (t Target) written() bool {
	f, err := os.Open(t.Path)
	if err != nil {
		return false
	}
	defer f.Close()
	head := make([]byte, headSize)
	n, _ := io.ReadFull(f, head)
	return t.Kind.Is(head[:n])
}

// Create checks the target again (time has passed since the command checked it) and
// creates or truncates it.
func (t Target) Create() (*os.File, error) {
	if err := t.Check(); err != nil {
		return nil, err
	}
	return t.open()
}

// open creates or truncates the target's file; O_NOFOLLOW refuses a link put in its
// place since the check, which would be written through.
func (t Target) open() (*os.File, error) {
	f, err := os.OpenFile(t.Path, os.O_RDWR|os.O_CREATE|os.O_TRUNC|syscall.O_NOFOLLOW, 0o644)
	if err != nil {
		return nil, fmt.Errorf("%w: %s: %v", input.ErrInvalid, t.Flag, err)
	}
	return f, nil
}
