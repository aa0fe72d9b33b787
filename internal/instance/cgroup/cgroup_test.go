package cgroup

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
)

// fake is a cgroup file system in a temporary directory: mkdir fills a group's directory
// with the files the kernel would show, and writes merge the way the kernel's do
// (subtree_control "+c", throttle rules per device, cgroup.procs appends).
type fake struct {
	t    *testing.T
	root string // stands for /sys/fs/cgroup
	sys  string // stands for /sys
	v2   string // the unified hierarchy's mount point, "" when none
	fail map[string]error
}

func newFake(t *testing.T) *fake {
	t.Helper()
	base := t.TempDir()
	f := &fake{t: t, root: filepath.Join(base, "cgroup"), sys: filepath.Join(base, "sys"), fail: map[string]error{}}
	savedRoot, savedSys, savedMkdir, savedRmdir, savedWrite := root, sysRoot, mkdir, rmdir, write
	t.Cleanup(func() { root, sysRoot, mkdir, rmdir, write = savedRoot, savedSys, savedMkdir, savedRmdir, savedWrite })
	root, sysRoot, mkdir, rmdir, write = f.root, f.sys, f.mkdir, f.rmdir, f.write

	f.put(filepath.Join(f.sys, "devices/system/cpu/online"), "0-3")
	f.put(filepath.Join(f.sys, "dev/block/8:0/dev"), "8:0")
	f.put(filepath.Join(f.sys, "dev/block/8:1/partition"), "1")
	f.put(filepath.Join(f.sys, "dev/block/8:16/dev"), "8:16")
	if err := os.MkdirAll(f.root, 0o755); err != nil {
		t.Fatal(err)
	}
	return f
}

// withV1 mounts memory, cpuset and blkio hierarchies.
func (f *fake) withV1() *fake {
	for _, c := range []string{"memory", "cpuset", "blkio"} {
		f.fill(filepath.Join(f.root, c))
	}
	f.put(filepath.Join(f.root, "cpuset/cpuset.cpus"), "0-3")
	f.put(filepath.Join(f.root, "cpuset/cpuset.effective_cpus"), "0-3")
	f.put(filepath.Join(f.root, "cpuset/cpuset.mems"), "0")
	return f
}

// withV2 mounts a unified hierarchy at dir (relative to root: "" or "unified") whose
// root offers controllers.
func (f *fake) withV2(dir, controllers string) *fake {
	f.v2 = filepath.Join(f.root, dir)
	f.put(filepath.Join(f.v2, "cgroup.controllers"), controllers)
	f.put(filepath.Join(f.v2, "cgroup.subtree_control"), "")
	f.put(filepath.Join(f.v2, "cgroup.procs"), "1\n2")
	f.put(filepath.Join(f.v2, "cpuset.cpus.effective"), "0-3")
	return f
}

func (f *fake) put(path, content string) {
	f.t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		f.t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(content+"\n"), 0o644); err != nil {
		f.t.Fatal(err)
	}
}

func (f *fake) get(path string) string {
	f.t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		f.t.Fatal(err)
	}
	return strings.TrimSpace(string(b))
}

// fill writes the files the kernel shows in a new directory of dir's hierarchy.
func (f *fake) fill(dir string) {
	put := func(file, v string) { f.put(filepath.Join(dir, file), v) }
	put("cgroup.procs", "")
	if f.v2 != "" && strings.HasPrefix(dir, f.v2+string(filepath.Separator)) {
		enabled := f.get(filepath.Join(filepath.Dir(dir), "cgroup.subtree_control"))
		put("cgroup.controllers", enabled)
		put("cgroup.subtree_control", "")
		put("cgroup.type", "domain")
		for _, c := range strings.Fields(enabled) {
			f.fillV2(dir, c)
		}
		return
	}
	rel, _ := filepath.Rel(f.root, dir)
	switch strings.Split(rel, string(filepath.Separator))[0] {
	case "memory":
		put("memory.limit_in_bytes", "9223372036854771712")
		put("memory.oom_control", "oom_kill_disable 0\nunder_oom 0\noom_kill 0")
	case "cpuset":
		put("cpuset.cpus", "")
		put("cpuset.mems", "")
	case "blkio":
		for _, t := range v1Throttles {
			put(t.file, "")
		}
	}
}

