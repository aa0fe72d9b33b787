package bottleneck

import (
	"cmp"
	"fmt"
	"slices"
	"strings"

	"github.com/storbench/storbench/internal/metrics"
)

// The thresholds, each with why (docs/bottlenecks.md shows what they were measured on).
const (
	// clientDemand: the driver ran, or waited to run, at least this share of its
	// client CPUs. Go's scheduler, the network poller and the GC take some of a CPU
	// the users' goroutines cannot use, so a driver that sets the pace does not show
	// 100%; the result already warns from 80% (driver.clientBound) that it may have.
	clientDemand = 0.90
	// clientWaitPct: the database's sessions spent this much of their active time
	// waiting for the client inside a transaction: the driver, not the server, was
	// slow to send the next statement.
	clientWaitPct = 50
	// hostFreePct: the host's CPUs were idle (iowait included: idle with I/O pending)
	// at most this share of the time. Above it a CPU was free most of the time; 10%
	// of two CPUs is a fifth of one, what the sampler, the kernel's threads and the
	// driver's bursts leave idle on a saturated box.
	hostFreePct = 10
	// instanceUsePct: a managed instance ran, or waited on a run queue to run, this
	// share of its cgroup's CPU limit (its cpuset's CPUs or its quota), or its quota
	// stopped it in this share of the periods: it wanted more CPU than it had. The
	// wait counts because on a shared host other processes take the instance's CPUs
	// and keep its use below the limit.
	instanceUsePct = 90
	// ioLimitPct: the data disk ran at this share of the instance's I/O throttle
	// (read or write, IOPS or MB/s): the throttle delays an I/O before it reaches the
	// disk, so neither the disk's busy time nor its await show it.
	ioLimitPct = 90
	// storageWaitPct / lockWaitPct: the client sessions spent this share of their
	// active time waiting on data-file I/O and the WAL, or on heavyweight and internal
	// locks. 40% is well above what a CPU-bound run shows (a few per cent) and leaves
	// room for the CPU time every transaction also needs.
	storageWaitPct = 40
	lockWaitPct    = 40
	// oversubscribedPct / diskBusyPct: an instance whose tasks ran or waited to run
	// at least this share of its CPU limit has its lock holders waiting for a CPU, so
	// its sessions' waits on the WAL (LWLock:WALWrite behind a descheduled writer)
	// and on data files measure the CPU's queue, not the storage, unless the storage
	// shows it too: its I/O throttle reached, or the data disk busy at least
	// diskBusyPct of the time. Measured: one CPU for 4 users on a RAM-backed disk,
	// 154-162% of the limit, 62-66% of active time on the WAL, the disk busy 24-33%.
	oversubscribedPct = 120
	diskBusyPct       = 50
	// cpuWaitPct: with wait shares, a CPU verdict also wants the sessions mostly on
	// CPU: a saturated host whose sessions wait on locks is not short of CPU.
	cpuWaitPct = 50
	// ioDelayPct: without wait shares, the client backends waited for block I/O
	// (delay accounting, per backend) at least this share of the window. Read
	// throttling and a slow disk both show here, where disk busy and await do not
	// show a cgroup's throttle (the I/O waits before it reaches the disk).
	ioDelayPct = 30
	// iowaitPct: without wait shares nor delay accounting, the host's CPUs were idle
	// with I/O pending at least this share of the time.
	iowaitPct = 30
)

// observed are a window's figures the rules read, each nil or NaN-free when known.
type observed struct {
	client Driver
	cpu    *metrics.CPU
	group  *metrics.GroupCPU
	waits  *metrics.RoleWaits
	// ioDelay is the clients' block I/O delay per user in % of the window (nil:
	// not accounted).
	ioDelay *float64
	// data is the data disk's figures (nil: none sampled).
	data *metrics.Disk
}

func observe(s *metrics.Summary, c Driver) observed {
	o := observed{client: c, cpu: s.CPU}
	for i := range s.GroupCPU {
		// Consolidated instances: the busiest group speaks for the server side.
		if g := &s.GroupCPU[i]; o.group == nil || use(g) > use(o.group) {
			o.group = g
		}
	}
	if w := s.Waits.Clients(); w != nil && w.Active() > 0 {
		o.waits = w
	}
	if len(s.ProcessIO) > 0 && s.ProcessIO[0].IODelayPct != nil && c.Users > 0 {
		d := *s.ProcessIO[0].IODelayPct / float64(c.Users)
		o.ioDelay = &d
	}
	// The data disk: the one the instance's I/O throttle names, else the first
	// that holds data (a loop device comes before the disk under its file), else
	// the WAL's.
	for _, role := range []string{"data", "wal"} {
		for i := range s.Disks {
			d := &s.Disks[i]
			if o.group != nil && o.group.IOLimit != nil && o.group.IOLimit.Device == d.Device {
				o.data = d
				return o
			}
			if o.data == nil && slices.Contains(d.Roles, role) {
				o.data = d
			}
		}
	}
	return o
}

