// Package input marks errors in what the user gave (a flag, a DSN, a study file):
// the command line reports them with exit code 2. It is a leaf, so any package can
// say "this is the user's input" without importing the engines.
package input

import "errors"

// ErrInvalid is wrapped by every error in the user's input.
var ErrInvalid = errors.New("invalid input")