// fillV2 writes the files of controller c in dir, a v2 group.
func (f *fake) fillV2(dir, c string) {
	put := func(file, v string) { f.put(filepath.Join(dir, file), v) }
	switch c {
	case "memory":
		put("memory.max", "max")
		put("memory.events", "low 0\nhigh 0\nmax 0\noom 0\noom_kill 0")
	case "cpuset":
		put("cpuset.cpus", "")
		put("cpuset.cpus.effective", f.get(filepath.Join(filepath.Dir(dir), "cpuset.cpus.effective")))
	case "io":
		put("io.max", "")
	}
}

func (f *fake) mkdir(dir string, perm fs.FileMode) error {
	if err := os.Mkdir(dir, perm); err != nil {
		return err
	}
	f.fill(dir)
	return nil
}

func (f *fake) rmdir(dir string) error {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return err
	}
	for _, e := range entries {
		if e.IsDir() {
			return syscall.EBUSY
		}
	}
	if f.get(filepath.Join(dir, "cgroup.procs")) != "" {
		return syscall.EBUSY
	}
	return os.RemoveAll(dir)
}

func (f *fake) write(path, value string) error {
	file := filepath.Base(path)
	if err := f.fail[file]; err != nil {
		return err
	}
	if _, err := os.Stat(path); err != nil {
		return err
	}
	value = strings.TrimSpace(value)
	cur := f.get(path)
	switch {
	case file == "cgroup.procs":
		value = strings.TrimSpace(cur + "\n" + value)
	case file == "cgroup.subtree_control":
		c := strings.TrimPrefix(value, "+")
		offered := filepath.Join(filepath.Dir(path), "cgroup.controllers")
		if dir := filepath.Dir(path); dir != f.v2 { // a child's cgroup.controllers follows its parent
			offered = filepath.Join(filepath.Dir(dir), "cgroup.subtree_control")
		}
		if !slices.Contains(strings.Fields(f.get(offered)), c) {
			return syscall.ENOENT
		}
		value = strings.TrimSpace(cur + " " + c)
		entries, _ := os.ReadDir(filepath.Dir(path)) // the children get the controller's files
		for _, e := range entries {
			if e.IsDir() {
				f.fillV2(filepath.Join(filepath.Dir(path), e.Name()), c)
			}
		}
	case file == "memory.limit_in_bytes":
		n, err := strconv.ParseInt(value, 10, 64)
		if err != nil {
			return syscall.EINVAL
		}
		if n < 0 {
			n = 9223372036854771712
		}
		value = strconv.FormatInt(n/4096*4096, 10)
	case file == "cpuset.cpus" && !strings.HasPrefix(path, f.v2+"/"):
		parent, _ := readCPUList(filepath.Join(filepath.Dir(filepath.Dir(path)), "cpuset.cpus"))
		cpus, _ := parseCPUList(value)
		if len(missing(cpus, parent)) > 0 {
			return syscall.EINVAL
		}
	case file == "io.max" || strings.HasPrefix(file, "blkio.throttle."):
		dev, rule, _ := strings.Cut(value, " ")
		var lines []string
		for _, l := range strings.Split(cur, "\n") {
			if l != "" && !strings.HasPrefix(l, dev+" ") {
				lines = append(lines, l)
			}
		}
		if rule != "0" && rule != "riops=max wiops=max rbps=max wbps=max" {
			lines = append(lines, value)
		}
		slices.Sort(lines)
		value = strings.Join(lines, "\n")
	}
	return os.WriteFile(path, []byte(value+"\n"), 0o644)
}

func wantErr(t *testing.T, err error, parts ...string) {
	t.Helper()
	if err == nil {
		t.Fatalf("no error, want one containing %q", parts)
	}
	for _, p := range parts {
		if !strings.Contains(err.Error(), p) {
			t.Fatalf("error %q does not contain %q", err, p)
		}
	}
}

func TestParseCPUList(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want []int
		err  string
	}{
		{in: "0", want: []int{0}},
		{in: "0-3", want: []int{0, 1, 2, 3}},
		{in: "0,2", want: []int{0, 2}},
		{in: " 2-3,0 \n", want: []int{0, 2, 3}},
		{in: "3,1-2,2", want: []int{1, 2, 3}},
		{in: "", err: "empty"},
		{in: " \n", err: "empty"},
		{in: ",", err: "want CPU numbers"},
		{in: "1,", err: "want CPU numbers"},
		{in: "-1", err: "want CPU numbers"},
		{in: "a", err: "want CPU numbers"},
		{in: "1-2-3", err: "want CPU numbers"},
		{in: "1 ,2", err: "want CPU numbers"},
		{in: "3-1", err: "backwards"},
		{in: "99999", err: "out of range"},
	} {
		got, err := parseCPUList(tc.in)
		if tc.err != "" {
			wantErr(t, err, tc.err)
			continue
		}
		if err != nil || !slices.Equal(got, tc.want) {
			t.Errorf("parseCPUList(%q) = %v, %v; want %v", tc.in, got, err, tc.want)
		}
	}
}

