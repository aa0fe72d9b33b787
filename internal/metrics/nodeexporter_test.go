package metrics

import (
	"context"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/prometheus/procfs"
	"github.com/storbench/storbench/internal/input"
	"golang.org/x/sys/unix"
)

// fixtureExporter serves testdata scrapes as node_exporter would, and can be told to
// misbehave.
type fixtureExporter struct {
	*httptest.Server
	mu     sync.Mutex
	body   string
	status int
	ctype  string
	// hostClock, when set, is the host's clock offset from this machine's: each
	// answer ends with node_time_seconds read from it, as node_exporter's time
	// collector writes it.
	hostClock *time.Duration
}

func newFixtureExporter(t *testing.T) *fixtureExporter {
	t.Helper()
	f := &fixtureExporter{status: http.StatusOK, ctype: "text/plain; version=0.0.4; charset=utf-8"}
	f.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/metrics" {
			http.NotFound(w, r)
			return
		}
		f.mu.Lock()
		body, status, ctype, offset := f.body, f.status, f.ctype, f.hostClock
		f.mu.Unlock()
		if offset != nil {
			body += nodeTimeLines(time.Now().Add(*offset))
		}
		w.Header().Set("Content-Type", ctype)
		w.WriteHeader(status)
		fmt.Fprint(w, body)
	}))
	t.Cleanup(f.Close)
	return f
}

// serve makes the exporter answer with testdata/nodeexporter/name, or with text
// itself when name is not a file name.
func (f *fixtureExporter) serve(t *testing.T, name string) {
	t.Helper()
	body := name
	if strings.HasSuffix(name, ".prom") {
		b, err := os.ReadFile(filepath.Join("testdata", "nodeexporter", name))
		if err != nil {
			t.Fatal(err)
		}
		body = string(b)
	}
	f.answer(http.StatusOK, "text/plain; version=0.0.4; charset=utf-8", body)
}

// setHostClock makes the answers carry node_time_seconds offset from this machine's
// clock.
func (f *fixtureExporter) setHostClock(offset time.Duration) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.hostClock = &offset
}

// nodeTimeLines is node_time_seconds as node_exporter 1.5.0's time collector writes it
// (captured from Debian's prometheus-node-exporter), at t.
func nodeTimeLines(t time.Time) string {
	return "# HELP node_time_seconds System time in seconds since epoch (1970).\n# TYPE node_time_seconds gauge\n" +
		"node_time_seconds " + strconv.FormatFloat(float64(t.UnixNano())/1e9, 'g', -1, 64) + "\n"
}

func (f *fixtureExporter) answer(status int, ctype, body string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.status, f.ctype, f.body = status, ctype, body
}

// fakeClock gives the collector scrape times the test chooses, so rates are exact.
type fakeClock struct{ t time.Time }

func (c *fakeClock) now() time.Time          { return c.t }
func (c *fakeClock) advance(d time.Duration) { c.t = c.t.Add(d) }

func newTestNodeExporter(t *testing.T, url string, devices map[string][]string) (*NodeExporter, *fakeClock) {
	t.Helper()
	n, err := NewNodeExporter(url, devices, nil)
	if err != nil {
		t.Fatal(err)
	}
	clock := &fakeClock{t: time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)}
	n.now = clock.now
	return n, clock
}

// collectFixtures primes n with first.prom and returns the sample of an interval
// of gap ending with second.prom.
func collectFixtures(t *testing.T, f *fixtureExporter, n *NodeExporter, clock *fakeClock, gap time.Duration) Sample {
	t.Helper()
	f.serve(t, "first.prom")
	var prime Sample
	if err := n.Collect(context.Background(), &prime); err != nil {
		t.Fatal(err)
	}
	if prime.CPU != nil || prime.Memory != nil || prime.Disks != nil {
		t.Fatalf("first call filled the sample: %+v", prime)
	}
	clock.advance(gap)
	f.serve(t, "second.prom")
	var s Sample
	if err := n.Collect(context.Background(), &s); err != nil {
		t.Fatal(err)
	}
	return s
}

// The fixtures' deltas, summed over both CPUs: user 3, nice 1, system 1.5, irq 0.25,
// softirq 0.25, idle 12, iowait 1.5, steal 0.5 seconds, 20 in all (guest time, which
// also moved, must be ignored: it is already in user).
func checkFixtureCPU(t *testing.T, c *CPU) {
	t.Helper()
	if c == nil {
		t.Fatal("no CPU figures")
	}
	for _, f := range []struct {
		name      string
		got, want float64
	}{
		{"user", c.User, 100 * (3 + 1) / 20.0},
		{"system", c.System, 100 * (1.5 + 0.25 + 0.25) / 20.0},
		{"idle", c.Idle, 100 * 12 / 20.0},
		{"iowait", c.IOWait, 100 * 1.5 / 20.0},
		{"steal", c.Steal, 100 * 0.5 / 20.0},
		{"delta total", c.delta.total(), 20},
	} {
		if !near(f.got, f.want) {
			t.Errorf("CPU %s = %v, want %v", f.name, f.got, f.want)
		}
	}
}

