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
	"strings"
	"time"

	"github.com/prometheus/procfs"

	"github.com/storbench/storbench/internal/engine"
	"github.com/storbench/storbench/internal/procrole"
)

// Server is a database server on this host whose processes' I/O is sampled by role.
type Server struct {
	// Name tells servers apart in the figures (consolidated instances); "" for the
	// only one.
	Name  string
	Roles engine.ProcessRoles
	// Processes lists the server's processes now (a managed instance's cgroup); when
	// nil, Main and its descendants are sampled.
	Processes func() ([]int, error)
	Main      int
}

// RoleIO is what one role's processes (or threads) of a server read from and wrote
// to storage over an interval, or, for the rows of no server (hostRoles), what the
// kernel's threads and other processes did to the sampled disks.
//
// Source "block" counts the bytes of each request the block layer got for the
// sampled disks, by the task that submitted it (blocktask.go): reads and writes
// that add up, over every row, to what the disks did. Source "proc" is /proc/PID/io
// read_bytes, the bytes the role's tasks made the kernel fetch from storage: reads
// only, as its write_bytes counts pages dirtied, many times what reaches the disks
// on Linux 6.18 (a role's writes are then the database's own counts, Database.Writes).
type RoleIO struct {
	Server string `json:"server,omitempty"`
	Role   string `json:"role"`
	Source string `json:"source"`
	// Tasks is how many processes (threads, for a server told apart by threads) held
	// the role at the interval's end; for a row of no server, how many tasks did I/O.
	Tasks int `json:"tasks"`
	// ReadMBps and WriteMBps are 10^6 bytes per second; absent in an interval whose
	// trace came late (its bytes count in the next one) and, for WriteMBps, with
	// source "proc".
	ReadMBps  *float64 `json:"read_mb_s,omitempty"`
	WriteMBps *float64 `json:"write_mb_s,omitempty"`
	// IODelayPct is the time the role's tasks waited for block I/O (delay accounting,
	// /proc/PID/stat field 42), summed over them, in % of the interval: 300 is three
	// tasks waiting all along. Absent where the kernel does not account it.
	IODelayPct *float64 `json:"io_delay_pct,omitempty"`
	delta      roleCounters
	// byteSeconds is the span of the bytes (the tracer's, with source "block"),
	// seconds the interval's, over which the delay counts.
	byteSeconds, seconds float64
}

// roleCounters are an interval's bytes and delay-accounting ticks (USER_HZ).
type roleCounters struct{ read, write, delay uint64 }

func (c roleCounters) plus(o roleCounters) roleCounters {
	return roleCounters{c.read + o.read, c.write + o.write, c.delay + o.delay}
}

// userHZ is the unit of /proc/PID/stat's times, the same on every Linux.
const userHZ = 100

// Sources of the roles' bytes (RoleIO.Source).
const (
	sourceBlock = "block"
	sourceProc  = "proc"
)

// roleFigures fills r's rates from its counters: bytes over byteSeconds (none when
// 0), writes only with source "block", the delay over seconds when accounted.
func roleFigures(r RoleIO, d roleCounters, byteSeconds, seconds float64, delay bool) RoleIO {
	r.delta, r.byteSeconds, r.seconds = d, byteSeconds, seconds
	if byteSeconds > 0 {
		read := float64(d.read) / byteSeconds / 1e6
		r.ReadMBps = &read
		if r.Source == sourceBlock {
			write := float64(d.write) / byteSeconds / 1e6
			r.WriteMBps = &write
		}
	}
	if delay && seconds > 0 {
		pct := 100 * float64(d.delay) / userHZ / seconds
		r.IODelayPct = &pct
	}
	return r
}

