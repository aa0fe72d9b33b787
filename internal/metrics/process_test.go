package metrics_test

import (
	"context"
	"encoding/json"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"golang.org/x/sys/unix"

	"github.com/storbench/storbench/internal/engine"
	_ "github.com/storbench/storbench/internal/engine/postgres"
	"github.com/storbench/storbench/internal/instance/postgres/pgserver"
	"github.com/storbench/storbench/internal/metrics"
	"github.com/storbench/storbench/internal/procrole"
	"github.com/storbench/storbench/internal/testsupport/looptest"
	"github.com/storbench/storbench/internal/testsupport/pgtest"
)

// roleServer starts a PostgreSQL whose data directory is on a loop device of the
// test's own (ownLoop), and a monitor of that disk and of the server's processes by
// role (roleMonitor).
func roleServer(t *testing.T, interval time.Duration, ioLatency string) (*pgserver.Server, func() *metrics.Monitor) {
	t.Helper()
	dir := ownLoop(t)
	srv := pgtest.StartIn(t, filepath.Join(dir, "pgdata"))
	return srv, func() *metrics.Monitor {
		t.Helper()
		return roleMonitor(t, srv.DSN("tpcc"), dir, interval, ioLatency)
	}
}

// ownLoop mounts a fresh filesystem on a loop device of the test's own, without its
// backing file: the loop device is then not followed to the machine's disk, and its
// own counters, which see the test's I/O only, are sampled.
func ownLoop(t *testing.T) string {
	t.Helper()
	disk := looptest.Mount(t, 512<<20)
	if err := os.Remove(disk.Backing); err != nil {
		t.Fatal(err)
	}
	return disk.Dir
}

