package instance

import (
	"os"
	"testing"
)

func TestMachineMemory(t *testing.T) {
	t.Parallel()
	if _, err := os.Stat("/proc/meminfo"); err != nil {
		t.Skip("no /proc/meminfo")
	}
	total, err := MachineMemory()
	if err != nil || total < 64<<20 {
		t.Errorf("MachineMemory() = %d, %v", total, err)
	}
}

// A limit up to the machine's memory is one; above it, it is refused naming the
// most it may be; an unknown machine size refuses nothing.
func TestCheckMachineMemory(t *testing.T) {
	t.Parallel()
	const machine = 24684092 << 10
	for _, c := range []struct {
		memory, machine int64
		want            string
	}{
		{machine, machine, ""},
		{1 << 30, machine, ""},
		{64 << 30, 0, ""},
		{64 << 30, machine, "invalid input: --memory 64GB is more than this machine's 23.54GB (a limit above the machine's memory is no limit; give at most 23.54GB)"},
	} {
		got := ""
		if err := CheckMachineMemory(c.memory, c.machine); err != nil {
			got = err.Error()
		}
		if got != c.want {
			t.Errorf("CheckMachineMemory(%d, %d) = %q, want %q", c.memory, c.machine, got, c.want)
		}
	}
}
