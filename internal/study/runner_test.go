package study

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/storbench/storbench/internal/driver"
	_ "github.com/storbench/storbench/internal/engine/postgres" // registers postgres://
	"github.com/storbench/storbench/internal/input"
	"github.com/storbench/storbench/internal/instance/cgroup"
	_ "github.com/storbench/storbench/internal/instance/postgres"
)

const tinyStudy = `name: tiny
targets:
  - name: a
    path: DIR/a
  - name: b
    path: DIR/b
workload:
  warehouses: 1
experiments:
  - name: sweep
    kind: user-sweep
    users: [1, 2]
    ramp: 1s
    duration: 3s
    repeats: 2
  - name: br
    kind: backup-restore
    cycles: 1
metrics:
  io_latency: "off"
`

// A tiny study on two managed targets stores every step; interrupted inside the timed
// window of a random step, it keeps what that step measured apart, resumes after the
// stored steps without running any of them again, and at the end its instances are
// gone and its results remain.
func TestStudyRunAndResume(t *testing.T) {
	t.Parallel() // its own servers, directories and names: see docs/architecture.md#tests
	if testing.Short() {
		t.Skip("starts PostgreSQL servers")
	}
	dir := t.TempDir()
	file := []byte(strings.ReplaceAll(tinyStudy, "DIR", dir))
	s, err := Parse("tiny.yaml", file)
	if err != nil {
		t.Fatal(err)
	}
	plan := Plan(s)
	if len(plan) != 10 {
		t.Fatalf("plan has %d steps, want 2 targets × (2 users × 2 repeats + 1 cycle)", len(plan))
	}
	results := filepath.Join(dir, "results")
	// Steps 1-8 are the two sweeps, 9-10 the backup-restore cycles: interrupt one of
	// steps 2-7 a second into its timed window.
	stopAt := 1 + rand.IntN(6)
	t.Logf("interrupting step %d", stopAt+1)

	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var first []string
	err = Run(ctx, s, file, results, Options{Version: "test",
		afterStep: func(st Step) { first = append(first, st.ID) },
		Progress: func(p Progress) {
			if p.Step.Seq == stopAt+1 && p.Tick.Phase == driver.PhaseTimed {
				cancel()
			}
		}})
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("interrupted study: %v", err)
	}
	store, err := ReadStore(results)
	if err != nil {
		t.Fatal(err)
	}
	stored, _ := store.Steps()
	if len(stored) != stopAt || len(first) != stopAt {
		t.Fatalf("%d steps stored, %d run before the interruption of step %d", len(stored), len(first), stopAt+1)
	}
	var partial StepResult
	b, err := os.ReadFile(filepath.Join(results, "steps", fmt.Sprintf("%04d-interrupted.json", stopAt+1)))
	if err != nil || json.Unmarshal(b, &partial) != nil || partial.Run == nil || !partial.Run.Interrupted || partial.Run.TPMClient <= 0 {
		t.Errorf("the interrupted step's measurements were not kept (%v): %.200s", err, b)
	}

	var second []string
	if err := Run(context.Background(), s, file, results, Options{Version: "test", afterStep: func(st Step) {
		second = append(second, st.ID)
	}}); err != nil {
		t.Fatal(err)
	}
	ran := map[string]int{}
	for _, id := range append(first, second...) {
		ran[id]++
	}
	for _, p := range plan {
		if ran[p.ID] != 1 {
			t.Errorf("step %s ran %d times", p.ID, ran[p.ID])
		}
	}
	stored, err = store.Steps()
	if err != nil || len(stored) != len(plan) {
		t.Fatalf("%d steps stored after resuming (%v)", len(stored), err)
	}
	for _, r := range stored {
		switch r.Step.Kind {
		case UserSweep:
			if r.Run == nil || r.Run.NOPMDB <= 0 || r.Run.System == nil || r.Run.Config.Users != r.Step.Users {
				t.Errorf("step %s: run result %+v", r.Step.ID, r.Run)
			} else if v := r.Run.Bottleneck; v == nil || v.Kind == "" || len(v.Figures) == 0 {
				// Every TPC-C step stores what limited it (docs/bottlenecks.md).
				t.Errorf("step %s: bottleneck verdict %+v", r.Step.ID, v)
			}
		case BackupRestore:
			if r.Backup == nil || r.Restore == nil || r.Backup.Bytes <= 0 || r.Restore.Seconds <= 0 {
				t.Errorf("step %s: backup %+v restore %+v", r.Step.ID, r.Backup, r.Restore)
			}
		}
	}
	if list, _ := store.Registry().List(); len(list) != 0 {
		t.Errorf("instances left after the study: %d", len(list))
	}
	for _, f := range []string{"study.yaml", "plan.json", "environment.json"} {
		if _, err := os.Stat(filepath.Join(results, f)); err != nil {
			t.Errorf("store lacks %s", f)
		}
	}

	// The same store refuses another study, and a changed study file without --restart.
	other := []byte(strings.Replace(string(file), "name: tiny", "name: other", 1))
	so, _ := Parse("other.yaml", other)
	if err := Run(context.Background(), so, other, results, Options{}); !errors.Is(err, input.ErrInvalid) {
		t.Errorf("another study into the store: %v", err)
	}
	changed := []byte(strings.Replace(string(file), "cycles: 1", "cycles: 2", 1))
	sc, _ := Parse("tiny.yaml", changed)
	if err := Run(context.Background(), sc, changed, results, Options{}); !errors.Is(err, input.ErrInvalid) {
		t.Errorf("changed study file without --restart: %v", err)
	}
}

