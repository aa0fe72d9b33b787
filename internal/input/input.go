// Package input marks errors in what the user gave (a flag, a DSN, a study file):
// the command line reports them with exit code 2. It is a leaf, so any package can
// say "this is the user's input" without importing the engines.
//
// The package that owns a setting refuses it with Errorf, naming the setting by its
// key, as a study file spells it ({size}, {io_limit}); whoever shows the error names
// the key the way its user wrote it: the command line as a flag (--size), a study as
// the place in its file (experiments[0].size), each with Render.
package input

import (
	"errors"
	"fmt"
	"strings"
)

// ErrInvalid is wrapped by every error in the user's input.
var ErrInvalid = errors.New("invalid input")

// Error is a refused setting: what is wrong with it and how to fix it, in a text that
// names settings by key, so that each caller can name them its own way. It wraps
// ErrInvalid and the causes its text wraps with %w.
type Error struct {
	// Setting is the key of the setting at fault ("size", "latency_limit"): a
	// study points at the line that sets it.
	Setting string
	format  string
	args    []any
	// err is the text with its keys unresolved; it holds the causes.
	err error
}

// Errorf refuses setting. format and args are fmt.Errorf's (%w wraps a cause); in
// format, {key} stands for the setting spelt key, this one or another of the same
// owner ("{rate} and {keying} both pace the users"), and is named when the error is
// shown. A key is lower-case letters, digits and _, starting with a letter; other
// braces are text.
func Errorf(setting, format string, args ...any) error {
	return &Error{Setting: setting, format: format, args: args, err: fmt.Errorf(format, args...)}
}

// Error names the keys as the command line does (Flag): an error that no caller
// renders reads as storbench's messages always have.
func (e *Error) Error() string { return e.render(Flag) }

// Unwrap returns ErrInvalid and the causes.
func (e *Error) Unwrap() []error {
	errs := []error{ErrInvalid}
	switch u := e.err.(type) {
	case interface{ Unwrap() error }:
		errs = append(errs, u.Unwrap())
	case interface{ Unwrap() []error }:
		errs = append(errs, u.Unwrap()...)
	}
	return errs
}

// render is the error's line with every key named by name, in the causes too.
func (e *Error) render(name func(key string) string) string {
	args := make([]any, len(e.args))
	for i, a := range e.args {
		args[i] = a
		if err, ok := a.(error); ok && errors.Is(err, ErrInvalid) {
			// A cause that is bad input too is said once: this error says so.
			args[i] = rendered(strings.TrimPrefix(Render(err, name), ErrInvalid.Error()+": "))
		}
	}
	return ErrInvalid.Error() + ": " + fmt.Errorf(resolve(e.format, name), args...).Error()
}

// rendered is a cause's text with its keys named, formatted in its place.
type rendered string

func (r rendered) Error() string { return string(r) }

// Flag names key as a command-line flag: size is --size, latency_limit is
// --latency-limit.
func Flag(key string) string { return "--" + strings.ReplaceAll(key, "_", "-") }

// Render is err's text with the keys of every Error in it named by name: a wrapper's
// words stay as they are, each Error's are rendered in their place. An error without
// an Error in it is its own text.
func Render(err error, name func(key string) string) string {
	text := err.Error()
	for _, e := range outermost(err) {
		text = strings.Replace(text, e.Error(), e.render(name), 1)
	}
	return text
}

// Errors are the refused settings in err: the Errors in its tree that no other Error
// wraps, for a caller that shows each at its own place (a study, at each setting's
// line).
func Errors(err error) []*Error { return outermost(err) }

// outermost are the Errors in err's tree that no other Error wraps (those render the
// ones below them).
func outermost(err error) []*Error {
	if e, ok := err.(*Error); ok {
		return []*Error{e}
	}
	var found []*Error
	switch u := err.(type) {
	case interface{ Unwrap() error }:
		if w := u.Unwrap(); w != nil {
			found = outermost(w)
		}
	case interface{ Unwrap() []error }:
		for _, w := range u.Unwrap() {
			if w != nil {
				found = append(found, outermost(w)...)
			}
		}
	}
	return found
}

// resolve replaces each {key} of format with name(key), as text (a % in a name is
// escaped).
func resolve(format string, name func(key string) string) string {
	var b strings.Builder
	for {
		open := strings.IndexByte(format, '{')
		if open < 0 {
			return b.String() + format
		}
		end := strings.IndexByte(format[open:], '}')
		if end < 0 || !isKey(format[open+1:open+end]) {
			b.WriteString(format[:open+1])
			format = format[open+1:]
			continue
		}
		b.WriteString(format[:open])
		b.WriteString(strings.ReplaceAll(name(format[open+1:open+end]), "%", "%%"))
		format = format[open+end+1:]
	}
}

// isKey: lower-case letters, digits and _, starting with a letter.
func isKey(s string) bool {
	if s == "" || s[0] < 'a' || s[0] > 'z' {
		return false
	}
	for _, c := range []byte(s) {
		if (c < 'a' || c > 'z') && (c < '0' || c > '9') && c != '_' {
			return false
		}
	}
	return true
}