// The second fixture's memory: MemTotal 25276502016, MemAvailable 24808611840,
// Cached 276992576 + Buffers 5111808, Dirty 20 MiB, Writeback 4096.
func checkFixtureMemory(t *testing.T, m *Memory) {
	t.Helper()
	want := Memory{Total: 25276502016, Used: 25276502016 - 24808611840, Cache: 276992576 + 5111808,
		Dirty: 20 << 20, Writeback: 4096}
	if m == nil || *m != want {
		t.Errorf("memory = %+v, want %+v", m, want)
	}
}

func checkNodeDisk(t *testing.T, got, want Disk, wantDelta DiskCounters) {
	t.Helper()
	if got.Device != want.Device || !slices.Equal(got.Roles, want.Roles) {
		t.Errorf("disk %s %v, want %s %v", got.Device, got.Roles, want.Device, want.Roles)
	}
	if got.delta != wantDelta {
		t.Errorf("%s counters delta = %+v, want %+v", want.Device, got.delta, wantDelta)
	}
	for _, f := range []struct {
		name      string
		got, want float64
	}{
		{"read IOPS", got.ReadIOPS, want.ReadIOPS}, {"write IOPS", got.WriteIOPS, want.WriteIOPS},
		{"read MB/s", got.ReadMBps, want.ReadMBps}, {"write MB/s", got.WriteMBps, want.WriteMBps},
		{"read await", got.ReadAwaitMs, want.ReadAwaitMs}, {"write await", got.WriteAwaitMs, want.WriteAwaitMs},
		{"avg queue", got.AvgQueue, want.AvgQueue}, {"busy %", got.BusyPct, want.BusyPct},
		{"seconds", got.seconds, want.seconds},
	} {
		if !near(f.got, f.want) {
			t.Errorf("%s %s = %v, want %v", want.Device, f.name, f.got, f.want)
		}
	}
}

// vda over 2 s: 200 reads of 819200 bytes taking 0.5 s, 1000 writes of 20 MiB taking
// 3 s, busy 1.2 s, weighted 4 s.
var (
	vdaDelta = DiskCounters{ReadIOs: 200, ReadSectors: 819200 / 512, ReadMs: 500, WriteIOs: 1000,
		WriteSectors: 20 << 20 / 512, WriteMs: 3000, BusyMs: 1200, QueueMs: 4000}
	vdaFigures = Disk{ReadIOPS: 100, WriteIOPS: 500, ReadMBps: 0.4096, WriteMBps: 10.48576, ReadAwaitMs: 2.5,
		WriteAwaitMs: 3, AvgQueue: 2, BusyPct: 60, seconds: 2}
)

func nodeDiskAs(d Disk, name string, roles ...string) Disk {
	d.Device, d.Roles = name, roles
	return d
}

func TestNodeExporterFigures(t *testing.T) {
	f := newFixtureExporter(t)
	// dm-0 is one the default selection skips: named, it is reported.
	n, clock := newTestNodeExporter(t, f.URL+"/metrics", map[string][]string{"vda": {"data", "wal"}, "dm-0": {"data"}})
	s := collectFixtures(t, f, n, clock, 2*time.Second)

	checkFixtureCPU(t, s.CPU)
	checkFixtureMemory(t, s.Memory)
	if s.Scrape == nil || s.Scrape.Seconds != 2 || s.Scrape.SkewMs != nil {
		t.Errorf("scrape = %+v, want a 2 s interval and no skew (the fixtures have no node_time_seconds)", s.Scrape)
	}
	if len(s.Disks) != 2 {
		t.Fatalf("disks = %+v, want dm-0 and vda", s.Disks)
	}
	// dm-0 over 2 s: 50 reads of 409600 bytes in 100 ms, 250 writes of 1024000 bytes
	// in 750 ms, busy 400 ms, weighted 850 ms.
	checkNodeDisk(t, s.Disks[0], Disk{Device: "dm-0", Roles: []string{"data"}, ReadIOPS: 25, WriteIOPS: 125,
		ReadMBps: 0.2048, WriteMBps: 0.512, ReadAwaitMs: 2, WriteAwaitMs: 3, AvgQueue: 0.425, BusyPct: 20, seconds: 2},
		DiskCounters{ReadIOs: 50, ReadSectors: 800, ReadMs: 100, WriteIOs: 250, WriteSectors: 2000, WriteMs: 750,
			BusyMs: 400, QueueMs: 850})
	checkNodeDisk(t, s.Disks[1], nodeDiskAs(vdaFigures, "vda", "data", "wal"), vdaDelta)
}

func TestNodeExporterDefaultDevices(t *testing.T) {
	f := newFixtureExporter(t)
	// No path: the collector must add node_exporter's /metrics.
	n, clock := newTestNodeExporter(t, f.URL, nil)
	s := collectFixtures(t, f, n, clock, 2*time.Second)

	checkFixtureCPU(t, s.CPU)
	checkFixtureMemory(t, s.Memory)
	// Of dm-0, loop0, sda, vda, vda1 and zram0 only the whole disks remain.
	var names []string
	for _, d := range s.Disks {
		names = append(names, d.Device)
	}
	if !slices.Equal(names, []string{"sda", "vda"}) {
		t.Fatalf("default devices = %v, want [sda vda]", names)
	}
	// sda's write time wrapped at 2^32 ms: 4294967000 → 704 is 1000 ms. 10 writes of
	// 40960 bytes, busy 100 ms, weighted 1000 ms over 2 s.
	checkNodeDisk(t, s.Disks[0], Disk{Device: "sda", Roles: []string{"host"}, WriteIOPS: 5, WriteMBps: 0.02048,
		WriteAwaitMs: 100, AvgQueue: 0.5, BusyPct: 5, seconds: 2},
		DiskCounters{WriteIOs: 10, WriteSectors: 80, WriteMs: 1000, BusyMs: 100, QueueMs: 1000})
	checkNodeDisk(t, s.Disks[1], nodeDiskAs(vdaFigures, "vda", "host"), vdaDelta)
}

