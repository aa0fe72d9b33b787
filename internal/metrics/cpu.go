package metrics

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
)

// cpuCollector reads the all-CPU line of /proc/stat, through a descriptor kept open
// and only that line: procfs opened, read and parsed the whole file with fmt (every
// CPU's line and the interrupt counts) each interval, an eighth of what the sampler
// cost at 100 ms.
type cpuCollector struct {
	path   string
	file   *os.File
	buf    []byte
	prev   CPUTimes
	primed bool
}

// NewCPU samples CPU states from procRoot/stat.
func NewCPU(procRoot string) (Collector, error) {
	return &cpuCollector{path: filepath.Join(procRoot, "stat"), buf: make([]byte, 512)}, nil
}

func (c *cpuCollector) Collect(_ context.Context, s *Sample) error {
	if c.file == nil {
		f, err := os.Open(c.path)
		if err != nil {
			return err
		}
		c.file = f
	}
	// /proc generates the file afresh at offset 0; the first line fits the buffer.
	n, err := c.file.ReadAt(c.buf, 0)
	if err != nil && !errors.Is(err, io.EOF) {
		return err
	}
	t, err := parseCPULine(c.buf[:n])
	if err != nil {
		return err
	}
	if c.primed {
		s.CPU = cpuShares(t.minus(c.prev))
	}
	c.prev, c.primed = t, true
	return nil
}

// Close closes /proc/stat.
func (c *cpuCollector) Close() error {
	if c.file == nil {
		return nil
	}
	return c.file.Close()
}

// parseCPULine reads the first line of /proc/stat, "cpu  user nice system idle
// iowait irq softirq steal …" in USER_HZ ticks, into seconds.
func parseCPULine(b []byte) (CPUTimes, error) {
	line, _, _ := bytes.Cut(b, []byte("\n"))
	rest, ok := bytes.CutPrefix(line, []byte("cpu "))
	if !ok {
		return CPUTimes{}, fmt.Errorf("/proc/stat does not start with the all-CPU line: %.40q", b)
	}
	var v [8]float64
	for i := range v {
		rest = bytes.TrimLeft(rest, " ")
		field, after, _ := bytes.Cut(rest, []byte(" "))
		n, err := strconv.ParseUint(string(field), 10, 64)
		if err != nil {
			return CPUTimes{}, fmt.Errorf("/proc/stat all-CPU field %d: %w", i+1, err)
		}
		v[i], rest = float64(n)/userHZ, after
	}
	return CPUTimes{User: v[0], Nice: v[1], System: v[2], Idle: v[3], IOWait: v[4], IRQ: v[5], SoftIRQ: v[6], Steal: v[7]}, nil
}
