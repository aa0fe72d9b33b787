package main

import (
	"fmt"
	"os"
	"testing"
)

// TestMain gives the package's tests a STORBENCH_HOME of their own, for those that do
// not set one: a study links its registry into the default one, and a build or run on
// a managed instance leases it there, which must never be the user's.
func TestMain(m *testing.M) {
	home, err := os.MkdirTemp("", "storbench-cmd-test-home-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	os.Setenv("STORBENCH_HOME", home)
	code := m.Run()
	os.RemoveAll(home)
	os.Exit(code)
}
