// Package interrupt words the error of work its context ended (Ctrl-C): any package
// that stops on a cancelled context says what it kept the same way, without
// importing the engines.
package interrupt

// Error is the error of work its context ended: it matches the context's error
// (errors.Is(err, context.Canceled)) but reads as msg alone, which says what was
// kept; the cause's own words add nothing for the user.
func Error(msg string, cause error) error { return &interruption{msg, cause} }

type interruption struct {
	msg   string
	cause error
}

func (e *interruption) Error() string { return e.msg }
func (e *interruption) Unwrap() error { return e.cause }