func TestNodeExporterWholeDiskHeuristic(t *testing.T) {
	whole := []string{"sda", "sdp", "sdaa", "vda", "xvda", "hdc", "nvme0n1", "nvme10n2", "mmcblk0", "nbd0", "rbd0", "cciss!c0d0"}
	skipped := []string{"sda1", "sdaa12", "vda2", "xvda1", "hdc3", "nvme0n1p1", "nvme1n1p12", "mmcblk0p2", "nbd0p1",
		"cciss!c0d0p1", "loop0", "loop12", "ram0", "zram0", "sr0", "fd0", "dm-0", "dm-12", "md0", "md127"}
	for _, name := range whole {
		if !isWholeDisk(name) {
			t.Errorf("isWholeDisk(%q) = false, want true", name)
		}
	}
	for _, name := range skipped {
		if isWholeDisk(name) {
			t.Errorf("isWholeDisk(%q) = true, want false", name)
		}
	}
}

func TestNodeExporterMissingDevice(t *testing.T) {
	f := newFixtureExporter(t)
	n, _ := newTestNodeExporter(t, f.URL+"/metrics", map[string][]string{"vda": {"data"}, "nvme0n1": {"wal"}})
	f.serve(t, "first.prom")
	err := n.Collect(context.Background(), &Sample{})
	if err == nil {
		t.Fatal("no error for a device the exporter does not report")
	}
	for _, want := range []string{`"nvme0n1"`, "dm-0, loop0, sda, vda, vda1, zram0"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error %q does not name %s", err, want)
		}
	}
	if strings.Contains(err.Error(), `"vda"`) {
		t.Errorf("error %q names vda as missing", err)
	}
}

func TestNodeExporterBadURL(t *testing.T) {
	for _, u := range []string{"", "db-host:9100/metrics", "db-host", "ftp://db-host/metrics", "http://", "http:///metrics",
		"https://:9100/metrics", "http://db host/metrics", "ftp://scott:tiger@db-host/metrics"} {
		_, err := NewNodeExporter(u, nil, nil)
		if !errors.Is(err, input.ErrInvalid) {
			t.Errorf("NewNodeExporter(%q) = %v, want input.ErrInvalid", u, err)
			continue
		}
		if strings.Contains(err.Error(), "\n") || !strings.Contains(err.Error(), "e.g. http://") {
			t.Errorf("NewNodeExporter(%q): %q is not one line with an example", u, err)
		}
		if strings.Contains(err.Error(), "tiger") {
			t.Errorf("NewNodeExporter(%q): %q shows the password", u, err)
		}
	}
	for _, u := range []string{"http://db-host:9100/metrics", "https://db-host/metrics", "http://[::1]:9100", "HTTP://db-host:9100/"} {
		if _, err := NewNodeExporter(u, nil, nil); err != nil {
			t.Errorf("NewNodeExporter(%q): %v", u, err)
		}
	}
}

func TestNodeExporterBadResponses(t *testing.T) {
	first, err := os.ReadFile(filepath.Join("testdata", "nodeexporter", "first.prom"))
	if err != nil {
		t.Fatal(err)
	}
	var cpuOnly, noDisks []string
	for line := range strings.Lines(string(first)) {
		if strings.HasPrefix(line, "node_cpu_") {
			cpuOnly = append(cpuOnly, line)
		}
		if !strings.HasPrefix(line, "node_disk_") {
			noDisks = append(noDisks, line)
		}
	}
	for _, c := range []struct {
		name, path  string
		status      int
		ctype, body string
		want        []string
	}{
		{"not found", "/nope", http.StatusOK, "text/plain", "", []string{"404"}},
		{"server error", "/metrics", http.StatusInternalServerError, "text/plain", "collector failed\nmore", []string{"500", "collector failed"}},
		{"landing page", "/metrics", http.StatusOK, "text/html; charset=utf-8", "<html></html>", []string{"text/html", "e.g. http://"}},
		{"not metrics", "/metrics", http.StatusOK, "text/plain", "hello 1\nworld wide web\n", []string{"line 2"}},
		{"no meminfo", "/metrics", http.StatusOK, "text/plain", strings.Join(cpuOnly, ""), []string{"node_memory_MemTotal_bytes", "meminfo"}},
		{"no diskstats", "/metrics", http.StatusOK, "text/plain", strings.Join(noDisks, ""), []string{"node_disk_", "diskstats"}},
		{"no cpu", "/metrics", http.StatusOK, "text/plain", "node_memory_MemTotal_bytes 1\n", []string{"node_cpu_seconds_total", "cpu collector"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			f := newFixtureExporter(t)
			f.answer(c.status, c.ctype, c.body)
			n, _ := newTestNodeExporter(t, f.URL+c.path, nil)
			err := n.Collect(context.Background(), &Sample{})
			if err == nil {
				t.Fatal("no error")
			}
			for _, w := range c.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q lacks %q", err, w)
				}
			}
		})
	}
}