// use is a group's CPU use and run-queue wait in % of its limit (0 without a limit).
func use(g *metrics.GroupCPU) float64 {
	if g.LimitCPUs <= 0 {
		return 0
	}
	return 100 * (g.UsedCPUs + g.WaitCPUs) / g.LimitCPUs
}

// atIOLimit is the data disk's rate in % of the instance's throttle, the highest of
// the four, and what it is; 0 without a throttle on that disk.
func (o observed) atIOLimit() (float64, string) {
	if o.group == nil || o.group.IOLimit == nil || o.data == nil || o.group.IOLimit.Device != o.data.Device {
		return 0, ""
	}
	l, d := o.group.IOLimit, o.data
	var pct float64
	var what string
	for _, r := range []struct {
		name        string
		rate, limit float64
	}{{"read IOPS", d.ReadIOPS, l.ReadIOPS}, {"write IOPS", d.WriteIOPS, l.WriteIOPS}, {"read MB/s", d.ReadMBps, l.ReadMBps}, {"write MB/s", d.WriteMBps, l.WriteMBps}} {
		if r.limit > 0 && 100*r.rate/r.limit > pct {
			pct, what = 100*r.rate/r.limit, fmt.Sprintf("%s, of the instance's limit of %g,", r.name, r.limit)
		}
	}
	return pct, what
}

// The figures the verdicts show, with their sources.
func demandFigure(c Driver) Figure {
	if c.Demand != nil {
		return Figure{"driver ran or waited for a CPU", 100 * *c.Demand, "%", fmt.Sprintf("client CPU time + run-queue wait ÷ (window × --client-cpus %d)", c.CPUs)}
	}
	return Figure{"driver CPU", 100 * c.Utilization, "%", fmt.Sprintf("client CPU time ÷ (window × --client-cpus %d)", c.CPUs)}
}

func waitFigure(name string, pct float64) Figure {
	return Figure{"backends waited on " + name, pct, "%", "wait events of the client sessions, % of their active time"}
}

func hostFigure(c *metrics.CPU) Figure {
	return Figure{"host CPU idle", c.Idle + c.IOWait, "%", "/proc/stat idle + iowait, all CPUs"}
}

func groupFigure(g *metrics.GroupCPU) Figure {
	return Figure{fmt.Sprintf("instance ran or waited to run, of its %g-CPU limit,", g.LimitCPUs), use(g), "%",
		"the instance's cgroup: (CPU time + its tasks' run-queue wait) ÷ limit"}
}

// rules applies the rules in order: the client first (a driver that sets the pace
// hides everything behind it), then what the wait shares say, then the host's and
// the cgroup's figures.
func rules(o observed) *Verdict {
	demand := o.client.Utilization
	if o.client.Demand != nil {
		demand = *o.client.Demand
	}
	if o.client.CPUs > 0 && demand >= clientDemand {
		return &Verdict{Kind: Client, Detail: "client (the driver)", Figures: o.with(clientFigure, waitClass(metrics.WaitClient), groupCPUFigure, cpuFigure)}
	}
	if o.client.quotaUse() >= 100*clientDemand {
		return &Verdict{Kind: Client, Detail: fmt.Sprintf("client (the driver, its cgroup's quota of %g CPU)", o.client.QuotaCPUs),
			Figures: o.with(quotaFigure, groupCPUFigure, cpuFigure)}
	}
	if o.waits != nil && o.waits.Pct(metrics.WaitClient) >= clientWaitPct {
		return &Verdict{Kind: Client, Detail: "client (the driver)", Figures: o.with(waitClass(metrics.WaitClient), clientFigure, groupCPUFigure, cpuFigure)}
	}
	cpuFull, cpuDetail, cpuFig := o.cpuSaturated()
	if o.waits != nil {
		return o.byWaits(cpuFull, cpuDetail, cpuFig)
	}
	// The instance's own limits first: a host busy with other work does not make
	// an instance that waits on its I/O throttle CPU-bound.
	if cpuFull && o.group != nil && o.group.Limited {
		return &Verdict{Kind: CPU, Detail: cpuDetail, Figures: o.with(cpuFig, cpuFigure)}
	}
	if pct, what := o.atIOLimit(); pct >= ioLimitPct {
		detail := "storage (writes at the instance's I/O limit)"
		if strings.HasPrefix(what, "read") {
			detail = "storage (reads at the instance's I/O limit)"
		}
		return &Verdict{Kind: Storage, Detail: detail, Figures: o.with(ioLimitFigure, groupCPUFigure, cpuFigure)}
	}
	if o.storageWithoutWaits() {
		return &Verdict{Kind: Storage, Detail: o.storageDetail(), Figures: o.with(ioFigure, diskFigure, cpuFigure)}
	}
	if cpuFull {
		return &Verdict{Kind: CPU, Detail: cpuDetail, Figures: o.with(cpuFig, groupCPUFigure, ioFigure)}
	}
	return &Verdict{Kind: Mixed, Detail: "mixed (no resource saturated)", Figures: o.with(cpuFigure, groupCPUFigure, ioFigure, diskFigure, clientFigure)}
}

