// Package testhome gives a test binary a STORBENCH_HOME of its own, for the tests
// that do not set one: a study links its registry into the default registry, and a
// build or run on a managed instance leases it there, which must never be the user's.
package testhome

import (
	"fmt"
	"os"
	"testing"
)

// Main is a package's TestMain: it runs m with STORBENCH_HOME in a temporary
// directory, removed afterwards, and exits with m's code.
func Main(m *testing.M) {
	home, err := os.MkdirTemp("", "storbench-test-home-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	os.Setenv("STORBENCH_HOME", home)
	code := m.Run()
	os.RemoveAll(home)
	os.Exit(code)
}
