package main

import (
	"context"
	"database/sql"
	"net"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	_ "github.com/go-sql-driver/mysql"
	"github.com/jackc/pgx/v5"

	"github.com/storbench/storbench/internal/testsupport/mariadbtest"
	"github.com/storbench/storbench/internal/testsupport/pgtest"
)

// badInput is one row of the bad-input matrix: a command line that must exit with code
// 2 (bad input) and print exactly one stderr line naming the problem (want) and its
// fix (fix), without touching any data (untouched).
type badInput struct {
	name string
	// server: the row needs a real database server (skipped with -short).
	server bool
	args   func() []string
	env    map[string]string
	// warn: the input is accepted with a one-line warning (exit 0); control: a good
	// input beside the bad ones, which must work.
	warn, control bool
	want          string
	fix           string
	// state reads what must not change; it is read before and after the command.
	state func(t *testing.T) string
}

// TestBadInputMatrix runs every kind of bad input the README promises to refuse with
// exit code 2 and one line that names the problem and the fix, in one table, and
// checks that the refusal left the databases and directories as they were.
func TestBadInputMatrix(t *testing.T) {
	t.Setenv("STORBENCH_HOME", t.TempDir())
	tmp := t.TempDir()

	// Directories.
	notOurs := filepath.Join(tmp, "not-ours")
	must(t, os.MkdirAll(notOurs, 0o755))
	must(t, os.WriteFile(filepath.Join(notOurs, "precious.txt"), []byte("keep me"), 0o644))
	missingParent := filepath.Join(tmp, "no-such-dir", "pg")
	// Not writable: a read-only directory, unless root (which writes anywhere a mode
	// allows): then a directory of sysfs, which takes no new directories.
	notWritable := filepath.Join(tmp, "read-only", "pg")
	must(t, os.MkdirAll(filepath.Dir(notWritable), 0o555))
	if os.Geteuid() == 0 {
		notWritable = "/sys/fs/storbench-badinput-test"
	}
	fioTarget := filepath.Join(tmp, "fio-target")
	must(t, os.MkdirAll(fioTarget, 0o755))
	must(t, os.WriteFile(filepath.Join(fioTarget, "data"), []byte("data"), 0o644))
	emptyPath := t.TempDir()
	newPath := func(name string) string { return filepath.Join(tmp, name) }
	studyFile := filepath.Join(tmp, "study.yaml")
	must(t, os.WriteFile(studyFile, []byte("name: bad\nwarmup: 5m\ntargets:\n  - name: a\n    path: /tmp/a\n"), 0o644))

	// A closed port: listen, note the port, close.
	l, err := net.Listen("tcp", "127.0.0.1:0")
	must(t, err)
	closedPort := l.Addr().(*net.TCPAddr).Port
	l.Close()
	// A port in use for as long as the test runs.
	busy, err := net.Listen("tcp", "127.0.0.1:0")
	must(t, err)
	defer busy.Close()
	busyPort := busy.Addr().(*net.TCPAddr).Port

	// Servers, started once: PostgreSQL with an empty database and a built one, MariaDB.
	var emptyDSN, builtDSN, mariaURL, mariaDSN string
	if !testing.Short() {
		srv := pgtest.Start(t)
		emptyDSN = srv.DSN("tpcc")
		must(t, srv.CreateDatabase(context.Background(), "built"))
		builtDSN = srv.DSN("built")
		if code, out, errOut := storbench(t, "build", "--dsn", builtDSN, "--warehouses", "1", "--workers", "2"); code != 0 {
			t.Fatalf("build: exit %d\n%s%s", code, out, errOut)
		}
		maria := mariadbtest.Start(t)
		mariaURL, mariaDSN = maria.URL, maria.DSN
	}

	dirState := func(dirs ...string) func(t *testing.T) string {
		return func(t *testing.T) string {
			var b strings.Builder
			for _, d := range dirs {
				b.WriteString(d + ": " + listing(d) + "\n")
			}
			b.WriteString("registry: " + listing(filepath.Join(os.Getenv("STORBENCH_HOME"), "instances")))
			return b.String()
		}
	}
	pgState := func(dsn *string) func(t *testing.T) string {
		return func(t *testing.T) string { return tablesOf(t, *dsn) }
	}
	fileState := func(f string) func(t *testing.T) string {
		return func(t *testing.T) string { b, _ := os.ReadFile(f); return string(b) }
	}
	mariaState := func(t *testing.T) string { return mariaTables(t, mariaDSN) }
	args := func(a ...string) func() []string { return func() []string { return a } }
	dsnArgs := func(dsn *string, a ...string) func() []string {
		return func() []string { return append(slices.Clone(a), "--dsn", *dsn) }
	}

	cases := []badInput{
		{name: "unknown flag", args: dsnArgs(&emptyDSN, "run", "--userz", "4"),
			want: "unknown flag: --userz", fix: "storbench run --help"},
		{name: "unknown study key", args: args("study", "plan", studyFile),
			want: `unknown key "warmup"`, fix: "known keys: ", state: fileState(studyFile)},
		{name: "wrong type", args: args("run", "--dsn", "postgres://x@127.0.0.1/y", "--users", "abc"),
			want: `invalid argument "abc" for "--users"`, fix: "--help"},
		{name: "negative users", args: args("run", "--dsn", "postgres://x@127.0.0.1/y", "--users", "-3"),
			want: "--users", fix: "at least 1"},
		{name: "zero users", args: args("run", "--dsn", "postgres://x@127.0.0.1/y", "--users", "0"),
			want: "--users", fix: "at least 1"},
		{name: "rate with keying", args: args("run", "--dsn", "postgres://x@127.0.0.1/y", "--rate", "30000", "--keying"),
			want: "--rate and --keying both pace the users", fix: "give one of them"},
		{name: "negative rate", args: args("run", "--dsn", "postgres://x@127.0.0.1/y", "--rate", "-5"),
			want: "--rate -5 is negative", fix: "give transactions per minute"},
		// The same bound as a study's duration: one check declared once.
		{name: "window under a second", args: args("run", "--dsn", "postgres://x@127.0.0.1/y", "--duration", "500ms"),
			want: "--duration 500ms is too short", fix: "measure for at least 1s"},
		{name: "latency limit without rate", args: args("run", "--dsn", "postgres://x@127.0.0.1/y", "--latency-limit", "1s"),
			want: "--latency-limit skips transactions that are already late", fix: "give --rate too"},
		{name: "unknown arrivals", args: args("run", "--dsn", "postgres://x@127.0.0.1/y", "--rate", "600", "--arrivals", "bursty"),
			want: `--arrivals "bursty" is not an arrival process`, fix: "give poisson or uniform"},
		{name: "unknown inputs", args: args("run", "--dsn", "postgres://x@127.0.0.1/y", "--inputs", "tproc-c"),
			want: `--inputs "tproc-c" is unknown`, fix: "use spec, the TPC-C spec's, or hammerdb"},
		{name: "unknown schema", args: args("build", "--dsn", "postgres://x@127.0.0.1/y", "--warehouses", "1", "--schema", "tproc-c"),
			want: `--schema "tproc-c" is unknown`, fix: "or hammerdb, HammerDB 4.12's"},
		{name: "zero warehouses", server: true, args: dsnArgs(&emptyDSN, "build", "--warehouses", "0"),
			want: "--warehouses", fix: "at least 1", state: pgState(&emptyDSN)},
		{name: "ramp too long", server: true, args: dsnArgs(&builtDSN, "run", "--ramp", "25h", "--duration", "1s"),
			want: "--ramp 25h0m0s is longer than 24h", fix: "--ramp 2m", state: pgState(&builtDSN)},
		{name: "malformed DSN", args: args("run", "--dsn", "postgres://[::1", "--duration", "1s"),
			want: "is not a URL", fix: "use e.g. postgres://"},
		{name: "unknown DSN scheme", args: args("run", "--dsn", "mongodb://127.0.0.1/x", "--duration", "1s"),
			want: `scheme "mongodb" is not supported`, fix: "use mariadb:// or mysql://"},
		{name: "unreachable host", args: func() []string {
			return []string{"run", "--dsn", "postgres://postgres@127.0.0.1:" + strconv.Itoa(closedPort) + "/tpcc", "--duration", "1s"}
		}, want: "connection refused", fix: "check host, port"},
		{name: "wrong password", server: true, args: func() []string {
			u := strings.Replace(mariaURL, ":"+passwordOf(mariaURL)+"@", ":wrong-password@", 1)
			return []string{"run", "--dsn", u, "--duration", "1s"}
		}, want: "Access denied", fix: "check the path or address, user and password", state: mariaState},
		{name: "run without TPC-C tables", server: true, args: dsnArgs(&emptyDSN, "run", "--ramp", "0s", "--duration", "1s"),
			want: "no TPC-C tables", fix: "storbench build", state: pgState(&emptyDSN)},
		{name: "check without TPC-C tables", server: true, args: dsnArgs(&emptyDSN, "check"),
			want: "no TPC-C tables", fix: "storbench build", state: pgState(&emptyDSN)},
		{name: "build over TPC-C tables", server: true, args: dsnArgs(&builtDSN, "build", "--warehouses", "1"),
			want: "already", fix: "storbench drop", state: pgState(&builtDSN)},
		{name: "more users than max_connections", server: true, args: func() []string {
			return []string{"run", "--dsn", builtDSN, "--users", "500", "--ramp", "0s", "--duration", "1s", "--json", filepath.Join(tmp, "run.json")}
		},
			want: "500 users need 502 connections but the server allows", fix: "lower --users or raise max_connections",
			state: func(t *testing.T) string { return tablesOf(t, builtDSN) + " " + listing(tmp) }},
		{name: "target parent missing", args: args("instance", "create", "--path", missingParent),
			want: "does not exist", fix: "create the mount point or directory first", state: dirState(tmp)},
		{name: "target not writable", args: args("instance", "create", "--path", notWritable),
			want: "cannot create " + notWritable, fix: "--path", state: dirState(filepath.Dir(notWritable))},
		{name: "target not empty and not ours", args: args("instance", "create", "--path", notOurs),
			want: "is not empty and storbench did not create it", fix: "name an empty or new directory", state: dirState(notOurs)},
		{name: "fio missing", args: args("fio", "--path", fioTarget, "--profile", "hcibench-4k-70r"),
			env:  map[string]string{"PATH": t.TempDir()},
			want: "fio is not installed", fix: "apt-get install fio", state: dirState(fioTarget)},
		{name: "PostgreSQL binaries missing", args: args("instance", "create", "--path", newPath("no-binaries")),
			env:  map[string]string{"STORBENCH_PG_BINDIR": filepath.Join(tmp, "nowhere")},
			want: "has no initdb", fix: "point it at PostgreSQL's server binaries", state: dirState(tmp)},
		{name: "port in use", args: args("instance", "create", "--path", newPath("busy-port"), "--port", strconv.Itoa(busyPort)),
			want: "--port " + strconv.Itoa(busyPort) + " is in use", fix: "choose another", state: dirState(tmp)},
		{name: "target empty (accepted: control)", server: true, control: true, args: args("instance", "create", "--path", emptyPath, "--name", "badinput-ok")},
	}
	// tmpfs: the README documents a warning, not a refusal (create "warns on tmpfs").
	if shm := "/dev/shm"; isTmpfs(shm) {
		dir := filepath.Join(shm, "storbench-badinput-"+strconv.Itoa(os.Getpid()))
		t.Cleanup(func() { storbench(t, "instance", "destroy", "--name", "badinput-tmpfs"); os.RemoveAll(dir) })
		cases = append(cases, badInput{name: "target on tmpfs (warned)", server: true, warn: true,
			args: args("instance", "create", "--path", dir, "--name", "badinput-tmpfs", "--memory", "256MB"),
			want: "is on tmpfs", fix: "measure memory, not storage"})
	}

	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if c.server && testing.Short() {
				t.Skip("needs a database server")
			}
			for k, v := range c.env {
				t.Setenv(k, v)
			}
			var before string
			if c.state != nil {
				before = c.state(t)
			}
			start := time.Now()
			code, out, errOut := storbench(t, c.args()...)
			elapsed := time.Since(start)
			if c.control {
				if code != 0 {
					t.Fatalf("exit %d, want 0\n%s%s", code, out, errOut)
				}
				storbench(t, "instance", "destroy", "--name", "badinput-ok")
				return
			}
			want := 2
			if c.warn {
				want = 0
			}
			if code != want {
				t.Errorf("exit %d, want %d\nstdout %q\nstderr %q", code, want, out, errOut)
			}
			lines := strings.Split(strings.TrimRight(errOut, "\n"), "\n")
			if len(lines) != 1 || !strings.HasPrefix(lines[0], "storbench: ") {
				t.Errorf("stderr is %d lines, want one \"storbench: …\" line: %q", len(lines), errOut)
			}
			if !strings.Contains(errOut, c.want) || !strings.Contains(errOut, c.fix) {
				t.Errorf("stderr %q does not name the problem (%q) and the fix (%q)", errOut, c.want, c.fix)
			}
			if c.state != nil {
				if after := c.state(t); after != before {
					t.Errorf("data touched:\nbefore %s\nafter  %s", before, after)
				}
			}
			t.Logf("%v: %s", elapsed.Round(time.Millisecond), strings.TrimSpace(errOut))
		})
	}
}

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

