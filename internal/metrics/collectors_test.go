package metrics

import (
	"context"
	"math"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/prometheus/procfs/blockdevice"

	"github.com/storbench/storbench/internal/blockdev"
	"github.com/storbench/storbench/internal/testsupport/looptest"
)

// procFixture is a fake /proc whose files a test rewrites between two collections.
type procFixture struct {
	t    *testing.T
	root string
}

func newProcFixture(t *testing.T) procFixture {
	return procFixture{t: t, root: t.TempDir()}
}

func (p procFixture) write(name, content string) {
	p.t.Helper()
	if err := os.WriteFile(filepath.Join(p.root, name), []byte(content), 0o644); err != nil {
		p.t.Fatal(err)
	}
}

// near tells whether got is within 1e-9 relative of want.
func near(got, want float64) bool { return math.Abs(got-want) <= 1e-9*max(1, math.Abs(want)) }

// approx fails unless got is near want.
func approx(t *testing.T, what string, got, want float64) {
	t.Helper()
	if !near(got, want) {
		t.Errorf("%s = %v, want %v", what, got, want)
	}
}

// ownDisk mounts a fresh ext4 of size bytes on a loop device of the test's own and
// returns its directory and that device: the device's counters see the test's I/O
// only, whereas the machine's disk also serves whatever else runs (other test
// packages, other work), which a count of the test's own I/O cannot tell apart. The
// backing file is removed once attached, so that the resolver reports the loop
// device's own figures instead of following it to the disk under the file.
func ownDisk(t *testing.T, size int64) (string, blockdev.BlockDevice) {
	t.Helper()
	d := looptest.Mount(t, size)
	if err := os.Remove(d.Backing); err != nil {
		t.Fatal(err)
	}
	p, err := blockdev.NewResolver().Resolve(d.Dir, "path")
	if err != nil {
		t.Fatal(err)
	}
	dev := blockdev.BlockDevice{Name: d.Name, Major: d.Major, Minor: d.Minor}
	if len(p.Devices) != 1 || p.Devices[0] != dev {
		t.Fatalf("%s resolves to %+v (%s), want %+v only", d.Dir, p.Devices, p.Note, dev)
	}
	return d.Dir, dev
}

// procDiskCounters reads one disk's counters from this machine's /proc/diskstats.
func procDiskCounters(t *testing.T, device string) DiskCounters {
	t.Helper()
	fs, err := blockdevice.NewFS("/proc", "/sys")
	if err != nil {
		t.Fatal(err)
	}
	stats, err := fs.ProcDiskstats()
	if err != nil {
		t.Fatal(err)
	}
	for _, st := range stats {
		if st.DeviceName == device {
			return diskCounters(st.IOStats)
		}
	}
	t.Fatalf("%s is not in /proc/diskstats", device)
	return DiskCounters{}
}

// completedIOs is a disk's completed reads + writes.
func completedIOs(t *testing.T, device string) uint64 {
	c := procDiskCounters(t, device)
	return c.ReadIOs + c.WriteIOs
}

// The first line of /proc/stat sums all CPUs; percentages are shares of the first
// eight fields' total; guest time is already inside user and is not added again.
func TestCPUFromProcStat(t *testing.T) {
	p := newProcFixture(t)
	c, err := NewCPU(p.root)
	if err != nil {
		t.Fatal(err)
	}
	//           user nice system idle iowait irq softirq steal guest guest_nice
	p.write("stat", "cpu  1000 0 500 8000 100 0 0 0 50 0\ncpu0 500 0 250 4000 50 0 0 0 25 0\nintr 0\nctxt 0\nbtime 0\nprocesses 0\nprocs_running 1\nprocs_blocked 0\n")
	var s Sample
	if err := c.Collect(context.Background(), &s); err != nil {
		t.Fatal(err)
	}
	if s.CPU != nil {
		t.Fatal("the first collection only primes")
	}
	// Δ: user 300, nice 100, system 150, idle 200, iowait 150, irq 50, softirq 50, steal 0 = 1000 ticks.
	p.write("stat", "cpu  1300 100 650 8200 250 50 50 0 80 0\ncpu0 650 50 325 4100 125 25 25 0 40 0\nintr 0\nctxt 0\nbtime 0\nprocesses 0\nprocs_running 1\nprocs_blocked 0\n")
	if err := c.Collect(context.Background(), &s); err != nil {
		t.Fatal(err)
	}
	approx(t, "user", s.CPU.User, 40)     // (300 + 100) / 1000
	approx(t, "system", s.CPU.System, 25) // (150 + 50 + 50) / 1000
	approx(t, "idle", s.CPU.Idle, 20)
	approx(t, "iowait", s.CPU.IOWait, 15)
	approx(t, "steal", s.CPU.Steal, 0)
}