// A failed scrape must neither end the collector nor shorten the next interval.
func TestNodeExporterIntervalSpansFailedScrape(t *testing.T) {
	f := newFixtureExporter(t)
	n, clock := newTestNodeExporter(t, f.URL+"/metrics", map[string][]string{"vda": {"data", "wal"}})
	f.serve(t, "first.prom")
	if err := n.Collect(context.Background(), &Sample{}); err != nil {
		t.Fatal(err)
	}
	clock.advance(time.Second)
	f.answer(http.StatusServiceUnavailable, "text/plain", "busy")
	var failed Sample
	if err := n.Collect(context.Background(), &failed); err == nil || failed.CPU != nil || failed.Disks != nil {
		t.Fatalf("failed scrape: %v, %+v", err, failed)
	}
	clock.advance(time.Second)
	f.serve(t, "second.prom")
	var s Sample
	if err := n.Collect(context.Background(), &s); err != nil {
		t.Fatal(err)
	}
	checkFixtureCPU(t, s.CPU)
	if len(s.Disks) != 1 {
		t.Fatalf("disks = %+v", s.Disks)
	}
	checkNodeDisk(t, s.Disks[0], nodeDiskAs(vdaFigures, "vda", "data", "wal"), vdaDelta)
}

func TestNodeExporterScrapeTimeout(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { <-r.Context().Done() }))
	t.Cleanup(srv.Close)
	n, err := NewNodeExporter(srv.URL+"/metrics", nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
	defer cancel()
	start := time.Now()
	err = n.Collect(ctx, &Sample{})
	if !errors.Is(err, context.DeadlineExceeded) || time.Since(start) > 5*time.Second {
		t.Fatalf("Collect on a hung exporter = %v after %v, want the context's deadline", err, time.Since(start))
	}
}

func TestNodeExporterTextFormat(t *testing.T) {
	got, err := parseTextMetrics([]byte("# TYPE a counter\na{b=\"c\"} 2\n# TYPE g gauge\ng NaN\n"))
	if err != nil {
		t.Fatal(err)
	}
	if a := got["a"]; len(a) != 1 || a[0].value != 2 || a[0].labels["b"] != "c" {
		t.Errorf("a = %+v", a)
	}
	if g := got["g"]; len(g) != 1 || !math.IsNaN(g[0].value) {
		t.Errorf("g = %+v", g)
	}
	if _, err := parseTextMetrics([]byte("a 1\na{b=c} 1\n")); err == nil || !strings.Contains(err.Error(), "line 2") {
		t.Errorf("malformed line 2: error %v", err)
	}
	// The whole fixture, as node_exporter 1.5.0 writes it.
	b, err := os.ReadFile(filepath.Join("testdata", "nodeexporter", "first.prom"))
	if err != nil {
		t.Fatal(err)
	}
	got, err = parseTextMetrics(b)
	if err != nil {
		t.Fatal(err)
	}
	if n := len(got["node_cpu_seconds_total"]); n != 16 {
		t.Errorf("%d node_cpu_seconds_total samples, want 16", n)
	}
	if u := got["node_uname_info"]; len(u) != 1 || u[0].labels["nodename"] != `db "primary"\1` {
		t.Errorf("node_uname_info = %+v", u)
	}
}

func freeLoopbackPort(t *testing.T) int {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port
}

// startNodeExporter runs exe on a free loopback port until the test ends and returns
// its metrics URL. The port is free when chosen but could be taken before the
// exporter binds it, so an exporter that exits at once is tried again on another.
func startNodeExporter(t *testing.T, exe string) string {
	t.Helper()
retry:
	for attempt := 1; ; attempt++ {
		addr := fmt.Sprintf("127.0.0.1:%d", freeLoopbackPort(t))
		// Loop devices are the tests' own disks (ownDisk): not left out, as by default.
		cmd := exec.Command(exe, "--web.listen-address="+addr, "--collector.disable-defaults",
			"--collector.cpu", "--collector.diskstats", `--collector.diskstats.device-exclude=^(ram|fd)\d+$`,
			"--collector.meminfo", "--collector.time")
		var out strings.Builder
		cmd.Stdout, cmd.Stderr = &out, &out
		// Its own process group so the kill reaches all of it; Pdeathsig because a
		// test binary killed by -timeout or ^C runs no Cleanup.
		cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		exited := make(chan error, 1)
		go func() { exited <- cmd.Wait() }()
		stop := func() {
			_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
			<-exited
		}
		url := "http://" + addr + "/metrics"
		client := &http.Client{Timeout: time.Second}
		deadline := time.Now().Add(15 * time.Second)
		for {
			select {
			case err := <-exited:
				if attempt < 3 {
					t.Logf("node_exporter on %s exited (%v), trying another port: %s", addr, err, out.String())
					continue retry
				}
				t.Fatalf("node_exporter on %s exited: %v: %s", addr, err, out.String())
			default:
			}
			if resp, err := client.Get(url); err == nil {
				resp.Body.Close()
				if resp.StatusCode == http.StatusOK {
					t.Cleanup(stop)
					return url
				}
			}
			if time.Now().After(deadline) {
				stop()
				t.Fatalf("node_exporter on %s did not answer within 15 s: %s", addr, out.String())
			}
			time.Sleep(50 * time.Millisecond)
		}
	}
}