// RoleTotal is one role's I/O over a window.
type RoleTotal struct {
	Server   string  `json:"server,omitempty"`
	Role     string  `json:"role"`
	Source   string  `json:"source"`
	ReadMB   float64 `json:"read_mb"` // 10^6 bytes
	ReadMBps float64 `json:"read_mb_s"`
	// WriteMB and WriteMBps are there with source "block" only.
	WriteMB   *float64 `json:"write_mb,omitempty"`
	WriteMBps *float64 `json:"write_mb_s,omitempty"`
	// ReadPctOfDisks and WritePctOfDisks are the role's share of what the sampled
	// disks read and wrote over the window (every process's, and the kernel's
	// writeback); absent without disk figures or when a disk did none.
	ReadPctOfDisks  *float64 `json:"read_pct_of_disks,omitempty"`
	WritePctOfDisks *float64 `json:"write_pct_of_disks,omitempty"`
	IODelayPct      *float64 `json:"io_delay_pct,omitempty"`
}

// The labels of the figures in the result, by source.
const (
	processDelaySource = "io_delay_pct from /proc/PID/stat field 42 (delayacct_blkio_ticks) where the kernel accounts it"
	blockRoleSource    = "the block layer (bpftrace on block:block_bio_queue, in the context of the task that submits each request): the bytes read and written on the sampled disks by each task, summed per role of the server's processes (threads for a server told apart by thread names), a child that came and went between samples under the clients; the rest are rows of their own: " + procrole.KernelWriteback + " (kworker threads, above all the flusher writing back pages any process dirtied: a checkpointer's pages written back by the flusher count there, not under the checkpointer), " + procrole.Journal + " (jbd2), " + procrole.KernelOther + ", " + procrole.OtherProcesses + "; all rows add up to what the disks read and wrote; " + processDelaySource
	procRoleSource     = "/proc/PID/io read_bytes (fetched from storage) of every server process (threads for a server told apart by thread names: /proc/PID/task/TID/io), summed per role; no writes by role from it (its write_bytes counts pages dirtied, on Linux 6.18 many times what reaches the disks): see the database's writes by role; an exited process's reads are kept: its last reading, and the rest from its parent's counters, which the kernel adds it to when it is reaped; " + processDelaySource
)

// processCollector samples the I/O of each server's processes by role.
type processCollector struct {
	fs      procfs.FS
	servers []*serverState
	delay   bool
	// byBlock takes the bytes from the tracer's count by task (Sample.blockIO)
	// rather than from /proc/PID/io.
	byBlock bool
	clock
	prevAt time.Time
	primed bool
}

// serverState is what the collector remembers of one server between intervals.
type serverState struct {
	Server
	files *procFiles
	// stats are each process's /proc/PID/stat as first read: its parent and start
	// time do not change while its files stay open, so with delay accounting off
	// (nothing else in the file is used) it is read once, not every interval, which
	// at thousands of backends halves what sampling them costs.
	stats map[int]procStat
	// threadStats are, for a server told apart by threads, each thread's name and
	// start time, read once as stats are (a thread's files are not kept open: a server
	// of 5,000 connections has 5,000 threads; the kernel does not reuse a thread id
	// until its ids wrap at pid_max, so a listed id is the thread first seen with it).
	// Through procfs (stat and io of every thread, parsed with fmt, every interval) an
	// interval of 2,000 threads took 68-76 ms of CPU; so, 25-26 ms
	// (BenchmarkThreadsCollect).
	threadStats map[[2]int]threadStat
	threadSeen  map[[2]int]bool
	tasks       map[taskID]*taskState
	// roleOfTID is the role of each task (thread id; a process's own for a server
	// told apart by processes) seen this interval, prevRoleOfTID the previous
	// interval's: the tracer's bytes of a task that ended since count under it.
	roleOfTID, prevRoleOfTID map[int]string
	// procs are the server's processes listed this interval.
	procs map[int]bool
	// gone holds, per process whose exited threads or reaped children count in its
	// own /proc/PID/io (thread mode: every process; process mode: the parents), its
	// counters minus its live threads': the I/O of the tasks that ended.
	gone map[taskID]ioCounters
}

// threadStat is what the collector uses of a thread's /proc/PID/task/TID/stat.
type threadStat struct {
	name         string
	start, delay uint64
}

