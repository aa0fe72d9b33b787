package instance

// What an instance's limits ask of this machine: a memory limit within its memory and
// CPUs it has online. Checked before anything is created, by instance create and by a
// study's plan alike.

import (
	"bufio"
	"errors"
	"fmt"
	"os"
	"strconv"
	"strings"

	"github.com/storbench/storbench/internal/bytesize"
	"github.com/storbench/storbench/internal/input"
	"github.com/storbench/storbench/internal/instance/cgroup"
)

// MachineMemory reports this machine's memory: MemTotal of /proc/meminfo.
func MachineMemory() (int64, error) {
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

// CheckMachineMemory refuses a memory limit above machine, the machine's memory (0:
// unknown, nothing refused): the cgroup would allow it and the page cache would fake
// it, and the server's caches sized from it may not even start.
func CheckMachineMemory(memoryBytes, machine int64) error {
	if machine <= 0 || memoryBytes <= machine {
		return nil
	}
	return input.Errorf("memory", "{memory} %s is more than this machine's %s (a limit above the machine's memory is no limit; give at most %s)",
		bytesize.Format(memoryBytes), bytesize.Format(machine), bytesize.Format(machine))
}

// CheckCPUs refuses a CPU list naming CPUs this machine does not have online (or not
// a CPU list): neither a cpuset nor CPU affinity could apply it, and the instance
// would run on all CPUs while claiming these.
func CheckCPUs(list string) error {
	if err := cgroup.CheckCPUs(list); err != nil {
		return input.Errorf("cpus", "{cpus}: %w (give CPUs this machine has)", err)
	}
	return nil
}