func TestFormatCPUList(t *testing.T) {
	for _, tc := range []struct {
		in   []int
		want string
	}{
		{nil, ""},
		{[]int{0}, "0"},
		{[]int{0, 1}, "0-1"},
		{[]int{0, 2}, "0,2"},
		{[]int{0, 1, 2, 5, 7, 8}, "0-2,5,7-8"},
	} {
		if got := formatCPUList(tc.in); got != tc.want {
			t.Errorf("formatCPUList(%v) = %q, want %q", tc.in, got, tc.want)
		}
	}
}

func TestCheckName(t *testing.T) {
	for _, ok := range []string{"pg1", "a", "PG_main-2", "0x", strings.Repeat("a", 64)} {
		if err := checkName(ok); err != nil {
			t.Errorf("checkName(%q): %v", ok, err)
		}
	}
	for _, bad := range []string{"", ".", "..", "../x", "a/b", "/a", "a..b", "a.b", "-x", "_x", "a b", strings.Repeat("a", 65)} {
		if err := checkName(bad); err == nil {
			t.Errorf("checkName(%q) accepted", bad)
		}
	}
}

func TestCheckLimits(t *testing.T) {
	newFake(t)
	for _, l := range []Limits{
		{},
		{MemoryBytes: 1 << 20},
		{MemoryBytes: 2 << 30, CPUs: "0"},
		{CPUs: "0-3"},
		{CPUs: "1,3"},
		{IO: []IOLimit{{Device: "8:0", ReadIOPS: 100}, {Device: "8:16"}}},
	} {
		if err := checkLimits(l); err != nil {
			t.Errorf("checkLimits(%+v): %v", l, err)
		}
	}
	for _, tc := range []struct {
		l     Limits
		parts []string
	}{
		{Limits{MemoryBytes: -1}, []string{"memory limit -1"}},
		{Limits{MemoryBytes: 2048}, []string{"memory limit 2048", "1 MiB"}},
		{Limits{CPUs: "4"}, []string{`cpuset "4"`, "CPU 4 not online", "CPUs are 0-3"}},
		{Limits{CPUs: "2-5"}, []string{"CPUs 4-5 not online", "0-3"}},
		{Limits{CPUs: " "}, []string{"empty CPU list"}},
		{Limits{CPUs: ","}, []string{`cpuset ","`}},
		{Limits{IO: []IOLimit{{Device: "sda"}}}, []string{"major:minor"}},
		{Limits{IO: []IOLimit{{Device: "9:9"}}}, []string{"no such block device"}},
		{Limits{IO: []IOLimit{{Device: "8:1"}}}, []string{"partition"}},
		{Limits{IO: []IOLimit{{Device: "8:0"}, {Device: "8:0"}}}, []string{"twice"}},
		{Limits{IO: []IOLimit{{Device: "8:0", WriteBPS: -1}}}, []string{"negative"}},
	} {
		wantErr(t, checkLimits(tc.l), tc.parts...)
	}
}

func TestSupport(t *testing.T) {
	t.Run("v1", func(t *testing.T) {
		newFake(t).withV1().withV2("unified", "hugetlb")
		if v, err := Support(); v != V1 || err != nil {
			t.Fatalf("Support() = %v, %v; want V1", v, err)
		}
	})
	t.Run("hybrid without controllers", func(t *testing.T) {
		f := newFake(t).withV2("unified", "hugetlb")
		_, err := Support()
		wantErr(t, err, "cgroup v1 memory: controller not mounted", `offers controllers "hugetlb", not memory, cpuset`)
		f.put(filepath.Join(f.root, "memory/memory.limit_in_bytes"), "0")
		_, err = Support()
		wantErr(t, err, "cgroup v1 cpuset: controller not mounted")
	})
	t.Run("v2", func(t *testing.T) {
		newFake(t).withV2("", "cpuset cpu io memory pids")
		if v, err := Support(); v != V2 || err != nil {
			t.Fatalf("Support() = %v, %v; want V2", v, err)
		}
	})
	t.Run("v2 delegated root with processes", func(t *testing.T) {
		f := newFake(t).withV2("", "cpuset memory")
		f.put(filepath.Join(f.v2, "cgroup.type"), "domain")
		_, err := Support()
		wantErr(t, err, "holds processes", "no internal processes")
		f.put(filepath.Join(f.v2, "cgroup.procs"), "")
		if v, err := Support(); v != V2 || err != nil {
			t.Fatalf("Support() = %v, %v; want V2", v, err)
		}
	})
	t.Run("nothing", func(t *testing.T) {
		newFake(t)
		_, err := Support()
		wantErr(t, err, "no usable hierarchy", "no unified hierarchy")
	})
}