// threadStat returns thread tid of process pid's name and start time, read once, and
// its block I/O delay, read every interval when delay accounting is on.
func (sv *serverState) threadStat(pid, tid int, delay bool) (threadStat, error) {
	key := [2]int{pid, tid}
	sv.threadSeen[key] = true
	ts, known := sv.threadStats[key]
	if known && !delay {
		return ts, nil
	}
	b, err := sv.files.readThread(pid, tid, "stat")
	if err != nil {
		return threadStat{}, err
	}
	st, err := parseStat(b)
	if err != nil {
		return threadStat{}, fmt.Errorf("thread %d of process %d: %w", tid, pid, err)
	}
	ts = threadStat{name: statName(b), start: st.start, delay: st.delay}
	sv.threadStats[key] = ts
	return ts, nil
}

// taskID is a process or thread; its start time tells a reused id apart.
type taskID struct {
	pid, tid int
	start    uint64
}

type ioCounters struct{ read, write uint64 }

func (c ioCounters) minus(p ioCounters) ioCounters {
	return ioCounters{counterDelta(p.read, c.read), counterDelta(p.write, c.write)}
}

func (c ioCounters) plus(o ioCounters) ioCounters {
	return ioCounters{c.read + o.read, c.write + o.write}
}

type taskState struct {
	role  string
	final bool
	io    ioCounters
	delay uint64
	seen  bool
}

// NewProcesses samples the servers' processes from procRoot; byBlock takes their
// bytes from the tracer collected before it (StartIOLatency byTask), which must be
// running. The kernel accounts block I/O delay per task only with
// kernel.task_delayacct on (off by default since Linux 5.14); the note says so when
// it is off.
func NewProcesses(procRoot string, servers []Server, byBlock bool) (Collector, string, error) {
	fs, err := procfs.NewFS(procRoot)
	if err != nil {
		return nil, "", err
	}
	c := &processCollector{fs: fs, delay: true, byBlock: byBlock}
	for _, s := range servers {
		if s.Roles == nil || (s.Processes == nil && s.Main <= 0) {
			return nil, "", fmt.Errorf("server %q: no roles or no processes to sample", s.Name)
		}
		c.servers = append(c.servers, &serverState{Server: s, files: newProcFiles(procRoot), stats: map[int]procStat{},
			threadStats: map[[2]int]threadStat{}, threadSeen: map[[2]int]bool{}, tasks: map[taskID]*taskState{}, gone: map[taskID]ioCounters{},
			roleOfTID: map[int]string{}, prevRoleOfTID: map[int]string{}, procs: map[int]bool{}})
	}
	note := ""
	if b, err := os.ReadFile(filepath.Join(procRoot, "sys/kernel/task_delayacct")); err == nil && strings.TrimSpace(string(b)) == "0" {
		c.delay = false
		note = "no I/O wait per role: the kernel's delay accounting is off (sysctl kernel.task_delayacct=1 turns it on)"
	}
	return c, note, nil
}

