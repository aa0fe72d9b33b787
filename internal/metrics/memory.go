package metrics

import (
	"context"
	"fmt"

	"github.com/prometheus/procfs"
)

// memoryCollector reads /proc/meminfo; its figures are levels, not rates.
type memoryCollector struct{ fs procfs.FS }

// NewMemory samples memory use from procRoot/meminfo.
func NewMemory(procRoot string) (Collector, error) {
	fs, err := procfs.NewFS(procRoot)
	if err != nil {
		return nil, err
	}
	return &memoryCollector{fs: fs}, nil
}

func (c *memoryCollector) Collect(_ context.Context, s *Sample) error {
	m, err := c.fs.Meminfo()
	if err != nil {
		return err
	}
	fields := []*uint64{m.MemTotalBytes, m.MemAvailableBytes, m.CachedBytes, m.BuffersBytes, m.DirtyBytes, m.WritebackBytes}
	for _, f := range fields {
		if f == nil {
			return fmt.Errorf("meminfo lacks MemTotal, MemAvailable, Cached, Buffers, Dirty or Writeback")
		}
	}
	s.Memory = &Memory{Total: *m.MemTotalBytes, Used: *m.MemTotalBytes - min(*m.MemAvailableBytes, *m.MemTotalBytes),
		Cache: *m.CachedBytes + *m.BuffersBytes, Dirty: *m.DirtyBytes, Writeback: *m.WritebackBytes}
	return nil
}
