package metrics

import (
	"bytes"
	"context"
	_ "embed"
	"errors"
	"fmt"
	"maps"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"sync"
	"text/template"
	"time"

	"golang.org/x/sys/unix"

	"github.com/storbench/storbench/internal/blockdev"
	"github.com/storbench/storbench/internal/childproc"
)

//go:embed iolatency.bt
var ioLatencyScript string

var ioLatencyTemplate = template.Must(template.New("iolatency.bt").Parse(ioLatencyScript))

const (
	tracefsDir = "/sys/kernel/tracing"
	// attachTimeout bounds how long bpftrace may take to compile and attach: seconds
	// on a busy host, never this long unless something is wrong. 15 s was exceeded on
	// the 2-CPU test machine running the whole test suite, once the program also
	// counted bytes by issuing task.
	attachTimeout = 45 * time.Second
	// stopDelay is how long bpftrace gets to detach after SIGTERM before SIGKILL.
	stopDelay = 5 * time.Second
	// maxLineBytes bounds a stdout or stderr line kept while parsing; longer lines
	// are none of ours.
	maxLineBytes = 4096
)

// IOLatency traces block I/O latency of some disks with bpftrace, and, when asked,
// the bytes each task asks of them (blocktask.go).
type IOLatency struct {
	devices []blockdev.BlockDevice
	index   map[uint32]int // dev_t as the tracepoints print it → position in devices
	cmd     *exec.Cmd
	stop    context.CancelFunc
	exited  chan struct{} // closed once bpftrace has exited and its output is read
	ready   chan struct{} // closed at the first chunk: probes are attached and output flows

	out     lineSplitter // bpftrace's stdout, only touched by exec's copying goroutine
	errOut  lineSplitter // its stderr, likewise
	pending []histEntry  // the chunk being read
	// pendingTasks are the chunk's task entries.
	pendingTasks map[taskIOKey]uint64
	readyOnce    sync.Once

	mu sync.Mutex
	// counts are the cumulative counts as of the last complete chunk, chunks how
	// many chunks have completed; base and baseChunks are the same at the previous
	// Collect.
	counts map[histKey]uint64
	// tasks are the cumulative bytes by task as of the last complete chunk (nil
	// unless asked for), baseTasks the same at the previous delivery, which was at
	// baseAt.
	tasks     map[taskIOKey]uint64
	baseTasks map[taskIOKey]uint64
	baseAt    time.Time
	// keysMax is the bound of each of bpftrace's maps.
	keysMax int
	clock
	chunks uint64
	// chunked is closed (and replaced) whenever a chunk completes.
	chunked    chan struct{}
	chunkWait  time.Duration
	base       map[histKey]uint64
	baseChunks uint64
	primed     bool
	// firstErr and lastErr are bpftrace's first and latest stderr lines that say
	// something (it always complains about RLIMIT_MEMLOCK first, harmlessly).
	firstErr, lastErr string
	waitErr           error // what cmd.Wait returned
	exitErr           error // why bpftrace stopped unasked, until reported
	reported          bool
	closing           bool
}

type histKey struct {
	dev    uint32
	bucket int
}

type histEntry struct {
	key histKey
	n   uint64
}

// devT is a device number as the kernel's dev_t (MKDEV), which the block tracepoints
// carry: not the userspace encoding of stat(2).
func devT(d blockdev.BlockDevice) uint32 { return d.Major<<20 | d.Minor }

// chunkWait is how long Collect waits for the chunk it asked for: bpftrace prints
// within milliseconds, but on a busy host it may wait for a CPU. A chunk later than
// that counts in the next interval.
func chunkWait(interval time.Duration) time.Duration {
	return min(max(interval/2, 10*time.Millisecond), 250*time.Millisecond)
}

// taskKeys is room for this many tasks' keys (a task that reads and writes takes
// two): a run whose server starts more tasks that do I/O than that (a new
// connection per transaction) loses the bytes of the later ones, and says so.
const taskKeys = 16384

// chunkSignal asks bpftrace for a chunk (iolatency.bt): SIGCONT, as it does nothing
// to a process that is not stopped.
const chunkSignal = unix.SIGCONT

// ioLatencyProgram is the bpftrace program for devices, printing a chunk when
// process asker sends bpftrace chunkSignal.
func ioLatencyProgram(devices []blockdev.BlockDevice, asker int, byTask bool) (string, error) {
	params := struct {
		Devs          []uint32
		Asker, Signal int
		ByTask        bool
	}{Asker: asker, Signal: int(chunkSignal), ByTask: byTask}
	for _, d := range devices {
		params.Devs = append(params.Devs, devT(d))
	}
	var b strings.Builder
	if err := ioLatencyTemplate.Execute(&b, params); err != nil {
		return "", err
	}
	return b.String(), nil
}