func (c *processCollector) Collect(_ context.Context, s *Sample) error {
	now := c.clock.read()
	seconds := now.Sub(c.prevAt).Seconds()
	var errs []error
	type collected struct {
		sv    *serverState
		sums  map[string]roleCounters
		tasks map[string]int
	}
	var servers []collected
	for _, sv := range c.servers {
		sums, tasks, err := sv.collect(c.fs, c.primed, c.delay)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		servers = append(servers, collected{sv, sums, tasks})
	}
	primed := c.primed
	c.prevAt, c.primed = now, true
	if !primed {
		return errors.Join(errs...)
	}
	if !c.byBlock {
		for _, v := range servers {
			for _, role := range v.sv.Roles.Roles() {
				r := RoleIO{Server: v.sv.Name, Role: role, Source: sourceProc, Tasks: v.tasks[role]}
				s.ProcessIO = append(s.ProcessIO, roleFigures(r, v.sums[role], seconds, seconds, c.delay))
			}
		}
		return errors.Join(errs...)
	}
	// The bytes of each task the tracer saw, by server and role, the rest by host
	// row; with no trace this interval (late), no bytes: they count in the next.
	byteSeconds := 0.0
	counted := map[roleKey]roleCounters{}
	hostTasks := map[string]map[int]bool{}
	if b := s.blockIO; b != nil {
		byteSeconds = b.seconds
		for k, n := range b.bytes {
			key := roleKey{role: ""}
			for _, v := range servers {
				if role, ok := v.sv.blockRole(k); ok {
					key = roleKey{v.sv.Name, role}
					break
				}
			}
			if key.role == "" {
				key.role = hostRole(k)
				if hostTasks[key.role] == nil {
					hostTasks[key.role] = map[int]bool{}
				}
				hostTasks[key.role][k.tid] = true
			}
			d := roleCounters{read: n}
			if k.write {
				d = roleCounters{write: n}
			}
			counted[key] = counted[key].plus(d)
		}
	}
	for _, v := range servers {
		for _, role := range v.sv.Roles.Roles() {
			d := counted[roleKey{v.sv.Name, role}]
			d.delay = v.sums[role].delay
			r := RoleIO{Server: v.sv.Name, Role: role, Source: sourceBlock, Tasks: v.tasks[role]}
			s.ProcessIO = append(s.ProcessIO, roleFigures(r, d, byteSeconds, seconds, c.delay))
		}
	}
	for _, role := range hostRoles {
		r := RoleIO{Role: role, Source: sourceBlock, Tasks: len(hostTasks[role])}
		s.ProcessIO = append(s.ProcessIO, roleFigures(r, counted[roleKey{role: role}], byteSeconds, seconds, false))
	}
	return errors.Join(errs...)
}

// blockRole is the role a task the tracer saw counts under, if it is the server's:
// one seen this interval or the previous; for a server told apart by threads, a
// thread of its process by its name; otherwise a thread of one of its processes by
// that process's role, and a child of one of them that began and ended between two
// samples under the clients' role (engine.ProcessRoles).
func (sv *serverState) blockRole(k taskIOKey) (string, bool) {
	if r, ok := sv.seenRole(k.tid); ok {
		return r, true
	}
	if sv.Roles.ByThread() {
		if !sv.procs[k.pid] {
			return "", false
		}
		r, _ := sv.Roles.Role(k.comm)
		return sv.role(r), true
	}
	if r, ok := sv.seenRole(k.pid); ok {
		return r, true
	}
	if sv.procs[k.ppid] {
		return sv.Roles.Roles()[0], true
	}
	return "", false
}

// seenRole is the role of task tid seen this interval or the previous one.
func (sv *serverState) seenRole(tid int) (string, bool) {
	if r, ok := sv.roleOfTID[tid]; ok {
		return r, true
	}
	r, ok := sv.prevRoleOfTID[tid]
	return r, ok
}

// Close closes the processes' files kept open.
func (c *processCollector) Close() error {
	for _, sv := range c.servers {
		for pid := range sv.files.open {
			sv.files.forget(pid)
		}
	}
	return nil
}