const variantsStudy = `name: variants
targets:
  - name: v
    path: DIR/v
    wal_path: DIR/vwal
    memory: 256MB
    replica:
      path: DIR/vrep
      sync: true
workload:
  warehouses: 1
experiments:
  - name: mem
    kind: memory-sweep
    memory: [192MB, 320MB]
    users: [1]
    ramp: 0s
    duration: 2s
  - name: cpu
    kind: cpu-sweep
    cpus: ["0"]
    users: [1]
    ramp: 0s
    duration: 2s
  - name: repl
    kind: replication
    users: [1]
    ramp: 0s
    duration: 2s
  - name: fio
    kind: storage-profiles
    profiles: [seq-write-128k]
    size: 32MB
    runtime: 1s
metrics:
  io_latency: "off"
`

// Memory and CPU variants run on instances sized as asked, the replication
// experiment runs standalone and with a synchronous standby, and the storage profile
// runs on the data and the WAL directories.
func TestStudyVariants(t *testing.T) {
	t.Parallel() // its own servers, directories and names: see docs/architecture.md#tests
	if testing.Short() {
		t.Skip("starts PostgreSQL servers")
	}
	// On the checkout's disk: fio refuses a tmpfs, which the system temp dir may be.
	dir, err := os.MkdirTemp(".", "variants-test-")
	if err != nil {
		t.Fatal(err)
	}
	dir, _ = filepath.Abs(dir)
	t.Cleanup(func() { os.RemoveAll(dir) })
	file := []byte(strings.ReplaceAll(variantsStudy, "DIR", dir))
	s, err := Parse("variants.yaml", file)
	if err != nil {
		t.Fatal(err)
	}
	results := filepath.Join(dir, "results")
	// What the running instance is while each step runs, read from the registry.
	seen := map[string]string{}
	var store *Store
	err = Run(context.Background(), s, file, results, Options{Version: "test", afterStep: func(st Step) {
		if store == nil {
			store = &Store{Dir: results}
		}
		list, _ := store.Registry().List()
		var desc []string
		for _, in := range list {
			desc = append(desc, fmt.Sprintf("%s mem=%d cpus=%q sync=%v", in.Name, in.MemoryBytes, in.CPUs, in.Sync))
		}
		seen[st.ID] = strings.Join(desc, "; ")
	}})
	if err != nil {
		t.Fatal(err)
	}
	steps, err := store.Steps()
	if err != nil || len(steps) != 7 {
		t.Fatalf("%d steps stored (%v)", len(steps), err)
	}
	for _, want := range []struct{ id, instance string }{
		{"v/mem/memory=192MB/users=1/rep=1", "mem=201326592"},
		{"v/mem/memory=320MB/users=1/rep=1", "mem=335544320"},
		{"v/cpu/cpus=0/users=1/rep=1", `cpus="0"`},
		// The storage profiles run on the target's own instance, not an unlimited one.
		{"v/fio/seq-write-128k/data", "mem=268435456"},
		{"v/fio/seq-write-128k/wal", "mem=268435456"},
	} {
		if !strings.Contains(seen[want.id], want.instance) {
			t.Errorf("step %s ran on %q, want %q", want.id, seen[want.id], want.instance)
		}
	}
	replicated := 0
	for _, r := range steps {
		if strings.Contains(strings.Join(r.Notes, " "), "-replica on "+dir+"/vrep") {
			replicated++
			if !r.Step.WithReplica {
				t.Errorf("step %s had a standby", r.Step.ID)
			}
		}
	}
	if replicated != 1 {
		t.Errorf("%d steps ran with the standby, want 1", replicated)
	}
	var fioRoles []string
	for _, r := range steps {
		if r.Run != nil && !strings.Contains(strings.Join(r.Notes, " "), "instance limits: ") {
			t.Errorf("step %s does not record the limits it ran with: %q", r.Step.ID, r.Notes)
		}
		if r.Run != nil && r.Run.NOPMDB <= 0 {
			t.Errorf("step %s: no throughput", r.Step.ID)
		}
		if len(r.Fio) == 1 {
			fioRoles = append(fioRoles, r.Step.PathRole+"="+r.Fio[0].Target.Path)
		}
	}
	if len(fioRoles) != 2 || !strings.Contains(fioRoles[1], "vwal") {
		t.Errorf("storage profiles ran on %v, want the data and the WAL directories", fioRoles)
	}
}

