// Package infile reads the files storbench is given to read (study files, cost
// models, results) so that none can hang it, take its memory or set off a device:
// only a regular file is opened, what a name is being checked first on a path-only
// descriptor (a FIFO or a device named as one is refused at once, never opened, and
// Ctrl-C is never waiting on an open), and read up to a bound its Kind states; inside
// a results store no symbolic link is followed. Each refusal is one line naming the
// file, wrapping input.ErrInvalid.
package infile

import (
	"bufio"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"

	"golang.org/x/sys/unix"

	"github.com/storbench/storbench/internal/bytesize"
	"github.com/storbench/storbench/internal/input"
)

// Kind is a kind of file storbench reads: how messages name it and the most bytes
// one may hold (one of the bounds below, or its own).
type Kind struct {
	What  string // "study file"
	Limit int64
}

// The bounds of the files storbench reads, by what they hold: every kind of file
// that holds the same takes its bound from here.
const (
	// HandWrittenLimit bounds a file a person writes: a study, a cost model. These are
	// kilobytes (the largest example study is 2 KB); 1 MiB leaves room for any a
	// person writes and refuses a device or a wrong file.
	HandWrittenLimit = 1 << 20
	// MeasuredLimit bounds a file of measurements with their timeline and system
	// samples, per second by default: a study's step file, a run's or fio's --json.
	// Measured, a step file is 118 KB for a real 130 s step on SQLite and one disk
	// (0.9 KB a second), 1.7 MB for bench/genstudy's 10-minute step with a minute of
	// ramp-up, two disks, per-I/O latency and the database's counters (2.6 KB a
	// second); 1 GiB is about four days of the latter.
	MeasuredLimit = 1 << 30
)

// Read reads the file at path whole. path may be a symbolic link (a user's own
// file); what it names must be a regular file within the bound.
func (k Kind) Read(path string) ([]byte, error) {
	f, err := k.open(unix.AT_FDCWD, path, path, 0)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return k.readAll(f, path)
}

// ReadIn reads the file name (a relative path) inside dir, following no symbolic
// link below dir: a store's files are storbench's own, and a link there points
// somewhere storbench did not write.
func (k Kind) ReadIn(dir, name string) ([]byte, error) {
	f, err := k.openIn(dir, name)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return k.readAll(f, filepath.Join(dir, name))
}

// DecodeJSONIn decodes the JSON file name inside dir (as ReadIn finds it) into v as
// it reads it, so that a file that is no JSON is refused at its first bytes rather
// than after all of them are in memory. Its error is a *Error.
func (k Kind) DecodeJSONIn(dir, name string, v any) error {
	f, err := k.openIn(dir, name)
	if err != nil {
		return err
	}
	defer f.Close()
	path := filepath.Join(dir, name)
	dec := json.NewDecoder(bufio.NewReader(io.LimitReader(f, k.Limit)))
	if err := dec.Decode(v); err != nil {
		switch {
		case errors.Is(err, io.EOF):
			return k.refuse(path, "is empty", nil)
		case errors.Is(err, io.ErrUnexpectedEOF):
			return k.refuse(path, "is torn (its JSON ends early)", nil)
		}
		return k.refuse(path, "is not JSON storbench wrote", err)
	}
	if _, err := dec.Token(); !errors.Is(err, io.EOF) {
		return k.refuse(path, "is not JSON storbench wrote (more follows its value)", nil)
	}
	return nil
}

// Error is a file refused: its path, and what is wrong with it ("is empty", "is not
// a regular file (a FIFO)"), worded to follow the path.
type Error struct {
	Kind Kind
	Path string
	What string
	Err  error // the cause (an open's or a decoder's error), if any
}

func (e *Error) Error() string { return e.Kind.What + " " + e.Path + " " + e.Problem() }

// Problem is what is wrong, without the file: "is torn (its JSON ends early)", "cannot
// be read: permission denied".
func (e *Error) Problem() string {
	if e.Err == nil {
		return e.What
	}
	cause := e.Err
	var pe *fs.PathError
	if errors.As(cause, &pe) {
		cause = pe.Err
	}
	return e.What + ": " + cause.Error()
}

// Unwrap makes a refusal input.ErrInvalid, and a missing file fs.ErrNotExist too.
func (e *Error) Unwrap() []error {
	if e.Err == nil {
		return []error{input.ErrInvalid}
	}
	return []error{input.ErrInvalid, e.Err}
}

func (k Kind) refuse(path, what string, err error) error {
	return &Error{Kind: k, Path: path, What: what, Err: err}
}

