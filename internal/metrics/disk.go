package metrics

import (
	"context"
	"fmt"
	"slices"
	"time"

	"github.com/prometheus/procfs/blockdevice"

	"github.com/storbench/storbench/internal/blockdev"
)

// diskCollector reads /proc/diskstats for the disks the database is on.
type diskCollector struct {
	fs      blockdevice.FS
	devices []blockdev.BlockDevice
	roles   map[string][]string
	prev    map[blockdev.BlockDevice]DiskCounters
	clock
	prevAt time.Time
}

// NewDisks samples the given whole disks from procRoot/diskstats; roles names what of
// the database each holds.
func NewDisks(procRoot, sysRoot string, devices []blockdev.BlockDevice, roles map[string][]string) (Collector, error) {
	fs, err := blockdevice.NewFS(procRoot, sysRoot)
	if err != nil {
		return nil, err
	}
	return &diskCollector{fs: fs, devices: devices, roles: roles}, nil
}

func (c *diskCollector) Collect(_ context.Context, s *Sample) error {
	stats, err := c.fs.ProcDiskstats()
	now := c.clock.read()
	if err != nil {
		return err
	}
	// Only the resolved disks (name and number, as resolution found them): a
	// partition's or a dm device's line would count the same I/O again.
	cur := make(map[blockdev.BlockDevice]DiskCounters, len(c.devices))
	for _, st := range stats {
		d := blockdev.BlockDevice{Name: st.DeviceName, Major: st.MajorNumber, Minor: st.MinorNumber}
		if slices.Contains(c.devices, d) {
			cur[d] = diskCounters(st.IOStats)
		}
	}
	for _, d := range c.devices {
		if _, ok := cur[d]; !ok {
			return fmt.Errorf("disk %s (%d:%d) is not in /proc/diskstats", d.Name, d.Major, d.Minor)
		}
	}
	if c.prev != nil {
		seconds := now.Sub(c.prevAt).Seconds()
		for _, d := range c.devices {
			s.Disks = append(s.Disks, diskFigures(d.Name, c.roles[d.Name], cur[d].minus(c.prev[d]), seconds))
		}
	}
	c.prev, c.prevAt = cur, now
	return nil
}

// diskCounters picks the fields the formulas use.
func diskCounters(io blockdevice.IOStats) DiskCounters {
	return DiskCounters{ReadIOs: io.ReadIOs, ReadSectors: io.ReadSectors, ReadMs: io.ReadTicks,
		WriteIOs: io.WriteIOs, WriteSectors: io.WriteSectors, WriteMs: io.WriteTicks,
		BusyMs: io.IOsTotalTicks, QueueMs: io.WeightedIOTicks}
}
