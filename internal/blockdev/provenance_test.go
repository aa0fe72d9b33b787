package blockdev

import (
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/storbench/storbench/internal/testsupport/looptest"
)

// stackShape is a stack as "name kind [what it is made of]", one entry per device.
func stackShape(stack []DeviceInfo) []string {
	var out []string
	for _, d := range stack {
		s := d.Name + " " + d.Kind
		for _, part := range []string{d.DMName, d.MDLevel, d.Parent, strings.Join(d.Slaves, "+")} {
			if part != "" {
				s += " " + part
			}
		}
		out = append(out, s)
	}
	return out
}

// checkStack compares a placement's stack with its shapes (stackShape), top first.
func checkStack(t *testing.T, p Placement, want ...string) {
	t.Helper()
	if got := stackShape(p.Stack); !slices.Equal(got, want) {
		t.Errorf("%s: stack %q, want %q", p.Path, got, want)
	}
}

// TestProvenanceLoop: a filesystem on a loop device of the test's own records the
// loop device and its backing file, then the devices of the filesystem holding
// that file, ext4 with the options /proc/mounts lists, and the loop device's queue
// as /sys/block says it.
func TestProvenanceLoop(t *testing.T) {
	d := looptest.Mount(t, 32<<20)
	p, err := NewResolver().Resolve(d.Dir, "data")
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("%s: %s (%s), stack %q", d.Dir, p.FSType, p.MountOptions, stackShape(p.Stack))
	if p.FSType != "ext4" || p.MountOptions == "" || !sameOptions(p.MountOptions, procMountsOptions(t, d.Dir)) {
		t.Errorf("%s: %s mounted %q, want ext4 and /proc/mounts' %q", d.Dir, p.FSType, p.MountOptions, procMountsOptions(t, d.Dir))
	}
	if len(p.Stack) < 2 {
		t.Fatalf("stack %+v: want the loop device and what holds its backing file", p.Stack)
	}
	loop := p.Stack[0]
	if loop.Name != d.Name || loop.Kind != "loop" || loop.BackingFile != d.Backing {
		t.Errorf("top of the stack %+v, want %s, a loop over %s", loop, d.Name, d.Backing)
	}
	backing, err := NewResolver().Resolve(filepath.Dir(d.Backing), "backing")
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(stackShape(p.Stack[1:]), stackShape(backing.Stack)) {
		t.Errorf("under the loop %q, want the backing file's filesystem's %q", stackShape(p.Stack[1:]), stackShape(backing.Stack))
	}
	queue := func(file string) string {
		b, err := os.ReadFile(filepath.Join("/sys/block", d.Name, "queue", file))
		if err != nil {
			t.Fatal(err)
		}
		return strings.TrimSpace(string(b))
	}
	if rot := queue("rotational") == "1"; loop.Rotational == nil || *loop.Rotational != rot {
		t.Errorf("rotational %v, /sys says %v", loop.Rotational, rot)
	}
	if !strings.Contains(queue("scheduler"), "["+loop.Scheduler+"]") {
		t.Errorf("scheduler %q, /sys says %q", loop.Scheduler, queue("scheduler"))
	}
	for file, got := range map[string]int{"logical_block_size": loop.LogicalBlock, "physical_block_size": loop.PhysicalBlock, "nr_requests": loop.NrRequests} {
		if want := queue(file); want != strconv.Itoa(got) {
			t.Errorf("%s %d, /sys says %s", file, got, want)
		}
	}
}

// procMountsOptions are /proc/mounts' options of the mount on dir.
func procMountsOptions(t *testing.T, dir string) string {
	b, err := os.ReadFile("/proc/mounts")
	if err != nil {
		t.Fatal(err)
	}
	for _, line := range strings.Split(string(b), "\n") {
		if f := strings.Fields(line); len(f) > 3 && f[1] == dir {
			return f[3]
		}
	}
	t.Fatalf("%s is not in /proc/mounts", dir)
	return ""
}

// sameOptions compares two option lists as sets.
func sameOptions(a, b string) bool {
	x, y := strings.Split(a, ","), strings.Split(b, ",")
	slices.Sort(x)
	slices.Sort(y)
	return slices.Equal(x, y)
}

// TestHostScriptLoop: HostScript run by sh on this machine, read back by ReadHost,
// places a loop device's filesystem (and the directory holding its backing file)
// exactly as this machine's Resolver does: what a study records for an SSH-reached
// host is what it records here. A path the host cannot stat is not found.
func TestHostScriptLoop(t *testing.T) {
	d := looptest.Mount(t, 32<<20)
	dirs := []string{d.Dir, filepath.Dir(d.Backing)}
	cmd := exec.Command("sh", "-c", HostScript)
	cmd.Stdin = strings.NewReader(HostInput(append(dirs, "/nonexistent/pg")...))
	out, err := cmd.Output()
	if err != nil {
		t.Fatal(err)
	}
	host, err := ReadHost(string(out))
	if err != nil {
		t.Fatal(err)
	}
	defer host.Close()
	for _, dir := range dirs {
		got, err := host.Resolve(dir, "data")
		if err != nil {
			t.Fatal(err)
		}
		want, err := NewResolver().Resolve(dir, "data")
		if err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(got, want) {
			t.Errorf("%s through HostScript:\n%+v\nhere:\n%+v", dir, got, want)
		}
	}
	if _, err := host.Resolve("/nonexistent/pg", "data"); err == nil || !strings.Contains(err.Error(), "does not exist") {
		t.Errorf("a path the host has not: %v", err)
	}
}