// StartIOLatency starts bpftrace for devices; the error says why per-I/O latency is
// not available (not root, no bpftrace on PATH, tracefs cannot be mounted, bpftrace
// failed to attach: with its first stderr line) so the caller can print "per-I/O
// latency not available: <reason>". bpftrace runs until Close or until ctx is done.
//
// Devices must be request-based (blk-mq): a bio-based device such as device-mapper
// or md has no block_rq events of its own; its I/O shows on the disks beneath it.
//
// byTask also counts the bytes each task asks of the devices, which Collect hands to
// the process collector in the same sample.
func StartIOLatency(ctx context.Context, devices []blockdev.BlockDevice, interval time.Duration, byTask bool) (*IOLatency, error) {
	if len(devices) == 0 {
		return nil, errors.New("no block devices to trace")
	}
	if os.Geteuid() != 0 {
		return nil, errors.New("not root (bpftrace needs root)")
	}
	bpftrace, err := exec.LookPath("bpftrace")
	if err != nil {
		return nil, errors.New("no bpftrace on PATH")
	}
	if err := mountTracefs(); err != nil {
		return nil, err
	}
	prog, err := ioLatencyProgram(devices, os.Getpid(), byTask)
	if err != nil {
		return nil, err
	}

	l := newIOLatency(devices, chunkWait(interval))
	if byTask {
		l.tasks, l.baseTasks, l.pendingTasks = map[taskIOKey]uint64{}, map[taskIOKey]uint64{}, map[taskIOKey]uint64{}
	}
	run, stop := context.WithCancel(ctx)
	l.stop = stop
	// Line buffering: bpftrace buffers a pipe fully otherwise, and chunks would
	// arrive in bursts long after their time.
	// SIGTERM lets bpftrace detach its probes; after stopDelay it is killed.
	cmd := childproc.Command(run, stopDelay, bpftrace, "-B", "line", "-e", prog)
	// One histogram key per bucket per device (at most 64·16) plus the I/Os in
	// flight: bpftrace's default of 4096 keys per map is too few for many devices.
	// The same bound holds the tasks' keys, one per task, device and operation,
	// never removed: taskKeys more for them (a map's entries are allocated when it
	// is made: ~100 bytes each).
	// (BPFTRACE_MAP_KEYS_MAX until bpftrace 0.20, BPFTRACE_MAX_MAP_KEYS after.)
	l.keysMax = 4096 + 1024*len(devices)
	if byTask {
		l.keysMax += taskKeys
	}
	keys := strconv.Itoa(l.keysMax)
	cmd.Env = append(cmd.Env, "BPFTRACE_MAP_KEYS_MAX="+keys, "BPFTRACE_MAX_MAP_KEYS="+keys)
	cmd.Stdout = writerFunc(func(p []byte) { l.out.write(p, l.stdoutLine) })
	cmd.Stderr = writerFunc(func(p []byte) { l.errOut.write(p, l.stderrLine) })
	l.cmd = cmd
	if err := cmd.Start(); err != nil {
		l.stop()
		return nil, fmt.Errorf("cannot run bpftrace: %w", err)
	}
	go l.wait(ctx)

	// Ready at the first chunk rather than at bpftrace's "Attaching N probes": that
	// banner comes before the probes are attached, and the probe that prints the
	// chunks is attached after the block tracepoints. Asked for until it comes, as
	// bpftrace misses the signals sent before it attached.
	timer := time.NewTimer(attachTimeout)
	defer timer.Stop()
	ask := time.NewTicker(20 * time.Millisecond)
	defer ask.Stop()
	for {
		select {
		case <-ask.C:
			l.askChunk()
		case <-l.ready:
			return l, nil
		case <-l.exited:
			l.mu.Lock()
			defer l.mu.Unlock()
			return nil, fmt.Errorf("bpftrace failed to attach: %s", l.attachFailure())
		case <-timer.C:
			l.stop()
			<-l.exited
			l.mu.Lock()
			defer l.mu.Unlock()
			return nil, fmt.Errorf("bpftrace did not attach within %v: %s", attachTimeout, l.attachFailure())
		case <-ctx.Done():
			l.stop()
			<-l.exited
			return nil, ctx.Err()
		}
	}
}

// askChunk asks bpftrace to print a chunk; one that has exited is told apart by
// wait, so the error is of no use here.
func (l *IOLatency) askChunk() {
	_ = l.cmd.Process.Signal(chunkSignal)
}

func newIOLatency(devices []blockdev.BlockDevice, wait time.Duration) *IOLatency {
	l := &IOLatency{
		devices:   devices,
		index:     make(map[uint32]int, len(devices)),
		exited:    make(chan struct{}),
		ready:     make(chan struct{}),
		counts:    make(map[histKey]uint64),
		base:      make(map[histKey]uint64),
		chunked:   make(chan struct{}),
		chunkWait: wait,
	}
	for i, d := range devices {
		l.index[devT(d)] = i
	}
	return l
}

