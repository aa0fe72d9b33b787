// Package yamlfiletest checks, in tests, that an error is one a user can act on in
// the form yamlfile gives it.
package yamlfiletest

import (
	"errors"
	"strconv"
	"strings"
	"testing"

	"github.com/storbench/storbench/internal/engine"
	"github.com/storbench/storbench/internal/yamlfile"
)

// CheckError checks that err is a *yamlfile.LineError at file:line that contains
// want, and its form: one line, "file:LINE: what (hint)", wrapping engine.ErrInput.
func CheckError(t testing.TB, err error, file string, line int, want string) {
	t.Helper()
	if err == nil {
		t.Fatalf("no error; want one at %s:%d containing %q", file, line, want)
	}
	msg := err.Error()
	if !errors.Is(err, engine.ErrInput) {
		t.Errorf("error %q does not wrap engine.ErrInput", msg)
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
