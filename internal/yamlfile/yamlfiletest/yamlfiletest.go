// Package yamlfiletest checks, in tests, that an error is one a user can act on in
// the form yamlfile gives it.
package yamlfiletest

import (
	"errors"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/storbench/storbench/internal/input"
	"github.com/storbench/storbench/internal/yamlfile"
)

// CheckError checks that err is a *yamlfile.LineError at file:line that contains
// want, and its form: one line, "file:LINE: what (hint)", wrapping input.ErrInvalid.
func CheckError(t testing.TB, err error, file string, line int, want string) {
	t.Helper()
	if err == nil {
		t.Fatalf("no error; want one at %s:%d containing %q", file, line, want)
	}
	msg := err.Error()
	if !errors.Is(err, input.ErrInvalid) {
		t.Errorf("error %q does not wrap input.ErrInvalid", msg)
	}
	var le *yamlfile.LineError
	if !errors.As(err, &le) {
		t.Fatalf("error %q is not a *yamlfile.LineError", msg)
	}
	if le.Line != line {
		t.Errorf("error %q is at line %d, want %d", msg, le.Line, line)
	}
	if prefix := file + ":" + strconv.Itoa(line) + ": "; !strings.HasPrefix(msg, prefix) {
		t.Errorf("error %q does not start with %q", msg, prefix)
	}
	if strings.Contains(msg, "\n") {
		t.Errorf("error %q is more than one line", msg)
	}
	if !strings.HasSuffix(msg, ")") {
		t.Errorf("error %q has no hint in parentheses", msg)
	}
	if !strings.Contains(msg, want) {
		t.Errorf("error %q does not contain %q", msg, want)
	}
}

// Seeds adds to a fuzz target every file matching the globs and broken variants of
// each: cut in half, cut before its last line, a tab for an indent, a stray alias.
func Seeds(f *testing.F, globs ...string) {
	f.Helper()
	n := 0
	for _, g := range globs {
		paths, err := filepath.Glob(g)
		if err != nil {
			f.Fatal(err)
		}
		for _, p := range paths {
			b, err := os.ReadFile(p)
			if err != nil {
				f.Fatal(err)
			}
			f.Add(b)
			f.Add(b[:len(b)/2])
			if i := strings.LastIndexByte(strings.TrimRight(string(b), "\n"), '\n'); i > 0 {
				f.Add(b[:i])
			}
			f.Add([]byte(strings.Replace(string(b), "  ", "\t", 1)))
			f.Add(append(append([]byte{}, b...), "\nextra: *nowhere\n"...))
			n++
		}
	}
	if n == 0 {
		f.Fatalf("no seed files match %v", globs)
	}
}

// Refused checks what a parser gives hostile input: a result, or an error a user
// can act on (one line, wrapping input.ErrInvalid) — never a panic, never neither.
func Refused(t *testing.T, parsed bool, err error) {
	t.Helper()
	switch {
	case err == nil && !parsed:
		t.Fatal("the parser returned neither a result nor an error")
	case err == nil:
	case !errors.Is(err, input.ErrInvalid):
		t.Fatalf("error does not wrap input.ErrInvalid: %v", err)
	case strings.Contains(err.Error(), "\n"):
		t.Fatalf("error is not one line: %q", err)
	}
}