// mountTracefs makes sure the tracepoints' formats are where bpftrace looks for them.
func mountTracefs() error {
	if _, err := os.Stat(tracefsDir + "/events"); err == nil {
		return nil
	}
	if err := unix.Mount("nodev", tracefsDir, "tracefs", 0, ""); err != nil {
		return fmt.Errorf("tracefs cannot be mounted on %s: %w", tracefsDir, err)
	}
	return nil
}

// wait records why bpftrace exited, unless Close told it to.
func (l *IOLatency) wait(ctx context.Context) {
	err := l.cmd.Wait()
	l.mu.Lock()
	l.waitErr = err
	switch {
	case l.closing:
	case ctx.Err() != nil:
		l.exitErr = fmt.Errorf("bpftrace stopped: %w", ctx.Err())
	default:
		if err == nil {
			err = errors.New("exit status 0")
		}
		if l.lastErr != "" {
			err = fmt.Errorf("%w: %s", err, l.lastErr)
		}
		l.exitErr = fmt.Errorf("bpftrace stopped: %w", err)
	}
	l.mu.Unlock()
	l.stop()
	close(l.exited)
}

// attachFailure is why bpftrace did not start: what it said first, else how it
// ended. l.mu must be held.
func (l *IOLatency) attachFailure() string {
	switch {
	case l.firstErr != "":
		return l.firstErr
	case l.waitErr != nil:
		return l.waitErr.Error()
	}
	return "no message from bpftrace"
}

// stdoutLine takes one line of bpftrace's output: a histogram entry, a marker ending
// the chunk, or anything else (the "Attaching" banner, blank lines), which is ignored.
func (l *IOLatency) stdoutLine(line []byte) {
	if key, n, ok := parseHistLine(line); ok {
		l.pending = append(l.pending, histEntry{key, n})
		return
	}
	if key, sectors, ok := parseTaskLine(line); ok {
		if _, ours := l.index[key.dev]; ours && l.tasks != nil {
			l.pendingTasks[key] = sectors * SectorBytes
		}
		return
	}
	if !isMarker(line) {
		return
	}
	l.mu.Lock()
	for _, e := range l.pending {
		if _, ours := l.index[e.key.dev]; ours {
			l.counts[e.key] = e.n
		}
	}
	for k, n := range l.pendingTasks {
		l.tasks[k] = n
	}
	clear(l.pendingTasks)
	l.chunks++
	close(l.chunked)
	l.chunked = make(chan struct{})
	l.mu.Unlock()
	l.pending = l.pending[:0]
	l.readyOnce.Do(func() { close(l.ready) })
}

func (l *IOLatency) stderrLine(line []byte) {
	s := strings.TrimSpace(string(line))
	// bpftrace underlines the source of an error with tildes: not a message.
	if strings.Trim(s, "~ ") == "" || strings.Contains(s, "RLIMIT_MEMLOCK") {
		return
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	// Prefer the first error over warnings that bpftrace prints before it.
	if l.firstErr == "" || !strings.Contains(l.firstErr, "ERROR") && strings.Contains(s, "ERROR") {
		l.firstErr = s
	}
	l.lastErr = s
}

// Collect implements Collector: appends one Latency per device (a device with no I/O
// gets one with IOs 0) to s.Latency for the chunks received since the previous call,
// and, when counting by task, hands their bytes by task to the process collector.
// The first call only marks where the first interval starts. If bpftrace has stopped,
// one call says why and later ones add nothing; so do intervals in which no chunk
// arrived, rather than claiming that there was no I/O.
func (l *IOLatency) Collect(ctx context.Context, s *Sample) error {
	l.awaitChunk(ctx)
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.exitErr != nil {
		if l.reported {
			return nil
		}
		l.reported = true
		return l.exitErr
	}
	if !l.primed {
		l.primed = true
		maps.Copy(l.base, l.counts)
		maps.Copy(l.baseTasks, l.tasks)
		l.baseChunks, l.baseAt = l.chunks, l.clock.read()
		return nil
	}
	if l.chunks == l.baseChunks {
		return nil
	}
	if l.tasks != nil {
		now := l.clock.read()
		b := &blockTaskIO{bytes: map[taskIOKey]uint64{}, seconds: now.Sub(l.baseAt).Seconds()}
		for k, n := range l.tasks {
			if prev := l.baseTasks[k]; n > prev {
				b.bytes[k] = n - prev
				l.baseTasks[k] = n
			}
		}
		s.blockIO, l.baseAt = b, now
	}
	hists := make([]LatencyHistogram, len(l.devices))
	for i := range hists {
		hists[i] = make(LatencyHistogram)
	}
	for k, n := range l.counts {
		if prev := l.base[k]; n > prev {
			hists[l.index[k.dev]][k.bucket] += int64(n - prev)
			l.base[k] = n
		}
	}
	l.baseChunks = l.chunks
	for i, d := range l.devices {
		s.Latency = append(s.Latency, latencyFigures(d.Name, hists[i]))
	}
	return nil
}

// TasksFull says, once the count by task has run out of keys, that the bytes of the
// tasks that came later are not counted; "" until then.
func (l *IOLatency) TasksFull() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.tasks == nil || len(l.tasks) < l.keysMax {
		return ""
	}
	return fmt.Sprintf("the count of bytes by task filled bpftrace's %d keys: the bytes of tasks that began later are in no row, and the rows add up to less than the disks' I/O", l.keysMax)
}