func procCPUTimes(t *testing.T) CPUTimes {
	t.Helper()
	fs, err := procfs.NewFS("/proc")
	if err != nil {
		t.Fatal(err)
	}
	st, err := fs.Stat()
	if err != nil {
		t.Fatal(err)
	}
	a := st.CPUTotal
	return CPUTimes{User: a.User, Nice: a.Nice, System: a.System, Idle: a.Idle, IOWait: a.Iowait,
		IRQ: a.IRQ, SoftIRQ: a.SoftIRQ, Steal: a.Steal}
}

const (
	ioTestBytes = 20 << 20
	ioTestReads = 64
)

// generateDiskIO writes ioTestBytes to dir's disk in four synced chunks, then reads
// 4 KiB blocks of it with O_DIRECT so that the reads reach the disk too; it returns
// how many reads it made (none where the file system refuses O_DIRECT).
func generateDiskIO(t *testing.T, dir string) int {
	t.Helper()
	path := filepath.Join(dir, "io")
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	// Random data: zeros could be elided by a compressing or thin device.
	chunk := make([]byte, ioTestBytes/4)
	r := rand.NewChaCha8([32]byte{1})
	_, _ = r.Read(chunk)
	for range 4 {
		if _, err := f.Write(chunk); err != nil {
			t.Fatal(err)
		}
		if err := f.Sync(); err != nil {
			t.Fatal(err)
		}
	}
	fd, err := unix.Open(path, unix.O_RDONLY|unix.O_DIRECT, 0)
	if err != nil {
		t.Logf("O_DIRECT refused (%v): no reads", err)
		return 0
	}
	defer unix.Close(fd)
	// O_DIRECT needs an aligned buffer: an anonymous mapping is page-aligned.
	buf, err := unix.Mmap(-1, 0, 4096, unix.PROT_READ|unix.PROT_WRITE, unix.MAP_ANON|unix.MAP_PRIVATE)
	if err != nil {
		t.Fatal(err)
	}
	defer unix.Munmap(buf)
	for i := range ioTestReads {
		if _, err := unix.Pread(fd, buf, int64(i)*ioTestBytes/ioTestReads); err != nil {
			t.Fatal(err)
		}
	}
	return ioTestReads
}