const consolidationStudy = `name: consolidation
targets:
  - name: shared
    path: DIR/shared
workload:
  warehouses: 1
experiments:
  - name: consol
    kind: consolidation
    instances: 3
    instance_memory: 256MB
    instance_cpus: ["0", "1"]
    users: 1
    ramp: 1s
    duration: 14s
    baseline: idle
    noisy:
      instances: 1
      interval: 4s
      cycles: 3
      path: DIR/backups
metrics:
  io_latency: "off"
`

// Three instances on one storage: the baseline runs first, two OLTP instances beside
// the third started and idle, then the same two measure the same window while the
// third backs up every 4 s; every instance and backup is gone afterwards and no
// server or backup process is left.
func TestStudyConsolidation(t *testing.T) {
	t.Parallel() // its own servers, directories and names: see docs/architecture.md#tests
	if testing.Short() {
		t.Skip("starts PostgreSQL servers")
	}
	dir := t.TempDir()
	if err := os.Mkdir(filepath.Join(dir, "backups"), 0o755); err != nil {
		t.Fatal(err)
	}
	file := []byte(strings.ReplaceAll(consolidationStudy, "DIR", dir))
	s, err := Parse("consolidation.yaml", file)
	if err != nil {
		t.Fatal(err)
	}
	results := filepath.Join(dir, "results")
	if err := Run(context.Background(), s, file, results, Options{Version: "test"}); err != nil {
		t.Fatal(err)
	}
	store, _ := ReadStore(results)
	steps, err := store.Steps()
	if err != nil || len(steps) != 2 {
		t.Fatalf("%d steps (%v)", len(steps), err)
	}
	base, noisy := steps[0].Consolidation, steps[1].Consolidation
	if base == nil || noisy == nil || base.Noisy || !noisy.Noisy {
		t.Fatalf("want the baseline first, then the noisy run: %+v / %+v", steps[0].Step, steps[1].Step)
	}
	if steps[0].Step.Baseline != BaselineIdle {
		t.Errorf("the baseline step is %q, want idle", steps[0].Step.Baseline)
	}
	for _, c := range []*ConsolidationRun{base, noisy} {
		oltp := 0
		for _, in := range c.Instances {
			switch in.Role {
			case RoleIdle:
				if c.Noisy || in.Run != nil || len(in.Backups) > 0 {
					t.Errorf("instance %s idle in the noisy run %v, or with work: %+v, %d backups", in.Name, c.Noisy, in.Run, len(in.Backups))
				}
			case "oltp":
				oltp++
				if in.Run == nil || in.Run.NOPMDB <= 0 || !in.Run.Start.Equal(c.Start) || !in.Run.End.Equal(c.End) {
					t.Errorf("instance %s: %+v, want the common window %v-%v", in.Name, in.Run, c.Start, c.End)
				}
			case "noisy":
				if len(in.Backups) != 3 {
					t.Errorf("instance %s: %d backups, want 3", in.Name, len(in.Backups))
				}
				for _, b := range in.Backups {
					if b.Bytes <= 0 || b.Seconds <= 0 || b.StartT < float64(b.Cycle-1)*4-0.5 {
						t.Errorf("backup %+v", b)
					}
				}
			}
		}
		if want := 2; oltp != want || c.Instances[2].Role != map[bool]string{false: RoleIdle, true: RoleNoisy}[c.Noisy] || c.System == nil || len(c.System.Summary.Disks) == 0 {
			t.Errorf("noisy %v: %d OLTP instances, want %d, c3 %s; disks %v", c.Noisy, oltp, want, c.Instances[2].Role, c.System != nil)
		}
		// Each OLTP instance's sessions' wait profile, under its name: what the
		// findings compare across the two runs.
		if c.System != nil {
			for _, in := range c.Instances {
				if in.Role != "oltp" {
					continue
				}
				var active float64
				if w := c.System.Summary.Waits; w != nil {
					for _, r := range w.Roles {
						if r.Server == in.Name && r.Role == w.Roles[0].Role {
							active = r.Active()
						}
					}
				}
				if active <= 0 {
					t.Errorf("noisy %v: no wait profile of OLTP instance %s's clients: %+v", c.Noisy, in.Name, c.System.Summary.Waits)
				}
				if in.Run != nil && (in.Run.Bottleneck == nil || len(in.Run.Bottleneck.Figures) == 0) {
					t.Errorf("noisy %v: OLTP instance %s has no bottleneck verdict", c.Noisy, in.Name)
				}
			}
		}
	}
	if noisy.Summary.BackupMeanSeconds <= 0 {
		t.Errorf("summary %+v", noisy.Summary)
	}
	// Who did the I/O: the noisy instance's backup is its own role (the WAL sender
	// streaming BASE_BACKUP reads the data files), beside the OLTP instances' backends.
	roles := map[string]float64{}
	for _, r := range noisy.System.Summary.ProcessIO {
		roles[r.Server+" "+r.Role] += r.ReadMB
		if r.WriteMB != nil {
			roles[r.Server+" "+r.Role] += *r.WriteMB
		}
	}
	var backup, backends bool
	for k, mb := range roles {
		backup = backup || (strings.HasSuffix(k, " backup") && mb > 0)
		backends = backends || strings.HasSuffix(k, " client_backends")
	}
	if !backup || !backends {
		t.Errorf("the noisy run's I/O by role has no backup with bytes or no client backends: %v", roles)
	}
	// The idle instance was made and started in the baseline too.
	for _, st := range steps {
		if notes := strings.Join(st.Notes, " "); !strings.Contains(notes, "c1 limits:") || !strings.Contains(notes, "c3 limits:") {
			t.Errorf("step %s: the instances' limits are not recorded: %q", st.Step.ID, notes)
		}
	}
	for i := 1; i <= 3; i++ {
		if _, err := os.Stat(fmt.Sprintf("%s/shared-c%d", dir, i)); !os.IsNotExist(err) {
			t.Errorf("instance directory %d left: %v", i, err)
		}
	}
	if left, _ := filepath.Glob(filepath.Join(dir, "backups", "*")); len(left) > 0 {
		t.Errorf("backups left: %v", left)
	}
	cmdlines, _ := filepath.Glob("/proc/[0-9]*/cmdline")
	for _, f := range cmdlines {
		if b, err := os.ReadFile(f); err == nil && strings.Contains(string(b), dir) {
			t.Errorf("process left: %s", strings.ReplaceAll(string(b), "\x00", " "))
		}
	}
}

