package metrics

import (
	"context"

	"github.com/prometheus/procfs"
)

// cpuCollector reads the all-CPU line of /proc/stat.
type cpuCollector struct {
	fs     procfs.FS
	prev   CPUTimes
	primed bool
}

// NewCPU samples CPU states from procRoot/stat.
func NewCPU(procRoot string) (Collector, error) {
	fs, err := procfs.NewFS(procRoot)
	if err != nil {
		return nil, err
	}
	return &cpuCollector{fs: fs}, nil
}

func (c *cpuCollector) Collect(_ context.Context, s *Sample) error {
	st, err := c.fs.Stat()
	if err != nil {
		return err
	}
	a := st.CPUTotal
	t := CPUTimes{User: a.User, Nice: a.Nice, System: a.System, Idle: a.Idle, IOWait: a.Iowait,
		IRQ: a.IRQ, SoftIRQ: a.SoftIRQ, Steal: a.Steal}
	if c.primed {
		s.CPU = cpuShares(t.minus(c.prev))
	}
	c.prev, c.primed = t, true
	return nil
}
