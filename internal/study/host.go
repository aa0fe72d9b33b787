package study

// What the checks of a study file ask of this machine: its memory and this user's
// process limit.

import (
	"bufio"
	"errors"
	"fmt"
	"os"
	"strconv"
	"strings"

	"golang.org/x/sys/unix"
)

// memTotal reports the machine's memory; a variable so tests do not depend on the
// machine they run on.
var memTotal = readMemTotal

// readMemTotal reads MemTotal from /proc/meminfo.
func readMemTotal() (int64, error) {
	f, err := os.Open("/proc/meminfo")
	if err != nil {
		return 0, err
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		fields := strings.Fields(sc.Text())
		if len(fields) >= 2 && fields[0] == "MemTotal:" {
			kb, err := strconv.ParseInt(fields[1], 10, 64)
			if err != nil {
				return 0, fmt.Errorf("meminfo: MemTotal %q", fields[1])
			}
			return kb << 10, nil
		}
	}
	if err := sc.Err(); err != nil {
		return 0, err
	}
	return 0, errors.New("meminfo has no MemTotal")
}

// maxProcesses is this user's process limit (ulimit -u); false when unlimited.
func maxProcesses() (int64, bool) {
	var l unix.Rlimit
	if unix.Getrlimit(unix.RLIMIT_NPROC, &l) != nil || l.Cur == unix.RLIM_INFINITY {
		return 0, false
	}
	return int64(l.Cur), true
}