// Reading the CPU line costs no allocation per interval: procfs's parse of the whole
// /proc/stat took hundreds, an eighth of what the sampler cost at 100 ms.
func TestCPUCollectDoesNotAllocate(t *testing.T) {
	c, err := NewCPU("/proc")
	if err != nil {
		t.Fatal(err)
	}
	var s Sample
	if err := c.Collect(context.Background(), &s); err != nil {
		t.Fatal(err)
	}
	allocs := testing.AllocsPerRun(20, func() {
		if err := c.Collect(context.Background(), &s); err != nil {
			t.Fatal(err)
		}
	})
	if allocs > 1 {
		t.Errorf("a CPU sample takes %.0f allocations, want at most 1", allocs)
	}
}

func TestMemoryFromMeminfo(t *testing.T) {
	p := newProcFixture(t)
	p.write("meminfo", `MemTotal:       16000000 kB
MemFree:         1000000 kB
MemAvailable:   10000000 kB
Buffers:          200000 kB
Cached:          8000000 kB
SwapCached:            0 kB
Dirty:             40000 kB
Writeback:          1000 kB
`)
	c, err := NewMemory(p.root)
	if err != nil {
		t.Fatal(err)
	}
	var s Sample
	if err := c.Collect(context.Background(), &s); err != nil {
		t.Fatal(err)
	}
	want := Memory{Total: 16000000 * 1024, Used: 6000000 * 1024, Cache: 8200000 * 1024, Dirty: 40000 * 1024, Writeback: 1000 * 1024}
	if *s.Memory != want {
		t.Errorf("memory = %+v, want %+v", *s.Memory, want)
	}
}

// diskstats lines: major minor name, then fields 1-11 (and discard/flush fields).
const (
	diskstats0 = `   7       0 loop0 10 0 80 5 0 0 0 0 0 5 5 0 0 0 0 0 0
 254       0 vda 1000 10 8000 500 2000 20 32000 4294967000 0 3000 4294967200 0 0 0 0 0 0
 254       1 vda1 900 10 7200 450 1900 20 30400 4294966900 0 2900 4294967100 0 0 0 0 0 0
`
	// One second later: vda read 300 I/Os (2400 sectors, 150 ms), wrote 500 I/Os
	// (8000 sectors, 1296 ms across the 32-bit wrap of field 8), busy 800 ms, weighted
	// time 1296 ms across the wrap of field 11.
	diskstats1 = `   7       0 loop0 10 0 80 5 0 0 0 0 0 5 5 0 0 0 0 0 0
 254       0 vda 1300 10 10400 650 2500 20 40000 1000 2 3800 1200 0 0 0 0 0 0
 254       1 vda1 1200 10 9600 600 2400 20 38400 900 2 3700 1100 0 0 0 0 0 0
`
)