// cpuSaturated tells whether the database had no more CPU: its cgroup at its limit,
// or the host's CPUs all busy.
func (o observed) cpuSaturated() (bool, string, figureOf) {
	if g := o.group; g != nil && g.LimitCPUs > 0 {
		throttled := g.ThrottledPct != nil && *g.ThrottledPct >= instanceUsePct
		if use(g) >= instanceUsePct || throttled {
			detail := "cpu (database host)"
			if g.Limited {
				detail = fmt.Sprintf("cpu (instance limit %g CPU)", g.LimitCPUs)
			}
			return true, detail, func(observed) (Figure, bool) { return groupFigure(g), true }
		}
	}
	if c := o.cpu; c != nil && c.Idle+c.IOWait <= hostFreePct {
		return true, "cpu (database host)", cpuFigure
	}
	return false, "", cpuFigure
}

// byWaits decides from the wait shares: the largest group of classes wins when past
// its threshold; the CPU's also needs the CPU saturated.
func (o observed) byWaits(cpuFull bool, cpuDetail string, cpuFig figureOf) *Verdict {
	w := o.waits
	storage := w.Pct(metrics.WaitDataIO) + w.Pct(metrics.WaitWAL)
	locks := w.Pct(metrics.WaitLock) + w.Pct(metrics.WaitLWLock)
	onCPU := w.Pct(metrics.WaitCPU)
	switch {
	case storage >= storageWaitPct && storage >= locks && storage >= onCPU && o.cpuQueued() && !o.storageShows():
		return &Verdict{Kind: CPU, Detail: cpuDetail + ", its waits on storage queued behind the CPU",
			Figures: o.with(groupCPUFigure, waitClass(metrics.WaitWAL), diskFigure)}
	case storage >= storageWaitPct && storage >= locks && storage >= onCPU:
		detail := "storage (reads)"
		first := waitClass(metrics.WaitDataIO)
		if w.Pct(metrics.WaitWAL) > w.Pct(metrics.WaitDataIO) {
			detail, first = "storage (WAL)", waitClass(metrics.WaitWAL)
		}
		return &Verdict{Kind: Storage, Detail: detail, Figures: o.with(first, diskFigure, cpuFig)}
	case locks >= lockWaitPct && locks >= onCPU:
		detail, first := "locks (rows)", waitClass(metrics.WaitLock)
		if w.Pct(metrics.WaitLWLock) > w.Pct(metrics.WaitLock) {
			detail, first = "locks (internal)", waitClass(metrics.WaitLWLock)
		}
		return &Verdict{Kind: Locks, Detail: detail, Figures: o.with(first, waitClass(metrics.WaitCPU), cpuFig)}
	case cpuFull && onCPU >= cpuWaitPct:
		return &Verdict{Kind: CPU, Detail: cpuDetail, Figures: o.with(cpuFig, waitClass(metrics.WaitCPU))}
	}
	// Nothing past its threshold: the two largest shares name the mix.
	type share struct {
		name string
		pct  float64
		fig  figureOf
	}
	shares := []share{{CPU, onCPU, waitClass(metrics.WaitCPU)}, {Storage, storage, waitClass(metrics.WaitDataIO)}, {Locks, locks, waitClass(metrics.WaitLock)},
		{Client, w.Pct(metrics.WaitClient), waitClass(metrics.WaitClient)}}
	slices.SortStableFunc(shares, func(a, b share) int { return cmp.Compare(b.pct, a.pct) })
	return &Verdict{Kind: Mixed, Detail: fmt.Sprintf("mixed (%s, %s)", shares[0].name, shares[1].name),
		Figures: o.with(shares[0].fig, shares[1].fig, cpuFig)}
}