func TestCreateV1(t *testing.T) {
	f := newFake(t).withV1()
	g, err := Create("pg", Limits{MemoryBytes: 64 << 20, CPUs: "2,1"})
	if err != nil {
		t.Fatal(err)
	}
	if g.Version() != V1 || g.Name() != "pg" {
		t.Fatalf("group %v %s", g.Version(), g.Name())
	}
	for file, want := range map[string]string{
		"memory/storbench/pg/memory.limit_in_bytes": "67108864",
		"cpuset/storbench/cpuset.cpus":              "0-3",
		"cpuset/storbench/cpuset.mems":              "0",
		"cpuset/storbench/pg/cpuset.cpus":           "1-2",
		"cpuset/storbench/pg/cpuset.mems":           "0",
	} {
		if got := f.get(filepath.Join(f.root, file)); got != want {
			t.Errorf("%s = %q, want %q", file, got, want)
		}
	}
	if isDir(filepath.Join(f.root, "blkio/storbench/pg")) {
		t.Error("blkio group made without IO limits")
	}
	wantApplied := []string{"memory.limit_in_bytes=67108864", "cpuset.cpus=1-2", "cpuset.mems=0"}
	if got := g.Applied(); !slices.Equal(got, wantApplied) {
		t.Errorf("Applied() = %q, want %q", got, wantApplied)
	}

	if err := g.Add(4242); err != nil {
		t.Fatal(err)
	}
	wantErr(t, g.Add(0), "not a process id")
	if pids, err := g.Pids(); err != nil || !slices.Equal(pids, []int{4242}) {
		t.Fatalf("Pids() = %v, %v", pids, err)
	}
	wantErr(t, g.Destroy(), "cgroup v1: destroy storbench/pg: 1 process(es) still in the group (4242)")

	// Re-use with other limits, then with none: everything is reset.
	g, err = Create("pg", Limits{MemoryBytes: 1 << 30, CPUs: "3", IO: []IOLimit{{Device: "8:0", ReadIOPS: 500, WriteBPS: 1 << 20}}})
	if err != nil {
		t.Fatal(err)
	}
	wantApplied = []string{
		"memory.limit_in_bytes=1073741824", "cpuset.cpus=3", "cpuset.mems=0",
		"blkio.throttle.read_iops_device=8:0 500", "blkio.throttle.write_bps_device=8:0 1048576",
	}
	if got := g.Applied(); !slices.Equal(got, wantApplied) {
		t.Errorf("Applied() = %q, want %q", got, wantApplied)
	}
	f.put(filepath.Join(f.root, "blkio/storbench/pg/blkio.throttle.read_bps_device"), "8:16 1000") // a stale rule
	g, err = Create("pg", Limits{})
	if err != nil {
		t.Fatal(err)
	}
	wantApplied = []string{"memory.limit_in_bytes=9223372036854771712 (no limit)", "cpuset.cpus=0-3", "cpuset.mems=0"}
	if got := g.Applied(); !slices.Equal(got, wantApplied) {
		t.Errorf("Applied() after reset = %q, want %q", got, wantApplied)
	}

	o, err := Open("pg")
	if err != nil {
		t.Fatal(err)
	}
	if len(o.dirs) != 3 || o.Version() != V1 {
		t.Fatalf("Open found %+v", o.dirs)
	}
	f.put(filepath.Join(f.root, "memory/storbench/pg/cgroup.procs"), "")
	f.put(filepath.Join(f.root, "cpuset/storbench/pg/cgroup.procs"), "")
	if err := o.Destroy(); err != nil {
		t.Fatal(err)
	}
	for _, c := range []string{"memory", "cpuset", "blkio"} {
		if _, err := os.Stat(filepath.Join(f.root, c, "storbench/pg")); !errors.Is(err, fs.ErrNotExist) {
			t.Errorf("%s group left after Destroy: %v", c, err)
		}
		if !isDir(filepath.Join(f.root, c, "storbench")) {
			t.Errorf("%s parent removed", c)
		}
	}
	_, err = Open("pg")
	if !errors.Is(err, fs.ErrNotExist) {
		t.Fatalf("Open after Destroy: %v", err)
	}
}