// collect reads every process of the server and returns each role's counters since
// the previous call and its tasks; the first call (not primed) only reads. A
// process's stat is read again only for its delay (delay accounting on).
func (sv *serverState) collect(fs procfs.FS, primed, delay bool) (map[string]roleCounters, map[string]int, error) {
	pids, err := sv.list()
	if err != nil {
		return nil, nil, err
	}
	sv.prevRoleOfTID, sv.roleOfTID = sv.roleOfTID, sv.prevRoleOfTID
	clear(sv.roleOfTID)
	clear(sv.procs)
	for _, pid := range pids {
		sv.procs[pid] = true
	}
	// First each process's stat, for the parents among them: their counters hold
	// their reaped children's.
	type proc struct {
		pid int
		st  procStat
	}
	procs := make([]proc, 0, len(pids))
	parents := map[int]bool{}
	for _, pid := range pids {
		st, known := sv.stats[pid]
		if !known || delay {
			b, err := sv.files.read(pid, "stat")
			if err != nil {
				continue // gone since listed
			}
			if st, err = parseStat(b); err != nil {
				return nil, nil, fmt.Errorf("process %d: %w", pid, err)
			}
			sv.stats[pid] = st
		}
		procs = append(procs, proc{pid, st})
		parents[st.ppid] = true
	}
	sums, tasks := map[string]roleCounters{}, map[string]int{}
	var goneNow ioCounters
	gone := map[taskID]ioCounters{}
	for _, p := range procs {
		b, err := sv.files.read(p.pid, "io")
		if err != nil {
			continue
		}
		whole, err := parseIO(b)
		if err != nil {
			return nil, nil, fmt.Errorf("process %d: %w", p.pid, err)
		}
		id := taskID{pid: p.pid, start: p.st.start}
		if !sv.Roles.ByThread() && !parents[p.pid] {
			sv.observe(id, func() string { return title(fs, p.pid) }, whole, p.st.delay, primed, sums, tasks)
			continue
		}
		tids, err := sv.files.threads(p.pid)
		if err != nil {
			continue
		}
		var live ioCounters
		for _, tid := range tids {
			var ts threadStat
			if sv.Roles.ByThread() {
				if ts, err = sv.threadStat(p.pid, tid, delay); err != nil {
					continue
				}
			}
			b, err := sv.files.readThread(p.pid, tid, "io")
			if err != nil {
				continue // ended since listed
			}
			own, err := parseIO(b)
			if err != nil {
				return nil, nil, fmt.Errorf("thread %d of process %d: %w", tid, p.pid, err)
			}
			live = live.plus(own)
			if sv.Roles.ByThread() {
				sv.observe(taskID{p.pid, tid, ts.start}, func() string { return ts.name }, own, ts.delay, primed, sums, tasks)
			}
		}
		if !sv.Roles.ByThread() {
			// A parent's own I/O is its threads'; the rest of its counters is its
			// children's, counted below when they end.
			sv.observe(id, func() string { return title(fs, p.pid) }, live, p.st.delay, primed, sums, tasks)
		}
		ended := whole.minus(live)
		if prev, ok := sv.gone[id]; ok {
			goneNow = goneNow.plus(ended.minus(prev))
		}
		gone[id] = ended
	}
	sv.gone = gone
	for key := range sv.threadStats {
		if !sv.threadSeen[key] { // ended
			delete(sv.threadStats, key)
		}
	}
	clear(sv.threadSeen)
	sv.files.closeUnread()
	for pid := range sv.stats {
		if len(sv.files.open[pid]) == 0 { // ended: its id may come back as another process's
			delete(sv.stats, pid)
		}
	}
	sv.ended(goneNow, sums)
	return sums, tasks, nil
}

// observe adds a live task's I/O since the previous interval to its role. A task
// first seen after the first interval did all its I/O since the previous one.
func (sv *serverState) observe(id taskID, name func() string, io ioCounters, delay uint64, primed bool, sums map[string]roleCounters, tasks map[string]int) {
	t := sv.tasks[id]
	if t == nil {
		t = &taskState{}
		if !primed {
			t.io, t.delay = io, delay
		}
		sv.tasks[id] = t
	}
	if !t.final {
		t.role, t.final = sv.Roles.Role(name())
	}
	role := sv.role(t.role)
	tid := id.tid
	if tid == 0 { // a process: its main thread's id is its own
		tid = id.pid
	}
	sv.roleOfTID[tid] = role
	d := io.minus(t.io)
	sums[role] = sums[role].plus(roleCounters{d.read, d.write, counterDelta(t.delay, delay)})
	tasks[role]++
	t.io, t.delay, t.seen = io, delay, true
}