const ioStudy = `name: io
targets:
  - name: slow
    path: DIR/slow
    io_limit: {riops: 2000, wiops: 2000}
workload:
  warehouses: 1
experiments:
  - name: sweep
    kind: user-sweep
    users: 1
    ramp: 1s
    duration: 2s
  - name: io
    kind: io-sweep
    users: 1
    ramp: 1s
    duration: 2s
    io_limits: [azure-p10, {riops: 800, wiops: 800}]
metrics:
  io_latency: "off"
`

// A target's io_limit and each io-sweep variant run on an instance throttled so, and
// each step records the limit, the disk and the cgroup version that held it.
func TestStudyIOLimits(t *testing.T) {
	t.Parallel() // its own servers, directories and names: see docs/architecture.md#tests
	if testing.Short() {
		t.Skip("starts PostgreSQL servers")
	}
	v, err := cgroup.Support()
	if err != nil {
		t.Skipf("no cgroups here: %v", err)
	}
	dir := t.TempDir()
	file := []byte(strings.ReplaceAll(ioStudy, "DIR", dir))
	s, err := Parse("io.yaml", file)
	if err != nil {
		t.Fatal(err)
	}
	results := filepath.Join(dir, "results")
	if err := Run(context.Background(), s, file, results, Options{Version: "test"}); err != nil {
		t.Fatal(err)
	}
	steps, err := (&Store{Dir: results}).Steps()
	if err != nil || len(steps) != 3 {
		t.Fatalf("%d steps stored (%v)", len(steps), err)
	}
	want := map[string]string{
		"slow/sweep/users=1/rep=1":                     "riops=2000,wiops=2000",
		"slow/io/io=azure-p10/users=1/rep=1":           "azure-p10 (riops=500,wiops=500,rbps=95.36MB,wbps=95.36MB)",
		"slow/io/io=riops=800,wiops=800/users=1/rep=1": "riops=800,wiops=800",
	}
	for _, r := range steps {
		th := r.IOThrottle
		if th == nil || th.Limit.String() != want[r.Step.ID] || th.Cgroup != int(v) || th.Device == "" {
			t.Errorf("step %s ran with I/O throttle %+v, want %s by %v", r.Step.ID, th, want[r.Step.ID], v)
		}
		if !strings.Contains(strings.Join(r.Notes, " "), "blkio.throttle.read_iops_device=") && !strings.Contains(strings.Join(r.Notes, " "), "io.max=") {
			t.Errorf("step %s: the limits read back from the cgroup are not in its notes: %q", r.Step.ID, r.Notes)
		}
	}
}