func TestCreateV1Rejects(t *testing.T) {
	f := newFake(t).withV1()
	f.put(filepath.Join(f.root, "cpuset/cpuset.cpus"), "0-1") // a machine with 4 CPUs, 2 allowed here
	for _, tc := range []struct {
		name  string
		l     Limits
		parts []string
	}{
		{"pg", Limits{CPUs: "2"}, []string{"cgroup v1 cpuset", "CPU 2 outside", "0-1"}},
		{"pg", Limits{CPUs: "7"}, []string{"not online", "0-3"}},
		{"pg", Limits{MemoryBytes: 100}, []string{"at least"}},
		{"../pg", Limits{}, []string{"group name"}},
		{"a/b", Limits{}, []string{"group name"}},
		{"..", Limits{}, []string{"group name"}},
	} {
		_, err := Create(tc.name, tc.l)
		wantErr(t, err, tc.parts...)
	}
	for _, c := range []string{"memory", "cpuset"} {
		if _, err := os.Stat(filepath.Join(f.root, c, "storbench/pg")); err == nil {
			t.Errorf("%s group made by a rejected Create", c)
		}
	}

	// A write the kernel refuses: the error names version, controller and file, and the
	// directories this call made are removed again.
	f.fail["memory.limit_in_bytes"] = syscall.EBUSY
	_, err := Create("pg", Limits{MemoryBytes: 64 << 20})
	wantErr(t, err, `cgroup v1 memory: write memory.limit_in_bytes="67108864": device or resource busy`)
	for _, c := range []string{"memory", "cpuset"} {
		if _, err := os.Stat(filepath.Join(f.root, c, "storbench/pg")); err == nil {
			t.Errorf("%s group left by a failed Create", c)
		}
	}
}

func TestCreateV2(t *testing.T) {
	f := newFake(t).withV2("", "cpuset cpu io memory pids")
	g, err := Create("pg", Limits{MemoryBytes: 64 << 20, CPUs: "0"})
	if err != nil {
		t.Fatal(err)
	}
	if g.Version() != V2 {
		t.Fatalf("version %v", g.Version())
	}
	for file, want := range map[string]string{
		"cgroup.subtree_control":           "memory cpuset",
		"storbench/cgroup.subtree_control": "memory cpuset",
		"storbench/pg/memory.max":          "67108864",
		"storbench/pg/cpuset.cpus":         "0",
	} {
		if got := f.get(filepath.Join(f.root, file)); got != want {
			t.Errorf("%s = %q, want %q", file, got, want)
		}
	}
	want := []string{"memory.max=67108864", "cpuset.cpus=0", "cpuset.cpus.effective=0-3"}
	if got := g.Applied(); !slices.Equal(got, want) {
		t.Errorf("Applied() = %q, want %q", got, want)
	}

	g, err = Create("pg", Limits{IO: []IOLimit{{Device: "8:0", ReadIOPS: 100, WriteBPS: 1 << 20}}})
	if err != nil {
		t.Fatal(err)
	}
	// io is enabled for storbench's children after pg was made; pg gets io.max then.
	want = []string{"memory.max=max", "cpuset.cpus= (all of the parent's)", "cpuset.cpus.effective=0-3",
		"io.max=8:0 riops=100 wiops=max rbps=max wbps=1048576"}
	if got := g.Applied(); !slices.Equal(got, want) {
		t.Errorf("Applied() = %q, want %q", got, want)
	}
	if got := f.get(filepath.Join(f.root, "storbench/cgroup.subtree_control")); got != "memory cpuset io" {
		t.Errorf("storbench/cgroup.subtree_control = %q", got)
	}
	g, err = Create("pg2", Limits{IO: []IOLimit{{Device: "8:0", ReadIOPS: 100, WriteBPS: 1 << 20}}})
	if err != nil {
		t.Fatal(err)
	}
	if got := f.get(filepath.Join(f.root, "storbench/pg2/io.max")); got != "8:0 riops=100 wiops=max rbps=max wbps=1048576" {
		t.Errorf("io.max = %q", got)
	}
	if got := g.Applied(); !slices.Contains(got, "io.max=8:0 riops=100 wiops=max rbps=max wbps=1048576") {
		t.Errorf("Applied() = %q", got)
	}
	if _, err := Create("pg2", Limits{}); err != nil {
		t.Fatal(err)
	}
	if got := f.get(filepath.Join(f.root, "storbench/pg2/io.max")); got != "" {
		t.Errorf("io.max after reset = %q", got)
	}

	if err := g.Add(77); err != nil {
		t.Fatal(err)
	}
	wantErr(t, g.Destroy(), "cgroup v2: destroy storbench/pg2: 1 process(es) still in the group (77)")
	f.put(filepath.Join(f.root, "storbench/pg2/cgroup.procs"), "")
	o, err := Open("pg2")
	if err != nil || o.Version() != V2 {
		t.Fatalf("Open: %v", err)
	}
	if err := o.Destroy(); err != nil {
		t.Fatal(err)
	}
	if isDir(filepath.Join(f.root, "storbench/pg2")) {
		t.Error("group left after Destroy")
	}
}