// TestNodeExporterRealExporter checks the figures derived from a real node_exporter
// against /proc read directly, around I/O the test makes on a disk of its own
// (ownDisk).
func TestNodeExporterRealExporter(t *testing.T) {
	const exe = "/usr/bin/prometheus-node-exporter"
	if _, err := os.Stat(exe); err != nil {
		t.Skipf("needs Debian's prometheus-node-exporter package: %v", err)
	}
	dir, disk := ownDisk(t, 64<<20)
	device := disk.Name
	url := startNodeExporter(t, exe)
	n, err := NewNodeExporter(url, map[string][]string{device: {"data"}}, nil)
	if err != nil {
		t.Fatal(err)
	}
	collect := func(s *Sample) {
		t.Helper()
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		if err := n.Collect(ctx, s); err != nil {
			t.Fatal(err)
		}
	}

	diskBefore, cpuBefore, start := procDiskCounters(t, device), procCPUTimes(t), time.Now()
	collect(&Sample{})
	ioStart := time.Now()
	reads := generateDiskIO(t, dir)
	ioTime := time.Since(ioStart)
	var s Sample
	collect(&s)
	diskAfter, cpuAfter, wall := procDiskCounters(t, device), procCPUTimes(t), time.Since(start)

	if len(s.Disks) != 1 || s.Disks[0].Device != device || !slices.Equal(s.Disks[0].Roles, []string{"data"}) {
		t.Fatalf("disks = %+v, want %s only", s.Disks, device)
	}
	d := s.Disks[0]
	proc := diskAfter.minus(diskBefore)
	t.Logf("%s over %.3f s (I/O took %v): exporter %+v; /proc/diskstats over %.3f s %+v", device, d.seconds, ioTime,
		d.delta, wall.Seconds(), proc)
	t.Logf("%s: %.1f read IOPS, %.1f write IOPS, %.2f read MB/s, %.2f write MB/s, await r %.2f w %.2f ms, queue %.2f, busy %.1f%%",
		device, d.ReadIOPS, d.WriteIOPS, d.ReadMBps, d.WriteMBps, d.ReadAwaitMs, d.WriteAwaitMs, d.AvgQueue, d.BusyPct)
	if d.seconds <= 0 || d.seconds > wall.Seconds() {
		t.Errorf("interval %.3f s, want within the %.3f s between the /proc readings", d.seconds, wall.Seconds())
	}
	// fsync returns once the device completed the writes, so all of them are in.
	if d.delta.WriteSectors < ioTestBytes/SectorBytes {
		t.Errorf("exporter saw %d sectors written, fewer than the test's %d", d.delta.WriteSectors, ioTestBytes/SectorBytes)
	}
	if diff := math.Abs(float64(d.delta.WriteSectors) - float64(proc.WriteSectors)); diff > 0.1*float64(proc.WriteSectors) {
		t.Errorf("exporter saw %d bytes written, /proc/diskstats %d: more than 10%% apart",
			d.delta.WriteSectors*SectorBytes, proc.WriteSectors*SectorBytes)
	}
	// The exporter's scrapes fall between the test's own readings.
	if d.delta.WriteIOs > proc.WriteIOs || d.delta.ReadIOs > proc.ReadIOs {
		t.Errorf("exporter counted more I/Os (%d reads, %d writes) than /proc/diskstats around it (%d, %d)",
			d.delta.ReadIOs, d.delta.WriteIOs, proc.ReadIOs, proc.WriteIOs)
	}
	if d.delta.ReadIOs < uint64(reads) {
		t.Errorf("exporter counted %d reads, fewer than the test's %d O_DIRECT reads", d.delta.ReadIOs, reads)
	}

	c := s.CPU
	if c == nil {
		t.Fatal("no CPU figures")
	}
	t.Logf("CPU: user %.1f%%, system %.1f%%, idle %.1f%%, iowait %.1f%%, steal %.1f%%; %.2f CPU-seconds, /proc/stat %.2f",
		c.User, c.System, c.Idle, c.IOWait, c.Steal, c.delta.total(), cpuAfter.minus(cpuBefore).total())
	if sum := c.User + c.System + c.Idle + c.IOWait + c.Steal; math.Abs(sum-100) > 1e-6 {
		t.Errorf("CPU shares add up to %v", sum)
	}
	// The same CPU time, give or take the scrapes' own duration and tick rounding.
	if got, want := c.delta.total(), cpuAfter.minus(cpuBefore).total(); got > want*1.05+0.05 || got < want*0.75-0.05 {
		t.Errorf("exporter counted %.2f CPU-seconds, /proc/stat %.2f around it", got, want)
	}

	m := s.Memory
	fs, err := procfs.NewFS("/proc")
	if err != nil {
		t.Fatal(err)
	}
	mi, err := fs.Meminfo()
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("memory: %+v", *m)
	if mi.MemTotalBytes == nil || m.Total != *mi.MemTotalBytes || m.Used == 0 || m.Used > m.Total || m.Cache == 0 {
		t.Errorf("memory %+v, /proc/meminfo MemTotal %v", *m, mi.MemTotalBytes)
	}
}

// newRemoteMonitor starts a Monitor on url as a study's controller would, or returns
// New's error.
func newRemoteMonitor(t *testing.T, url string, interval, maxSkew time.Duration) (*Monitor, error) {
	t.Helper()
	m, err := New(context.Background(), Config{Interval: interval, Host: url, IOLatency: "off", MaxClockSkew: maxSkew})
	if err == nil {
		t.Cleanup(m.Close)
	}
	return m, err
}

// runMonitor samples for d and returns the report.
func runMonitor(m *Monitor, d time.Duration) *Report {
	m.Start(context.Background(), time.Now())
	time.Sleep(d)
	return m.Stop(context.Background(), -1e9, 1e9)
}

func checkOneLineInput(t *testing.T, err error, want ...string) {
	t.Helper()
	if !errors.Is(err, input.ErrInvalid) || strings.Contains(err.Error(), "\n") {
		t.Fatalf("error %q: want one line wrapping input.ErrInvalid", err)
	}
	for _, w := range want {
		if !strings.Contains(err.Error(), w) {
			t.Errorf("error %q lacks %q", err, w)
		}
	}
}

// A host clock more than the bound away fails New, saying which way and how far.
func TestNodeExporterClockSkewTooLarge(t *testing.T) {
	for _, c := range []struct {
		offset time.Duration
		want   string
	}{
		{60 * time.Second, "its clock is 60.0 s ahead of this machine's"},
		{-60 * time.Second, "its clock is 60.0 s behind this machine's"},
	} {
		t.Run(c.offset.String(), func(t *testing.T) {
			f := newFixtureExporter(t)
			f.serve(t, "first.prom")
			f.setHostClock(c.offset)
			_, err := newRemoteMonitor(t, f.URL+"/metrics", time.Second, 0)
			if err == nil {
				t.Fatal("New accepted a host 60 s off")
			}
			checkOneLineInput(t, err, "host "+f.URL+"/metrics: ", c.want, "round trip): more than the 2s allowed",
				"synchronise its clock (NTP, chrony) or raise metrics.max_clock_skew")
		})
	}
}