// ended forgets the tasks not seen this interval, whose I/O up to their last reading
// is counted already; the rest of it (after that reading, until they ended) is in
// their parents' counters (goneNow: what those grew by), and is shared among the
// roles of the tasks that ended, by their number; when none of them was seen, the
// tasks began and ended within the interval: the clients' (the first role).
func (sv *serverState) ended(goneNow ioCounters, sums map[string]roleCounters) {
	var counted ioCounters
	endedRoles := map[string]int{}
	n := 0
	for id, t := range sv.tasks {
		if t.seen {
			t.seen = false
			continue
		}
		counted = counted.plus(t.io)
		endedRoles[sv.role(t.role)]++
		n++
		delete(sv.tasks, id)
	}
	rest := goneNow.minus(counted)
	if rest == (ioCounters{}) {
		return
	}
	roles := sv.Roles.Roles()
	if n == 0 {
		sums[roles[0]] = sums[roles[0]].plus(roleCounters{read: rest.read, write: rest.write})
		return
	}
	for role, k := range endedRoles {
		share := roleCounters{read: rest.read * uint64(k) / uint64(n), write: rest.write * uint64(k) / uint64(n)}
		sums[role] = sums[role].plus(share)
	}
}

// role is the role a task's I/O counts under: the last when it could not be told.
func (sv *serverState) role(r string) string {
	if r == "" {
		roles := sv.Roles.Roles()
		return roles[len(roles)-1]
	}
	return r
}

// title is a process's title, its command line as ps shows it ("" once it is gone).
func title(fs procfs.FS, pid int) string {
	p, err := fs.Proc(pid)
	if err != nil {
		return ""
	}
	args, err := p.CmdLine()
	if err != nil {
		return ""
	}
	return strings.Join(args, " ")
}

// list is the server's processes now: its cgroup's, or its main process and that
// process's descendants (each process's main thread's children, from /proc).
func (sv *serverState) list() ([]int, error) {
	if sv.Processes != nil {
		return sv.Processes()
	}
	out := []int{sv.Main}
	for i := 0; i < len(out); i++ {
		b, err := sv.files.read(out[i], "children")
		if err != nil && i == 0 {
			return nil, fmt.Errorf("the server's process %d is gone", sv.Main)
		}
		for _, f := range bytes.Fields(b) {
			if c, err := strconv.Atoi(string(f)); err == nil {
				out = append(out, c)
			}
		}
	}
	return out, nil
}

// procFiles re-reads processes' /proc files through descriptors kept open from one
// interval to the next: one pread each, as /proc generates a file afresh at offset
// 0. procfs opens, reads to EOF and closes (four system calls) and parses with fmt
// each time, which at 1 s with 200 backends cost 1.3% of a core. A descriptor stays
// its process's: once the process has ended its reads fail, even if its id was
// reused.
type procFiles struct {
	root    string
	open    map[int]map[string]*os.File
	readNow map[int]bool
	buf     []byte
	tids    []int // the last thread listing, reused
}

func newProcFiles(root string) *procFiles {
	return &procFiles{root: root, open: map[int]map[string]*os.File{}, readNow: map[int]bool{}, buf: make([]byte, 64<<10)}
}

// read returns the file of process pid ("stat", "io", or "children", its main
// thread's), valid until the next read.
func (f *procFiles) read(pid int, name string) ([]byte, error) {
	files := f.open[pid]
	if files == nil {
		files = map[string]*os.File{}
		f.open[pid] = files
	}
	file := files[name]
	if file == nil {
		p := strconv.Itoa(pid)
		path := filepath.Join(f.root, p, name)
		if name == "children" {
			path = filepath.Join(f.root, p, "task", p, name)
		}
		var err error
		if file, err = os.Open(path); err != nil {
			return nil, err
		}
		files[name] = file
	}
	f.readNow[pid] = true
	n, err := file.ReadAt(f.buf, 0)
	if err != nil && !errors.Is(err, io.EOF) {
		f.forget(pid)
		return nil, err
	}
	return f.buf[:n], nil
}

func (f *procFiles) forget(pid int) {
	for _, file := range f.open[pid] {
		file.Close()
	}
	delete(f.open, pid)
}

// closeUnread closes the files of the processes not read since the last call: they
// ended.
func (f *procFiles) closeUnread() {
	for pid := range f.open {
		if !f.readNow[pid] {
			f.forget(pid)
		}
	}
	clear(f.readNow)
}