// listing names a directory's entries with their sizes ("absent" when it is missing).
func listing(dir string) string {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return "absent"
	}
	var names []string
	for _, e := range entries {
		info, err := e.Info()
		if err != nil {
			continue
		}
		names = append(names, e.Name()+"="+strconv.FormatInt(info.Size(), 10))
	}
	return strings.Join(names, ",")
}

// tablesOf lists a PostgreSQL database's tables in public with their row estimates
// and the districts' next order ids (what a run would change).
func tablesOf(t *testing.T, dsn string) string {
	t.Helper()
	ctx := context.Background()
	c, err := pgx.Connect(ctx, dsn)
	must(t, err)
	defer c.Close(ctx)
	var s string
	must(t, c.QueryRow(ctx, `SELECT coalesce(string_agg(table_name, ',' ORDER BY table_name), '') FROM information_schema.tables WHERE table_schema = 'public'`).Scan(&s))
	if strings.Contains(s, "district") {
		var n, h int64
		must(t, c.QueryRow(ctx, "SELECT (SELECT sum(d_next_o_id) FROM district), (SELECT count(*) FROM history)").Scan(&n, &h))
		s += " next_o_id=" + strconv.FormatInt(n, 10) + " history=" + strconv.FormatInt(h, 10)
	}
	return s
}

// mariaTables lists the tables of the MariaDB test database (go-sql-driver DSN).
func mariaTables(t *testing.T, dsn string) string {
	t.Helper()
	db, err := sql.Open("mysql", dsn)
	must(t, err)
	defer db.Close()
	var s sql.NullString
	must(t, db.QueryRow("SELECT GROUP_CONCAT(table_name ORDER BY table_name) FROM information_schema.tables WHERE table_schema = DATABASE()").Scan(&s))
	return s.String
}

// passwordOf is a URL's password.
func passwordOf(url string) string {
	at := strings.LastIndex(url, "@")
	colon := strings.LastIndex(url[:at], ":")
	return url[colon+1 : at]
}

func isTmpfs(dir string) bool {
	var fs syscall.Statfs_t
	return syscall.Statfs(dir, &fs) == nil && fs.Type == 0x01021994
}