// openIn opens name below dir, resolving no symbolic link on the way (openat2's
// RESOLVE_NO_SYMLINKS; Linux 5.6 and later). A kernel without openat2 refuses a link
// as the last part of name only (O_NOFOLLOW).
func (k Kind) openIn(dir, name string) (*os.File, error) {
	path := filepath.Join(dir, name)
	d, err := unix.Open(dir, unix.O_PATH|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	if err != nil {
		return nil, k.openError(path, &fs.PathError{Op: "open", Path: dir, Err: err})
	}
	defer unix.Close(d)
	how := unix.OpenHow{Flags: unix.O_PATH | unix.O_CLOEXEC | unix.O_NOFOLLOW,
		Resolve: unix.RESOLVE_BENEATH | unix.RESOLVE_NO_SYMLINKS | unix.RESOLVE_NO_MAGICLINKS}
	fd, err := unix.Openat2(d, name, &how)
	if errors.Is(err, unix.ENOSYS) {
		return k.open(d, name, path, unix.O_NOFOLLOW)
	}
	if err != nil {
		return nil, k.openError(path, &fs.PathError{Op: "open", Path: path, Err: err})
	}
	return k.checked(fd, path)
}

// open finds name relative to the directory dirfd as a path only (O_PATH), which
// opens nothing: a device, whose open has effects (a watchdog armed, a tape rewound),
// or a FIFO, whose open waits for a writer, is never opened. checked opens it once it
// is known to be a regular file.
func (k Kind) open(dirfd int, name, path string, flags int) (*os.File, error) {
	fd, err := unix.Openat(dirfd, name, unix.O_PATH|unix.O_CLOEXEC|flags, 0)
	if err != nil {
		return nil, k.openError(path, &fs.PathError{Op: "open", Path: path, Err: err})
	}
	return k.checked(fd, path)
}

func (k Kind) openError(path string, err *fs.PathError) error {
	if errors.Is(err.Err, unix.ELOOP) {
		return k.linkRefused(path)
	}
	return k.refuse(path, "cannot be read", err)
}

func (k Kind) linkRefused(path string) error {
	return k.refuse(path, "is a symbolic link, which storbench does not follow in a results store (put the file itself there)", nil)
}

// checked takes pathFD, a path-only descriptor (O_PATH), and opens for reading the
// file it names when that is a regular file within the bound. The file is opened
// through the descriptor (/proc/self/fd/N), not by its name again: the file read is
// the file checked, whatever was put at its name meanwhile.
func (k Kind) checked(pathFD int, path string) (*os.File, error) {
	defer unix.Close(pathFD)
	var st unix.Stat_t
	if err := unix.Fstat(pathFD, &st); err != nil {
		return nil, k.refuse(path, "cannot be read", err)
	}
	switch {
	case st.Mode&unix.S_IFMT == unix.S_IFLNK: // the link itself, as O_PATH|O_NOFOLLOW finds it
		return nil, k.linkRefused(path)
	case st.Mode&unix.S_IFMT != unix.S_IFREG:
		return nil, k.refuse(path, "is not a regular file ("+typeName(st.Mode)+")", nil)
	case st.Size > k.Limit:
		return nil, k.refuse(path, fmt.Sprintf("is %s, more than the %s a %s may hold", bytesize.Format(st.Size), bytesize.Format(k.Limit), k.What), nil)
	}
	fd, err := unix.Open("/proc/self/fd/"+strconv.Itoa(pathFD), unix.O_RDONLY|unix.O_CLOEXEC, 0)
	if err != nil {
		return nil, k.refuse(path, "cannot be read", &fs.PathError{Op: "open", Path: path, Err: err})
	}
	return os.NewFile(uintptr(fd), path), nil
}

// readAll reads f whole, up to the bound: a file that grows past it while read is
// refused like one that was larger.
func (k Kind) readAll(f *os.File, path string) ([]byte, error) {
	b, err := io.ReadAll(io.LimitReader(f, k.Limit+1))
	if err != nil {
		return nil, k.refuse(path, "cannot be read", err)
	}
	if int64(len(b)) > k.Limit {
		return nil, k.refuse(path, fmt.Sprintf("grew past the %s a %s may hold while read", bytesize.Format(k.Limit), k.What), nil)
	}
	return b, nil
}

func typeName(mode uint32) string {
	switch mode & unix.S_IFMT {
	case unix.S_IFDIR:
		return "a directory"
	case unix.S_IFIFO:
		return "a FIFO"
	case unix.S_IFCHR:
		return "a character device"
	case unix.S_IFBLK:
		return "a block device"
	case unix.S_IFSOCK:
		return "a socket"
	case unix.S_IFLNK:
		return "a symbolic link"
	}
	return "not a file"
}
