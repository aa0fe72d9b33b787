package study

// What the checks of a study file ask of this machine: its memory and this user's
// process limit.

import (
	"golang.org/x/sys/unix"

	"github.com/storbench/storbench/internal/instance"
)

// memTotal reports the machine's memory; a variable so tests do not depend on the
// machine they run on.
var memTotal = instance.MachineMemory

// maxProcesses is this user's process limit (ulimit -u); false when unlimited.
func maxProcesses() (int64, bool) {
	var l unix.Rlimit
	if unix.Getrlimit(unix.RLIMIT_NPROC, &l) != nil || l.Cur == unix.RLIM_INFINITY {
		return 0, false
	}
	return int64(l.Cur), true
}