// awaitChunk asks for a chunk and waits for it, at most l.chunkWait: one printed after
// the call covers every I/O completed before it (the last sample of a short backup
// has what its final sync wrote).
func (l *IOLatency) awaitChunk(ctx context.Context) {
	l.mu.Lock()
	next := l.chunked
	l.mu.Unlock()
	l.askChunk()
	timer := time.NewTimer(l.chunkWait)
	defer timer.Stop()
	select {
	case <-next:
	case <-l.exited:
	case <-timer.C:
	case <-ctx.Done():
	}
}

// Close stops bpftrace and waits for it.
func (l *IOLatency) Close() error {
	l.mu.Lock()
	l.closing = true
	l.mu.Unlock()
	l.stop()
	<-l.exited
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.exitErr != nil && !l.reported {
		l.reported = true
		return l.exitErr
	}
	return nil
}

// parseHistLine parses a histogram entry as bpftrace prints it, "@h[266338304, 251]: 1"
// (device, bucket, cumulative count), without allocating.
func parseHistLine(line []byte) (key histKey, n uint64, ok bool) {
	rest, ok := bytes.CutPrefix(line, []byte("@h["))
	if !ok {
		return key, 0, false
	}
	dev, rest, ok := cutUint(rest)
	if !ok || dev > 1<<32-1 {
		return key, 0, false
	}
	if rest, ok = bytes.CutPrefix(rest, []byte(", ")); !ok {
		return key, 0, false
	}
	bucket, rest, ok := cutUint(rest)
	if !ok || bucket >= 64*16 {
		return key, 0, false
	}
	if rest, ok = bytes.CutPrefix(rest, []byte("]: ")); !ok {
		return key, 0, false
	}
	if n, rest, ok = cutUint(rest); !ok || len(bytes.TrimSpace(rest)) != 0 {
		return key, 0, false
	}
	return histKey{uint32(dev), int(bucket)}, n, true
}

// isMarker tells the line that ends a chunk, "-- <nsecs>".
func isMarker(line []byte) bool {
	rest, ok := bytes.CutPrefix(line, []byte("-- "))
	if !ok {
		return false
	}
	_, rest, ok = cutUint(rest)
	return ok && len(bytes.TrimSpace(rest)) == 0
}

// cutUint parses the decimal digits b starts with.
func cutUint(b []byte) (v uint64, rest []byte, ok bool) {
	i := 0
	for ; i < len(b) && b[i] >= '0' && b[i] <= '9'; i++ {
		d := uint64(b[i] - '0')
		if v > (1<<64-1-d)/10 {
			return 0, b, false
		}
		v = v*10 + d
	}
	return v, b[i:], i > 0
}

// lineSplitter cuts a stream into lines, keeping a partial one for the next write.
type lineSplitter struct {
	partial []byte
	skip    bool // the current line is too long to be ours: drop it up to its end
}

func (s *lineSplitter) write(p []byte, line func([]byte)) {
	for len(p) > 0 {
		i := bytes.IndexByte(p, '\n')
		if i < 0 {
			if !s.skip && len(s.partial)+len(p) <= maxLineBytes {
				s.partial = append(s.partial, p...)
			} else {
				s.partial, s.skip = s.partial[:0], true
			}
			return
		}
		switch {
		case s.skip:
		case len(s.partial) == 0:
			line(p[:i])
		case len(s.partial)+i <= maxLineBytes:
			s.partial = append(s.partial, p[:i]...)
			line(s.partial)
		}
		s.partial, s.skip = s.partial[:0], false
		p = p[i+1:]
	}
}

// writerFunc lets exec copy bpftrace's output straight into the parser; unlike
// StdoutPipe, Wait then returns only once everything has been read.
type writerFunc func([]byte)

func (f writerFunc) Write(p []byte) (int, error) {
	f(p)
	return len(p), nil
}
