package metrics

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

// TestProvenanceStacks: LVM over two disks' partitions and a volume over md RAID on
// partitions, layouts this machine cannot make, read from fixture /sys trees: every
// device between the path and the disks, each once, with what it is made of, and a
// disk's queue as sysfs gives it.
func TestProvenanceStacks(t *testing.T) {
	f := newDeviceFixture(t)
	f.disk(ata1Bus, "sda", "8:0")
	f.part("sda", "sda2", "8:2")
	f.part("sda", "sda3", "8:3")
	f.disk(ata2Bus, "sdb", "8:16")
	f.part("sdb", "sdb1", "8:17")
	f.virtual("dm-0", "253:0", "sdb1", "sda2")
	f.sysWrite("dm-0", "dm/name", "vg-data\n")
	f.virtual("dm-1", "253:1", "sda3")
	f.sysWrite("dm-1", "dm/name", "vg-wal\n")
	for file, content := range map[string]string{"device/vendor": "ATA     \n", "device/model": "ST4000NM0035\n", "queue/rotational": "1\n",
		"queue/scheduler": "none [mq-deadline] kyber bfq\n", "queue/nr_requests": "64\n", "queue/logical_block_size": "512\n",
		"queue/physical_block_size": "4096\n", "queue/write_cache": "write back\n", "queue/discard_max_bytes": "0\n"} {
		f.sysWrite("sda", file, content)
	}
	f.sysWrite("sdb", "queue/discard_max_bytes", "2147450880\n")
	f.disk(ata3Bus, "sdc", "8:32")
	f.part("sdc", "sdc1", "8:33")
	f.disk(ata4Bus, "sdd", "8:48")
	f.part("sdd", "sdd1", "8:49")
	f.virtual("md0", "9:0", "sdc1", "sdd1")
	f.sysWrite("md0", "md/level", "raid10\n")
	f.virtual("dm-2", "253:2", "md0")
	f.sysWrite("dm-2", "dm/name", "vg--md-pg\n")
	f.mount("27 1 8:2 / / rw,relatime shared:1 - ext4 /dev/sda2 rw,errors=remount-ro")
	f.mount("50 27 253:0 / /srv/pg rw,noatime shared:30 - xfs /dev/mapper/vg-data rw,attr2,inode64,noquota")
	f.mount("61 27 253:2 / /srv/md rw,noatime - xfs /dev/mapper/vg--md-pg rw,logbsize=256k")
	f.path("/srv/pg/data", "253:0")
	f.path("/srv/md/data", "253:2")

	p := f.resolve("/srv/pg/data", "data")
	if want := []string{"dm-0 dm vg-data sda2+sdb1", "sda2 partition sda", "sda disk", "sdb1 partition sdb", "sdb disk"}; !slices.Equal(stackShape(p.Stack), want) {
		t.Errorf("LVM stack %q, want %q", stackShape(p.Stack), want)
	}
	if p.MountOptions != "rw,noatime,attr2,inode64,noquota" {
		t.Errorf("mount options %q, want the mount's then the filesystem's, each once", p.MountOptions)
	}
	sda := p.Stack[slices.IndexFunc(p.Stack, func(d DeviceInfo) bool { return d.Name == "sda" })]
	if sda.Vendor != "ATA" || sda.Model != "ST4000NM0035" || sda.Rotational == nil || !*sda.Rotational || sda.Scheduler != "mq-deadline" ||
		sda.NrRequests != 64 || sda.LogicalBlock != 512 || sda.PhysicalBlock != 4096 || sda.WriteCache != "write back" || sda.Discard == nil || *sda.Discard {
		t.Errorf("sda %+v, want its sysfs queue and model", sda)
	}
	if sdb := p.Stack[len(p.Stack)-1]; sdb.Discard == nil || !*sdb.Discard || sdb.Rotational != nil || sdb.Scheduler != "" {
		t.Errorf("sdb %+v: want discard and nothing sysfs does not say", sdb)
	}
	if sda2 := p.Stack[1]; !slices.Equal(sda2.Holders, []string{"dm-0"}) {
		t.Errorf("sda2 holders %v, want dm-0", sda2.Holders)
	}

	p = f.resolve("/srv/md/data", "data")
	if want := []string{"dm-2 dm vg--md-pg md0", "md0 md raid10 sdc1+sdd1", "sdc1 partition sdc", "sdc disk", "sdd1 partition sdd", "sdd disk"}; !slices.Equal(stackShape(p.Stack), want) {
		t.Errorf("md stack %q, want %q", stackShape(p.Stack), want)
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