func TestCreateV2Refuses(t *testing.T) {
	t.Run("processes in storbench", func(t *testing.T) {
		f := newFake(t).withV2("unified", "cpuset memory")
		if _, err := Create("pg", Limits{}); err != nil {
			t.Fatal(err)
		}
		f.put(filepath.Join(f.v2, "storbench/cgroup.procs"), "99")
		_, err := Create("pg2", Limits{})
		wantErr(t, err, "cgroup v2", "holds processes (99)", "no internal processes")
		if isDir(filepath.Join(f.v2, "storbench/pg2")) {
			t.Error("group made anyway")
		}
	})
	t.Run("io not offered", func(t *testing.T) {
		f := newFake(t).withV2("", "cpuset memory")
		_, err := Create("pg", Limits{IO: []IOLimit{{Device: "8:0", ReadBPS: 1}}})
		wantErr(t, err, "not io")
		if isDir(filepath.Join(f.v2, "storbench")) {
			t.Error("directory made anyway")
		}
	})
	t.Run("write refused", func(t *testing.T) {
		f := newFake(t).withV2("", "cpuset memory")
		f.fail["cpuset.cpus"] = syscall.EINVAL
		_, err := Create("pg", Limits{CPUs: "1"})
		wantErr(t, err, `cgroup v2 cpuset: write cpuset.cpus="1": invalid argument`)
		if isDir(filepath.Join(f.v2, "storbench/pg")) {
			t.Error("half-made group left")
		}
	})
}

// MemoryLimit and OOMKills read what the kernel shows, in either version.
func TestMemoryLimitAndOOMKills(t *testing.T) {
	for _, c := range []struct {
		name           string
		setup          func(*fake)
		limit, oomFile string
		oomLine        string
	}{
		{"v1", func(f *fake) { f.withV1() }, "memory/storbench/pg/memory.limit_in_bytes",
			"memory/storbench/pg/memory.oom_control", "oom_kill_disable 0\nunder_oom 0\noom_kill 3"},
		{"v2", func(f *fake) { f.withV2("", "cpuset memory") }, "storbench/pg/memory.max",
			"storbench/pg/memory.events", "low 0\nhigh 0\nmax 5\noom 3\noom_kill 3"},
	} {
		t.Run(c.name, func(t *testing.T) {
			f := newFake(t)
			c.setup(f)
			g, err := Create("pg", Limits{})
			if err != nil {
				t.Fatal(err)
			}
			if n, err := g.MemoryLimit(); err != nil || n != 0 {
				t.Errorf("MemoryLimit() without a limit = %d, %v; want 0", n, err)
			}
			if n, err := g.OOMKills(); err != nil || n != 0 {
				t.Errorf("OOMKills() = %d, %v; want 0", n, err)
			}
			// Another process changes the limit; the group reads what is in force.
			f.put(filepath.Join(f.root, c.limit), "134217728")
			f.put(filepath.Join(f.root, c.oomFile), c.oomLine)
			if n, err := g.MemoryLimit(); err != nil || n != 128<<20 {
				t.Errorf("MemoryLimit() = %d, %v; want %d", n, err, 128<<20)
			}
			if n, err := g.OOMKills(); err != nil || n != 3 {
				t.Errorf("OOMKills() = %d, %v; want 3", n, err)
			}
		})
	}
}