// roleMonitor is a monitor of dir's disk, of the database dsn names and of its
// server's processes by role, through the block layer (ioLatency "on") or /proc and
// the database's own counts ("off").
func roleMonitor(t *testing.T, dsn, dir string, interval time.Duration, ioLatency string) *metrics.Monitor {
	t.Helper()
	ctx := context.Background()
	db, err := engine.Open(ctx, dsn)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(db.Close)
	server, err := metrics.LocalServer(ctx, db)
	if err != nil {
		t.Fatal(err)
	}
	mon, err := metrics.New(ctx, metrics.Config{Interval: interval, IOLatency: ioLatency, Database: db, Servers: []metrics.Server{server},
		Targets: []metrics.Target{{Path: dir, Role: "data"}}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(mon.Close)
	return mon
}

func exec(t *testing.T, conn *pgx.Conn, sql string) {
	t.Helper()
	if _, err := conn.Exec(context.Background(), sql); err != nil {
		t.Fatalf("%s: %v", sql, err)
	}
}

func roleOf(ios []metrics.RoleIO, role string) metrics.RoleIO {
	for _, r := range ios {
		if r.Role == role {
			return r
		}
	}
	return metrics.RoleIO{}
}

// TestProcessIOCheckpoint updates every row of a 40 MB table in place (its pages
// dirty in shared_buffers, clean in the page cache), then forces a CHECKPOINT: the
// checkpointer's writes (the block layer's, issued by its sync_file_range and fsync
// calls) must be in the samples that cover the checkpoint, and those samples must
// count it, while the other samples show no checkpointer writes.
func TestProcessIOCheckpoint(t *testing.T) {
	const interval = 500 * time.Millisecond
	srv, monitor := roleServer(t, interval, "on")
	ctx := t.Context()
	conn, err := srv.Connect(ctx, "tpcc")
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(ctx)
	// Half-full pages: the UPDATE's new row versions stay in their pages (HOT), so
	// it writes no new pages, whose first write (extending the file) the backend
	// would be counted for. /proc/PID/io counts a write where it dirties a clean
	// page of the page cache: the CHECKPOINT before makes them all clean.
	exec(t, conn, "CREATE TABLE filler (id int, n int) WITH (fillfactor = 50)")
	exec(t, conn, "INSERT INTO filler SELECT g, 0 FROM generate_series(1, 600000) g")
	exec(t, conn, "CHECKPOINT")
	unix.Sync()
	mon := monitor()
	origin := time.Now()
	mon.Start(ctx, origin)
	exec(t, conn, "UPDATE filler SET n = 1")
	time.Sleep(1500 * time.Millisecond)
	from := time.Since(origin).Seconds()
	exec(t, conn, "CHECKPOINT")
	to := time.Since(origin).Seconds()
	time.Sleep(1500 * time.Millisecond)
	r := mon.Stop(ctx, 0, time.Since(origin).Seconds())

	var during, outside float64
	var checkpoints int64
	for _, s := range r.Samples {
		var w float64
		if r := roleOf(s.ProcessIO, procrole.Checkpointer); r.WriteMBps != nil {
			w = *r.WriteMBps * s.Seconds
		}
		// A sample covers (T - interval, T].
		if s.T > from && s.T-s.Seconds < to+0.05 {
			during += w
			if s.Database != nil {
				checkpoints += s.Database.Checkpoints
			}
			continue
		}
		outside += w
	}
	t.Logf("checkpoint in (%.2f, %.2f] s: checkpointer wrote %.1f MB then, %.2f MB in the other samples; %d checkpoints counted then", from, to, during, outside, checkpoints)
	if during < 30 {
		t.Errorf("the checkpointer wrote %.1f MB in the samples covering the CHECKPOINT, want the table's ~40 MB", during)
	}
	if outside > 1 {
		t.Errorf("the checkpointer wrote %.2f MB outside the CHECKPOINT's samples, want none", outside)
	}
	if checkpoints < 1 {
		t.Errorf("no checkpoint counted in the samples covering it")
	}
	if w := roleOf(r.Samples[len(r.Samples)/2].ProcessIO, procrole.Clients); w.Tasks < 1 {
		t.Errorf("no client backend among the server's processes: %+v", r.Samples[len(r.Samples)/2].ProcessIO)
	}
}

// TestProcessIOColdReads reads a 60 MB table none of which is cached (the server
// restarted, its files dropped from the page cache): the client backends' reads,
// parallel workers' included (they end before the sampler sees their last reads),
// must be the disk's reads within 10%, from /proc/PID/io read_bytes (no tracing) as
// from the block layer.
func TestProcessIOColdReads(t *testing.T) {
	for _, c := range []struct{ ioLatency, source string }{{"off", "proc"}, {"on", "block"}} {
		t.Run(c.source, func(t *testing.T) { coldReads(t, c.ioLatency, c.source) })
	}
}

func coldReads(t *testing.T, ioLatency, source string) {
	srv, monitor := roleServer(t, time.Second, ioLatency)
	ctx := context.Background()
	conn, err := srv.Connect(ctx, "tpcc")
	if err != nil {
		t.Fatal(err)
	}
	exec(t, conn, "CREATE TABLE filler AS SELECT g AS id, repeat('x', 200) AS pad FROM generate_series(1, 250000) g")
	exec(t, conn, "CHECKPOINT")
	conn.Close(ctx)
	if err := srv.Stop(ctx); err != nil {
		t.Fatal(err)
	}
	dropCache(t, srv.Dir)
	if err := srv.Start(ctx); err != nil {
		t.Fatal(err)
	}
	mon := monitor()
	conn, err = srv.Connect(ctx, "tpcc")
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(ctx)
	origin := time.Now()
	mon.Start(ctx, origin)
	var n int64
	if err := conn.QueryRow(ctx, "SELECT count(*) FROM filler WHERE pad <> ''").Scan(&n); err != nil || n != 250000 {
		t.Fatalf("count: %d, %v", n, err)
	}
	time.Sleep(1200 * time.Millisecond)
	r := mon.Stop(ctx, 0, time.Since(origin).Seconds())
	if len(r.Summary.Disks) != 1 {
		t.Fatalf("disks sampled: %+v", r.Summary.Disks)
	}
	diskMB := r.Summary.Disks[0].ReadMBps * (r.Summary.ToT - r.Summary.FromT)
	var clients metrics.RoleTotal
	for _, rt := range r.Summary.ProcessIO {
		if rt.Role == procrole.Clients {
			clients = rt
		}
		t.Logf("%s: %.2f MB read (%s)", rt.Role, rt.ReadMB, rt.Source)
	}
	t.Logf("disk read %.2f MB; client backends %.2f MB (%v%%)", diskMB, clients.ReadMB, deref(clients.ReadPctOfDisks))
	if clients.Source != source || (clients.WriteMB != nil) != (source == "block") {
		t.Errorf("the clients' figures are %s's, with writes from the block layer only: %+v", source, clients)
	}
	// The shape docs/metrics.md documents.
	if b, err := json.Marshal(r.Summary.ProcessIO[0]); err != nil || !strings.Contains(string(b), `{"role":"client_backends","source":"`+source+`","read_mb":`) || !strings.Contains(string(b), `"read_pct_of_disks":`) {
		t.Errorf("summary's process_io as JSON: %s (%v)", b, err)
	}
	if clients.ReadPctOfDisks == nil || *clients.ReadPctOfDisks < 90 || *clients.ReadPctOfDisks > 110 {
		t.Errorf("client backends read %.2f MB, the disk %.2f MB: want within 10%%", clients.ReadMB, diskMB)
	}
}

func deref(p *float64) float64 {
	if p == nil {
		return -1
	}
	return *p
}

// dropCache drops dir's files from the page cache, so that the next reads come from
// the disk (and only this test's files, not the machine's whole cache).
func dropCache(t *testing.T, dir string) {
	t.Helper()
	err := filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil || !d.Type().IsRegular() {
			return err
		}
		f, err := os.Open(path)
		if err != nil {
			return err
		}
		defer f.Close()
		return unix.Fadvise(int(f.Fd()), 0, 0, unix.FADV_DONTNEED)
	})
	if err != nil {
		t.Fatal(err)
	}
}
