package input

import (
	"errors"
	"fmt"
	"io/fs"
	"strings"
	"testing"
)

// studyName names a key as a study file's place would: the namer a study passes.
func studyName(key string) string { return "experiments[0]." + key }

// TestRenderNamesKeys renders one error with the command line's namer and a study's:
// every {key} of the text, the setting's and the others', is named by the namer, and
// the rest of the text is the same.
func TestRenderNamesKeys(t *testing.T) {
	err := Errorf("ramp", "{ramp} %v is longer than {duration}: e.g. {ramp} 2m, or a longer {latency_limit}", "1h")
	for _, c := range []struct {
		name func(string) string
		want string
	}{
		{Flag, "invalid input: --ramp 1h is longer than --duration: e.g. --ramp 2m, or a longer --latency-limit"},
		{studyName, "invalid input: experiments[0].ramp 1h is longer than experiments[0].duration: e.g. experiments[0].ramp 2m, or a longer experiments[0].latency_limit"},
	} {
		if got := Render(err, c.name); got != c.want {
			t.Errorf("Render:\n got %q\nwant %q", got, c.want)
		}
	}
	if got, want := err.Error(), Render(err, Flag); got != want {
		t.Errorf("Error() = %q, want the command line's %q", got, want)
	}
}

// TestRenderLeavesOtherText: braces that hold no key, a % in a name and a %-verb's
// argument that looks like a key are text, never resolved.
func TestRenderLeavesOtherText(t *testing.T) {
	err := Errorf("path", "{path} %s holds {} and {Not_a_key} and {a-b} and {unclosed", "/srv/{size}")
	want := "invalid input: 100% /srv/{size} holds {} and {Not_a_key} and {a-b} and {unclosed"
	if got := Render(err, func(string) string { return "100%" }); got != want {
		t.Errorf("Render:\n got %q\nwant %q", got, want)
	}
}

// TestRenderInWrappers: a wrapper's words stay, the Error inside it is rendered in its
// place, also when joined with others, when it wraps another Error as its cause, and
// an error without one is its own text.
func TestRenderInWrappers(t *testing.T) {
	size := Errorf("size", "use a smaller {size}")
	path := Errorf("path", "{path} /x: %w", Errorf("size", "{size} too big"))
	err := fmt.Errorf("step 3: %w", errors.Join(size, fmt.Errorf("target a: %w", path)))
	want := "step 3: invalid input: use a smaller experiments[0].size\ntarget a: invalid input: experiments[0].path /x: experiments[0].size too big"
	if got := Render(err, studyName); got != want {
		t.Errorf("Render:\n got %q\nwant %q", got, want)
	}
	plain := errors.New("disk full --size")
	if got := Render(plain, studyName); got != plain.Error() {
		t.Errorf("Render of an error without an Error: %q, want %q", got, plain.Error())
	}
}

// TestErrorIsAs: an Error is input.ErrInvalid, keeps the causes it wraps (one or
// several) for errors.Is and errors.As, and is found by errors.As under wrappers with
// its setting.
func TestErrorIsAs(t *testing.T) {
	cause := &fs.PathError{Op: "stat", Path: "/x", Err: fs.ErrNotExist}
	err := fmt.Errorf("fio: %w", Errorf("path", "{path}: %w; %w", cause, fs.ErrPermission))
	if !errors.Is(err, ErrInvalid) {
		t.Errorf("errors.Is(%v, ErrInvalid) = false", err)
	}
	if !errors.Is(err, fs.ErrNotExist) || !errors.Is(err, fs.ErrPermission) {
		t.Errorf("%v lost a cause it wraps", err)
	}
	var pe *fs.PathError
	if !errors.As(err, &pe) || pe != cause {
		t.Errorf("errors.As(%v, *fs.PathError) = %v", err, pe)
	}
	var ie *Error
	if !errors.As(err, &ie) || ie.Setting != "path" {
		t.Errorf("errors.As(%v, *input.Error) = %+v, want setting path", err, ie)
	}
	if got, want := err.Error(), "fio: invalid input: --path: stat /x: file does not exist; permission denied"; got != want {
		t.Errorf("Error() = %q, want %q", got, want)
	}
	if errors.Is(Errorf("size", "{size} too big"), fs.ErrNotExist) {
		t.Error("an Error without a cause is fs.ErrNotExist")
	}
}

// A refusal whose cause is bad input too says "invalid input" once, whether the cause
// is a refused setting or an error that wraps ErrInvalid.
func TestNestedSaysInvalidOnce(t *testing.T) {
	for _, cause := range []error{
		Errorf("size", "{size} is too small"),
		fmt.Errorf("%w: /x does not exist", ErrInvalid),
	} {
		err := Errorf("path", "{path} /x/y: %w", cause)
		if got := Render(err, Flag); strings.Count(got, ErrInvalid.Error()) != 1 || !errors.Is(err, cause) {
			t.Errorf("%q: want %q once, and the cause kept", got, ErrInvalid)
		}
	}
}