// cpuQueued tells whether the instance's tasks wanted well more CPU than its limit.
func (o observed) cpuQueued() bool {
	return o.group != nil && o.group.Limited && use(o.group) >= oversubscribedPct
}

// storageShows tells whether the storage itself shows the load: the instance's I/O
// throttle reached, or the data disk busy.
func (o observed) storageShows() bool {
	if pct, _ := o.atIOLimit(); pct >= ioLimitPct {
		return true
	}
	return o.data != nil && o.data.BusyPct >= diskBusyPct
}

// storageWithoutWaits: the backends waited for block I/O (delay accounting), or,
// where that is not accounted, the host's CPUs idled waiting for I/O.
func (o observed) storageWithoutWaits() bool {
	if o.ioDelay != nil {
		return *o.ioDelay >= ioDelayPct
	}
	return o.cpu != nil && o.cpu.IOWait >= iowaitPct
}

// storageDetail says reads or writes from the data disk's time: reads' share of
// its I/O time.
func (o observed) storageDetail() string {
	d := o.data
	if d == nil {
		return "storage"
	}
	if d.ReadIOPS*d.ReadAwaitMs >= d.WriteIOPS*d.WriteAwaitMs {
		return "storage (reads)"
	}
	return "storage (writes)"
}

// figureOf gives a figure when the window has it.
type figureOf func(observed) (Figure, bool)

// with is the figures that are known, in order, each once, at most three.
func (o observed) with(figs ...figureOf) []Figure {
	var out []Figure
	for _, f := range figs {
		fig, ok := f(o)
		if ok && len(out) < 3 && !slices.ContainsFunc(out, func(g Figure) bool { return g.Name == fig.Name }) {
			out = append(out, fig)
		}
	}
	return out
}

func waitClass(class string) figureOf {
	names := map[string]string{metrics.WaitCPU: "CPU (no wait event)", metrics.WaitDataIO: "data-file I/O", metrics.WaitWAL: "the WAL",
		metrics.WaitLock: "row and table locks", metrics.WaitLWLock: "internal locks", metrics.WaitClient: "the client"}
	return func(o observed) (Figure, bool) {
		if o.waits == nil {
			return Figure{}, false
		}
		name := "on " + names[class]
		if class != metrics.WaitCPU {
			return waitFigure(names[class], o.waits.Pct(class)), true
		}
		return Figure{"backends " + name, o.waits.Pct(class), "%", "wait events of the client sessions, % of their active time"}, true
	}
}

func cpuFigure(o observed) (Figure, bool) {
	if o.cpu == nil {
		return Figure{}, false
	}
	return hostFigure(o.cpu), true
}

func ioFigure(o observed) (Figure, bool) {
	if o.ioDelay != nil {
		return Figure{"backends waited for block I/O", *o.ioDelay, "%", "/proc/PID/stat delayacct_blkio_ticks of the client backends, per user, % of the window"}, true
	}
	if o.cpu == nil {
		return Figure{}, false
	}
	return Figure{"host iowait", o.cpu.IOWait, "%", "/proc/stat iowait, all CPUs"}, true
}

func diskFigure(o observed) (Figure, bool) {
	d := o.data
	if d == nil {
		return Figure{}, false
	}
	if d.ReadIOPS*d.ReadAwaitMs >= d.WriteIOPS*d.WriteAwaitMs {
		return Figure{"data disk read await", d.ReadAwaitMs, "ms", "/proc/diskstats " + d.Device + ": read I/O time ÷ reads"}, true
	}
	return Figure{"data disk busy", d.BusyPct, "%", "/proc/diskstats " + d.Device + ": time with I/O in flight"}, true
}

func quotaFigure(o observed) (Figure, bool) {
	return Figure{fmt.Sprintf("driver CPU, of its cgroup's quota of %g CPU,", o.client.QuotaCPUs), o.client.quotaUse(), "%",
		"client CPU time ÷ (window × the quota of its cgroup: cpu.cfs_quota_us ÷ cpu.cfs_period_us, or cpu.max)"}, true
}

func groupCPUFigure(o observed) (Figure, bool) {
	if o.group == nil || o.group.LimitCPUs <= 0 {
		return Figure{}, false
	}
	return groupFigure(o.group), true
}

func ioLimitFigure(o observed) (Figure, bool) {
	pct, what := o.atIOLimit()
	if what == "" {
		return Figure{}, false
	}
	return Figure{"data disk " + what, pct, "%", "/proc/diskstats " + o.data.Device + " ÷ the instance's I/O throttle"}, true
}

func clientFigure(o observed) (Figure, bool) {
	if o.client.CPUs == 0 {
		return Figure{}, false
	}
	return demandFigure(o.client), true
}