// The collector reports the whole disk only (the partition's I/O is inside it), with
// iostat's formulas, across the wrap of the 32-bit ms fields.
func TestDisksFromDiskstats(t *testing.T) {
	p := newProcFixture(t)
	sys := t.TempDir()
	vda := blockdev.BlockDevice{Name: "vda", Major: 254, Minor: 0}
	c, err := NewDisks(p.root, sys, []blockdev.BlockDevice{vda}, map[string][]string{"vda": {"data", "wal"}})
	if err != nil {
		t.Fatal(err)
	}
	at := time.Date(2026, 11, 21, 12, 0, 0, 0, time.UTC)
	c.(*diskCollector).now = func() time.Time { return at }
	p.write("diskstats", diskstats0)
	var s Sample
	if err := c.Collect(context.Background(), &s); err != nil {
		t.Fatal(err)
	}
	if len(s.Disks) != 0 {
		t.Fatal("the first collection only primes")
	}
	at = at.Add(2 * time.Second)
	p.write("diskstats", diskstats1)
	if err := c.Collect(context.Background(), &s); err != nil {
		t.Fatal(err)
	}
	if len(s.Disks) != 1 || s.Disks[0].Device != "vda" {
		t.Fatalf("disks = %+v, want vda only", s.Disks)
	}
	d := s.Disks[0]
	approx(t, "read IOPS", d.ReadIOPS, 150)              // 300 / 2 s
	approx(t, "write IOPS", d.WriteIOPS, 250)            // 500 / 2 s
	approx(t, "read MB/s", d.ReadMBps, 2400*512/2/1e6)   // 0.6144
	approx(t, "write MB/s", d.WriteMBps, 8000*512/2/1e6) // 2.048
	approx(t, "read await", d.ReadAwaitMs, 0.5)          // 150 ms / 300
	approx(t, "write await", d.WriteAwaitMs, 1296.0/500) // wrapped: 1000 + 2^32 - 4294967000
	approx(t, "queue", d.AvgQueue, 1296.0/2000)          // wrapped: 1200 + 2^32 - 4294967200
	approx(t, "busy", d.BusyPct, 40)                     // 800 ms of 2000
	if len(d.Roles) != 2 || d.Roles[0] != "data" || d.Roles[1] != "wal" {
		t.Errorf("roles = %v", d.Roles)
	}

	// A disk that disappears (unplugged, renumbered) is an error naming it.
	p.write("diskstats", "   7       0 loop0 10 0 80 5 0 0 0 0 0 5 5 0 0 0 0 0 0\n")
	if err := c.Collect(context.Background(), &s); err == nil {
		t.Error("a missing disk must be an error")
	}
}

func TestCounterDelta(t *testing.T) {
	for _, c := range []struct{ prev, cur, counter, ms uint64 }{
		{10, 15, 5, 5},
		{1<<32 - 10, 5, 0, 15}, // a 32-bit ms field wrapped; a 64-bit counter was reset
		{1 << 40, 5, 0, 0},     // went back from above 32 bits: reset, count nothing
		{7, 7, 0, 0},
	} {
		if got := counterDelta(c.prev, c.cur); got != c.counter {
			t.Errorf("counterDelta(%d, %d) = %d, want %d", c.prev, c.cur, got, c.counter)
		}
		if got := msDelta(c.prev, c.cur); got != c.ms {
			t.Errorf("msDelta(%d, %d) = %d, want %d", c.prev, c.cur, got, c.ms)
		}
	}
}

// A window's await is its total I/O time over its total I/Os, not the mean of the
// intervals' awaits; its rates are totals over its time; samples outside it do not count.
func TestSummarizeFromSums(t *testing.T) {
	disk := func(ios, ms uint64) []Disk {
		return []Disk{diskFigures("vda", []string{"data"}, DiskCounters{WriteIOs: ios, WriteMs: ms, WriteSectors: ios * 8}, 1)}
	}
	samples := []Sample{
		{T: 0, Seconds: 1, Disks: disk(999, 999)},   // ramp-up: (-1, 0]
		{T: 1, Seconds: 1, Disks: disk(100, 100)},   // 1 ms per write
		{T: 2, Seconds: 1, Disks: disk(900, 9000)},  // 10 ms per write
		{T: 2.01, Seconds: 0.01, Disks: disk(5, 5)}, // after the window: midpoint 2.005
	}
	s := Summarize(samples, 0, 2)
	if s.Samples != 2 || len(s.Disks) != 1 {
		t.Fatalf("summary = %+v", s)
	}
	approx(t, "await", s.Disks[0].WriteAwaitMs, 9100.0/1000) // not (1 + 10) / 2
	approx(t, "IOPS", s.Disks[0].WriteIOPS, 500)
}