// Within the bound (or with the check off), the skew is measured at every scrape and
// reported; it does not move the samples, which stay on this machine's clock.
func TestNodeExporterClockSkewRecorded(t *testing.T) {
	for _, c := range []struct {
		name            string
		offset, maxSkew time.Duration
	}{
		{"within default", 500 * time.Millisecond, 0},
		{"check off", -60 * time.Second, -1},
	} {
		t.Run(c.name, func(t *testing.T) {
			f := newFixtureExporter(t)
			f.serve(t, "first.prom")
			f.setHostClock(c.offset)
			m, err := newRemoteMonitor(t, f.URL+"/metrics", 100*time.Millisecond, c.maxSkew)
			if err != nil {
				t.Fatal(err)
			}
			r := runMonitor(m, 250*time.Millisecond)
			want := float64(c.offset / time.Millisecond)
			// The fixture reads its clock within the scrape: ± half the round trip.
			tol := r.Clock.MaxRoundTripMs/2 + 1
			cl := r.Clock
			if cl == nil || cl.Host != f.URL+"/metrics" || cl.Scrapes < 3 || cl.FirstSkewMs == nil || cl.MaxAbsSkewMs == nil {
				t.Fatalf("clock = %+v", cl)
			}
			if math.Abs(*cl.FirstSkewMs-want) > tol || math.Abs(*cl.MaxAbsSkewMs-math.Abs(want)) > tol {
				t.Errorf("skew first %v ms, max |%v| ms; want %v ± %v", *cl.FirstSkewMs, *cl.MaxAbsSkewMs, want, tol)
			}
			if cl.MaxRoundTripMs <= 0 || cl.MaxRoundTripMs > 50 {
				t.Errorf("worst round trip %v ms on loopback", cl.MaxRoundTripMs)
			}
			if !strings.Contains(r.Sources["clock"], "node_time_seconds") {
				t.Errorf("clock source = %q", r.Sources["clock"])
			}
			if len(r.Notes) > 0 {
				t.Errorf("notes %q", r.Notes)
			}
			var text strings.Builder
			WriteText(&text, r, "run")
			if !strings.Contains(text.String(), fmt.Sprintf("clock of %s: %c", cl.Host, fmt.Sprintf("%+f", want)[0])) {
				t.Errorf("text lacks the clock line:\n%s", text.String())
			}
			var scraped int
			for _, s := range r.Samples {
				if s.Scrape == nil {
					continue
				}
				scraped++
				if s.Scrape.SkewMs == nil || math.Abs(*s.Scrape.SkewMs-want) > tol {
					t.Errorf("sample at %v: scrape %+v, want skew %v ms", s.T, s.Scrape, want)
				}
				// Placed by this machine's clock: the scrape is within the collection
				// that started at the sample's time.
				if d := s.Scrape.At.Sub(s.Time); d < 0 || d > 50*time.Millisecond {
					t.Errorf("sample taken at %v scraped at %v", s.Time, s.Scrape.At)
				}
			}
			if scraped < 2 {
				t.Errorf("%d of %d samples have scrape times", scraped, len(r.Samples))
			}
		})
	}
}

// A host without node_time_seconds is sampled, with a note that its clock was not
// compared.
func TestNodeExporterNoNodeTime(t *testing.T) {
	f := newFixtureExporter(t)
	f.serve(t, "first.prom")
	m, err := newRemoteMonitor(t, f.URL+"/metrics", 100*time.Millisecond, 0)
	if err != nil {
		t.Fatal(err)
	}
	r := runMonitor(m, 0)
	if c := r.Clock; c == nil || c.Scrapes < 2 || c.FirstSkewMs != nil || c.MaxAbsSkewMs != nil || c.MaxRoundTripMs <= 0 {
		t.Errorf("clock = %+v, want round trips only", c)
	}
	if len(r.Notes) != 1 || !strings.Contains(r.Notes[0], "reports no node_time_seconds (enable its time collector)") {
		t.Errorf("notes = %q", r.Notes)
	}
}

// The scrape is placed at the midpoint of the request sent and the first byte back:
// a host that reads its clock halfway through a 200 ms answer shows no skew, however
// long its body then takes to arrive.
func TestNodeExporterScrapeMidpoint(t *testing.T) {
	first, err := os.ReadFile(filepath.Join("testdata", "nodeexporter", "first.prom"))
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		time.Sleep(100 * time.Millisecond)
		read := time.Now()
		time.Sleep(100 * time.Millisecond)
		w.Header().Set("Content-Type", "text/plain; version=0.0.4")
		fmt.Fprint(w, nodeTimeLines(read))
		w.(http.Flusher).Flush()
		time.Sleep(300 * time.Millisecond)
		w.Write(first)
	}))
	t.Cleanup(srv.Close)
	n, err := NewNodeExporter(srv.URL, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	var s Sample
	for range 2 {
		if err := n.Collect(context.Background(), &s); err != nil {
			t.Fatal(err)
		}
	}
	sc := s.Scrape
	if sc == nil || sc.SkewMs == nil {
		t.Fatalf("scrape = %+v", sc)
	}
	t.Logf("round trip %.1f ms, skew %.1f ms, interval %.3f s", sc.RoundTripMs, *sc.SkewMs, sc.Seconds)
	if sc.RoundTripMs < 200 || sc.RoundTripMs > 300 {
		t.Errorf("round trip %v ms, want the 200 ms to the first byte (not the body's end)", sc.RoundTripMs)
	}
	if math.Abs(*sc.SkewMs) > 30 {
		t.Errorf("skew %v ms, want about 0: the clock was read at the span's midpoint", *sc.SkewMs)
	}
	// Between the midpoints: the 500 ms answer, give or take.
	if sc.Seconds < 0.45 || sc.Seconds > 0.8 {
		t.Errorf("interval %v s, want about 0.5", sc.Seconds)
	}
}