// threads lists process pid's threads (/proc/PID/task).
func (f *procFiles) threads(pid int) ([]int, error) {
	d, err := os.Open(filepath.Join(f.root, strconv.Itoa(pid), "task"))
	if err != nil {
		return nil, err
	}
	defer d.Close()
	names, err := d.Readdirnames(-1)
	if err != nil {
		return nil, err
	}
	tids := f.tids[:0]
	for _, n := range names {
		if tid, err := strconv.Atoi(n); err == nil {
			tids = append(tids, tid)
		}
	}
	f.tids = tids
	return tids, nil
}

// readThread returns file name of thread tid of process pid, valid until the next
// read. Unlike a process's, a thread's file is opened, read and closed each time.
func (f *procFiles) readThread(pid, tid int, name string) ([]byte, error) {
	file, err := os.Open(filepath.Join(f.root, strconv.Itoa(pid), "task", strconv.Itoa(tid), name))
	if err != nil {
		return nil, err
	}
	defer file.Close()
	n, err := file.ReadAt(f.buf, 0)
	if err != nil && !errors.Is(err, io.EOF) {
		return nil, err
	}
	return f.buf[:n], nil
}

// statName is the name in parentheses of a /proc/PID/stat (comm).
func statName(b []byte) string {
	l, r := bytes.IndexByte(b, '('), bytes.LastIndexByte(b, ')')
	if l < 0 || r < l {
		return ""
	}
	return string(b[l+1 : r])
}

// procStat are the fields of /proc/PID/stat the collector uses.
type procStat struct {
	ppid         int
	start, delay uint64
}

// parseStat reads /proc/PID/stat: after the name in parentheses (which may hold
// spaces and parentheses), field 4 is the parent, 22 the start time, 42 the block
// I/O delay (proc(5)).
func parseStat(b []byte) (procStat, error) {
	r := bytes.LastIndexByte(b, ')')
	if r < 0 {
		return procStat{}, fmt.Errorf("unexpected /proc/PID/stat %q", b)
	}
	f := bytes.Fields(b[r+1:]) // f[0] is field 3
	if len(f) < 40 {
		return procStat{}, fmt.Errorf("/proc/PID/stat has %d fields, want 42 or more", len(f)+2)
	}
	ppid, err1 := strconv.Atoi(string(f[1]))
	start, err2 := strconv.ParseUint(string(f[19]), 10, 64)
	delay, err3 := strconv.ParseUint(string(f[39]), 10, 64)
	if err := errors.Join(err1, err2, err3); err != nil {
		return procStat{}, fmt.Errorf("/proc/PID/stat: %w", err)
	}
	return procStat{ppid, start, delay}, nil
}

// parseIO reads read_bytes and write_bytes of /proc/PID/io.
func parseIO(b []byte) (ioCounters, error) {
	var c ioCounters
	found := 0
	for line := range bytes.Lines(b) {
		name, v, ok := bytes.Cut(bytes.TrimSpace(line), []byte(": "))
		var dst *uint64
		switch {
		case !ok:
			continue
		case string(name) == "read_bytes":
			dst = &c.read
		case string(name) == "write_bytes":
			dst = &c.write
		default:
			continue
		}
		n, err := strconv.ParseUint(string(v), 10, 64)
		if err != nil {
			return c, fmt.Errorf("/proc/PID/io: %s: %w", name, err)
		}
		*dst = n
		found++
	}
	if found != 2 {
		return c, fmt.Errorf("/proc/PID/io lacks read_bytes or write_bytes: %q", b)
	}
	return c, nil
}

// LocalServer is db's server, which runs on this host, for sampling by role: its
// main process and that process's descendants.
func LocalServer(ctx context.Context, db engine.Database) (Server, error) {
	roles := engine.RolesOf(db.Engine())
	sp, ok := db.(engine.ServerProcess)
	if roles == nil || !ok {
		return Server{}, fmt.Errorf("%s runs in storbench's own process, not a server's", db.Engine())
	}
	pid, err := sp.ServerPID(ctx)
	if err != nil {
		return Server{}, err
	}
	return Server{Roles: roles, Main: pid}, nil
}