// A host that cannot be scraped at the start fails New with one line naming the URL
// and what to do.
func TestNodeExporterRefusedAtStart(t *testing.T) {
	closed := fmt.Sprintf("http://127.0.0.1:%d/metrics", freeLoopbackPort(t))
	_, err := newRemoteMonitor(t, closed, time.Second, 0)
	checkOneLineInput(t, err, "node_exporter at "+closed+" refused the connection", "connection refused",
		"start node_exporter on that host")

	f := newFixtureExporter(t)
	for _, c := range []struct {
		name, path, ctype, body string
		status                  int
		want                    []string
	}{
		{"wrong path", "/nope", "text/plain", "", http.StatusOK, []string{"answered 404 Not Found", "e.g. http://db-host:9100/metrics"}},
		{"server error", "/metrics", "text/plain", "gather failed\nstack", http.StatusInternalServerError,
			[]string{"answered 500 Internal Server Error (gather failed)", "check its log"}},
		{"landing page", "/metrics", "text/html", "<html>", http.StatusOK, []string{`"text/html"`, "e.g. http://"}},
		{"not metrics", "/metrics", "text/plain", "hello 1\nworld wide web\n", http.StatusOK,
			[]string{"did not answer in Prometheus's text format", "line 2", "e.g. http://"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			f.answer(c.status, c.ctype, c.body)
			_, err := newRemoteMonitor(t, f.URL+c.path, time.Second, 0)
			checkOneLineInput(t, err, append([]string{f.URL + c.path}, c.want...)...)
		})
	}
}

// A host that stops answering mid-run leaves a gap, noted with its samples and
// seconds; sampling goes on, and the first scrape after the gap covers it.
func TestNodeExporterOutageMidRun(t *testing.T) {
	f := newFixtureExporter(t)
	f.serve(t, "first.prom")
	f.setHostClock(0)
	const interval = 100 * time.Millisecond
	m, err := newRemoteMonitor(t, f.URL+"/metrics", interval, 0)
	if err != nil {
		t.Fatal(err)
	}
	m.Start(context.Background(), time.Now())
	time.Sleep(250 * time.Millisecond)
	f.answer(http.StatusServiceUnavailable, "text/plain", "down")
	time.Sleep(350 * time.Millisecond)
	f.serve(t, "first.prom")
	time.Sleep(250 * time.Millisecond)
	r := m.Stop(context.Background(), -1e9, 1e9)

	var missing int
	var spanned bool
	for i, s := range r.Samples {
		switch {
		case s.Scrape == nil:
			missing++
		case i > 0 && r.Samples[i-1].Scrape == nil:
			spanned = s.Scrape.Seconds > 1.5*interval.Seconds()
		}
	}
	if missing == 0 || !spanned || r.Samples[len(r.Samples)-1].Scrape == nil {
		t.Errorf("%d samples missing, the one after spans the gap: %v, last scraped: %v", missing, spanned,
			r.Samples[len(r.Samples)-1].Scrape != nil)
	}
	want := fmt.Sprintf("node_exporter figures missing in %d samples", missing)
	if len(r.Notes) != 2 || !strings.Contains(r.Notes[0], "503 Service Unavailable") || !strings.Contains(r.Notes[1], want) {
		t.Errorf("notes = %q, want the failure and %q", r.Notes, want)
	}
}

// Against a real node_exporter on this machine, with its time collector, the skew is
// measured and near 0: the same clock on both ends.
func TestNodeExporterRealClock(t *testing.T) {
	const exe = "/usr/bin/prometheus-node-exporter"
	if _, err := os.Stat(exe); err != nil {
		t.Skipf("needs Debian's prometheus-node-exporter package: %v", err)
	}
	url := startNodeExporter(t, exe)
	m, err := newRemoteMonitor(t, url, 200*time.Millisecond, 0)
	if err != nil {
		t.Fatal(err)
	}
	r := runMonitor(m, 500*time.Millisecond)
	c := r.Clock
	if c == nil || c.FirstSkewMs == nil || c.MaxAbsSkewMs == nil {
		t.Fatalf("clock = %+v, want skews", c)
	}
	t.Logf("%d scrapes: first skew %.3f ms, max |skew| %.3f ms, worst round trip %.3f ms", c.Scrapes,
		*c.FirstSkewMs, *c.MaxAbsSkewMs, c.MaxRoundTripMs)
	if tol := c.MaxRoundTripMs/2 + 1; *c.MaxAbsSkewMs > tol || math.Abs(*c.FirstSkewMs) > tol {
		t.Errorf("skew up to %v ms on one machine, want within ±%v ms", *c.MaxAbsSkewMs, tol)
	}
	if c.Scrapes < 3 || c.MaxRoundTripMs <= 0 || c.Host != url {
		t.Errorf("clock = %+v", c)
	}
	for _, n := range r.Notes {
		if strings.Contains(n, "clock") || strings.Contains(n, "missing") {
			t.Errorf("note %q", n)
		}
	}
}
