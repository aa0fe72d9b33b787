package blockdev

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"golang.org/x/sys/unix"

	"github.com/storbench/storbench/internal/input"
	"github.com/storbench/storbench/internal/testsupport/looptest"
)

// deviceFixture is a /sys and /proc tree laid out as the kernel does it (devices under
// /sys/devices, dev/block and class/block as relative symlinks), with a fake stat that
// knows only the paths it is told about.
type deviceFixture struct {
	t         *testing.T
	sys, proc string
	dirs      map[string]string // kernel name → its directory under sys/devices
	devs      map[string]uint64 // path → st_dev
	denied    map[string]bool   // paths stat may not look at
	mountinfo []string
}

func newDeviceFixture(t *testing.T) *deviceFixture {
	root := t.TempDir()
	return &deviceFixture{t: t, sys: filepath.Join(root, "sys"), proc: filepath.Join(root, "proc"),
		dirs: map[string]string{}, devs: map[string]uint64{}, denied: map[string]bool{}}
}

// disk adds a whole disk below a bus path, e.g. "pci0000:00/0000:00:02.0/virtio1".
func (f *deviceFixture) disk(bus, name, majMin string) {
	f.add(name, filepath.Join(f.sys, "devices", bus, "block", name), majMin)
}

// part adds a partition inside its disk's directory, as sysfs nests them.
func (f *deviceFixture) part(disk, name, majMin string) {
	dir := filepath.Join(f.dirs[disk], name)
	f.add(name, dir, majMin)
	n := strings.TrimRightFunc(name, func(r rune) bool { return r >= '0' && r <= '9' })
	f.write(filepath.Join(dir, "partition"), name[len(n):]+"\n")
}

// virtual adds a device under devices/virtual/block (dm, md, loop), stacked on slaves.
func (f *deviceFixture) virtual(name, majMin string, slaves ...string) {
	dir := filepath.Join(f.sys, "devices", "virtual", "block", name)
	f.add(name, dir, majMin)
	for _, s := range slaves {
		f.symlink(f.dirs[s], filepath.Join(dir, "slaves", s))
		f.symlink(dir, filepath.Join(f.dirs[s], "holders", name))
	}
}

func (f *deviceFixture) add(name, dir, majMin string) {
	f.dirs[name] = dir
	f.write(filepath.Join(dir, "dev"), majMin+"\n")
	for _, sub := range []string{"slaves", "holders"} {
		if err := os.MkdirAll(filepath.Join(dir, sub), 0o755); err != nil {
			f.t.Fatal(err)
		}
	}
	f.symlink(dir, filepath.Join(f.sys, "dev", "block", majMin))
	f.symlink(dir, filepath.Join(f.sys, "class", "block", name))
}

// symlink makes link point to target with a relative path, as sysfs links do.
func (f *deviceFixture) symlink(target, link string) {
	if err := os.MkdirAll(filepath.Dir(link), 0o755); err != nil {
		f.t.Fatal(err)
	}
	rel, err := filepath.Rel(filepath.Dir(link), target)
	if err != nil {
		f.t.Fatal(err)
	}
	if err := os.Symlink(rel, link); err != nil {
		f.t.Fatal(err)
	}
}

func (f *deviceFixture) write(file, content string) {
	if err := os.MkdirAll(filepath.Dir(file), 0o755); err != nil {
		f.t.Fatal(err)
	}
	if err := os.WriteFile(file, []byte(content), 0o644); err != nil {
		f.t.Fatal(err)
	}
}

// sysWrite writes a file of a device's sysfs directory, e.g. ("dm-0", "dm/name").
func (f *deviceFixture) sysWrite(dev, rel, content string) {
	f.write(filepath.Join(f.dirs[dev], rel), content)
}

func (f *deviceFixture) mount(line string) { f.mountinfo = append(f.mountinfo, line) }

// path makes path exist for the fake stat, on the filesystem of device majMin.
func (f *deviceFixture) path(path, majMin string) {
	var major, minor uint32
	if _, err := fmt.Sscanf(majMin, "%d:%d", &major, &minor); err != nil {
		f.t.Fatal(err)
	}
	f.devs[path] = unix.Mkdev(major, minor)
}

func (f *deviceFixture) resolver() Resolver {
	f.write(filepath.Join(f.proc, "self", "mountinfo"), strings.Join(f.mountinfo, "\n")+"\n")
	return Resolver{ProcRoot: f.proc, SysRoot: f.sys, stat: func(p string) (uint64, error) {
		if d, ok := f.devs[p]; ok {
			return d, nil
		}
		if f.denied[p] {
			return 0, &fs.PathError{Op: "stat", Path: p, Err: unix.EACCES}
		}
		return 0, &fs.PathError{Op: "stat", Path: p, Err: unix.ENOENT}
	}}
}

func (f *deviceFixture) resolve(path, role string) Placement {
	f.t.Helper()
	p, err := f.resolver().Resolve(path, role)
	if err != nil {
		f.t.Fatalf("Resolve(%q): %v", path, err)
	}
	return p
}

// Buses of the fixture disks, as on real machines.
const (
	virtioBus = "pci0000:00/0000:00:02.0/virtio1"
	ata1Bus   = "pci0000:00/0000:00:1f.2/ata1/host0/target0:0:0/0:0:0:0"
	ata2Bus   = "pci0000:00/0000:00:1f.2/ata2/host1/target1:0:0/1:0:0:0"
	ata3Bus   = "pci0000:00/0000:00:1f.2/ata3/host2/target2:0:0/2:0:0:0"
	ata4Bus   = "pci0000:00/0000:00:1f.2/ata4/host3/target3:0:0/3:0:0:0"
	nvmeBus   = "pci0000:00/0000:00:1d.0/0000:3d:00.0/nvme/nvme0"
)

func checkPlacement(t *testing.T, got Placement, devices []BlockDevice, chain, note string) {
	t.Helper()
	if !slices.Equal(got.Devices, devices) {
		t.Errorf("%s: devices %v, want %v", got.Path, got.Devices, devices)
	}
	if got.Chain != chain {
		t.Errorf("%s: chain %q, want %q", got.Path, got.Chain, chain)
	}
	if !strings.Contains(got.Note, note) || (note == "") != (got.Note == "") {
		t.Errorf("%s: note %q, want %q", got.Path, got.Note, note)
	}
}

func checkMount(t *testing.T, got Placement, mount, fsType, source string) {
	t.Helper()
	if got.Mount != mount || got.FSType != fsType || got.Source != source {
		t.Errorf("%s: mount %q %q %q, want %q %q %q", got.Path, got.Mount, got.FSType, got.Source, mount, fsType, source)
	}
}

func TestDeviceWholeDisk(t *testing.T) {
	f := newDeviceFixture(t)
	f.disk(virtioBus, "vda", "254:0")
	f.mount("27 1 254:0 / / rw,relatime shared:1 - ext4 /dev/vda rw,discard")
	f.path("/srv/pg/data", "254:0")

	p := f.resolve("/srv/pg/data", "data")
	checkPlacement(t, p, []BlockDevice{{"vda", 254, 0}}, "vda", "")
	checkMount(t, p, "/", "ext4", "/dev/vda")
	if p.Role != "data" || p.Path != "/srv/pg/data" {
		t.Errorf("role %q path %q", p.Role, p.Path)
	}
}

func TestDevicePartition(t *testing.T) {
	f := newDeviceFixture(t)
	f.disk(nvmeBus, "nvme0n1", "259:0")
	f.part("nvme0n1", "nvme0n1p1", "259:1")
	f.part("nvme0n1", "nvme0n1p2", "259:2")
	f.mount("27 1 259:1 / / rw,relatime shared:1 - ext4 /dev/nvme0n1p1 rw")
	f.mount("45 27 259:2 / /var/lib/postgresql rw,noatime shared:25 - xfs /dev/nvme0n1p2 rw,attr2,inode64,logbufs=8,noquota")
	f.path("/var/lib/postgresql/16/main", "259:2")

	p := f.resolve("/var/lib/postgresql/16/main", "data")
	checkPlacement(t, p, []BlockDevice{{"nvme0n1", 259, 0}}, "nvme0n1p2 → nvme0n1", "")
	checkMount(t, p, "/var/lib/postgresql", "xfs", "/dev/nvme0n1p2")
}

func TestDeviceLVMOverTwoDisks(t *testing.T) {
	f := newDeviceFixture(t)
	f.disk(ata1Bus, "sda", "8:0")
	f.part("sda", "sda2", "8:2")
	f.part("sda", "sda3", "8:3")
	f.part("sda", "sda4", "8:4")
	f.disk(ata2Bus, "sdb", "8:16")
	f.part("sdb", "sdb1", "8:17")
	// Listed out of name order, to show the result does not depend on it.
	f.virtual("dm-0", "253:0", "sdb1", "sda2")
	f.sysWrite("dm-0", "dm/name", "vg-data\n")
	f.virtual("dm-1", "253:1", "sda4", "sda3")
	f.sysWrite("dm-1", "dm/name", "vg-wal\n")
	for file, content := range map[string]string{"device/vendor": "ATA     \n", "device/model": "ST4000NM0035\n", "queue/rotational": "1\n",
		"queue/scheduler": "none [mq-deadline] kyber bfq\n", "queue/nr_requests": "64\n", "queue/logical_block_size": "512\n",
		"queue/physical_block_size": "4096\n", "queue/write_cache": "write back\n", "queue/discard_max_bytes": "0\n"} {
		f.sysWrite("sda", file, content)
	}
	f.sysWrite("sdb", "queue/discard_max_bytes", "2147450880\n")
	f.mount("27 1 8:2 / / rw,relatime shared:1 - ext4 /dev/sda2 rw")
	f.mount("50 27 253:0 / /srv/pg rw,noatime shared:30 - xfs /dev/mapper/vg-data rw,attr2,inode64,noquota")
	f.mount("51 50 253:1 / /srv/pg/wal rw,noatime shared:31 - ext4 /dev/mapper/vg-wal rw")
	f.path("/srv/pg/data", "253:0")
	f.path("/srv/pg/wal/pg_wal", "253:1")

	p := f.resolve("/srv/pg/data", "data")
	checkPlacement(t, p, []BlockDevice{{"sda", 8, 0}, {"sdb", 8, 16}},
		"dm-0 (vg-data) → [sda2 → sda, sdb1 → sdb]", "")
	checkMount(t, p, "/srv/pg", "xfs", "/dev/mapper/vg-data")
	// What a storage engineer asks of each device on the way (provenance.go).
	checkStack(t, p, "dm-0 dm vg-data sda2+sdb1", "sda2 partition sda", "sda disk", "sdb1 partition sdb", "sdb disk")
	if p.MountOptions != "rw,noatime,attr2,inode64,noquota" {
		t.Errorf("mount options %q, want the mount's then the filesystem's, each once", p.MountOptions)
	}
	sda := p.Stack[2]
	if sda.Vendor != "ATA" || sda.Model != "ST4000NM0035" || sda.Rotational == nil || !*sda.Rotational || sda.Scheduler != "mq-deadline" ||
		sda.NrRequests != 64 || sda.LogicalBlock != 512 || sda.PhysicalBlock != 4096 || sda.WriteCache != "write back" || sda.Discard == nil || *sda.Discard {
		t.Errorf("sda %+v, want its sysfs queue and model", sda)
	}
	if sdb := p.Stack[4]; sdb.Discard == nil || !*sdb.Discard || sdb.Rotational != nil || sdb.Scheduler != "" {
		t.Errorf("sdb %+v: want discard and nothing sysfs does not say", sdb)
	}
	if sda2 := p.Stack[1]; !slices.Equal(sda2.Holders, []string{"dm-0"}) {
		t.Errorf("sda2 holders %v, want dm-0", sda2.Holders)
	}

	// Two physical volumes on one disk count the disk once.
	p = f.resolve("/srv/pg/wal/pg_wal", "wal")
	checkPlacement(t, p, []BlockDevice{{"sda", 8, 0}}, "dm-1 (vg-wal) → [sda3 → sda, sda4 → sda]", "")
	checkMount(t, p, "/srv/pg/wal", "ext4", "/dev/mapper/vg-wal")
}

func TestDeviceMDRaid(t *testing.T) {
	f := newDeviceFixture(t)
	f.disk(ata3Bus, "sdc", "8:32")
	f.part("sdc", "sdc1", "8:33")
	f.disk(ata4Bus, "sdd", "8:48")
	f.part("sdd", "sdd1", "8:49")
	f.virtual("md0", "9:0", "sdc1", "sdd1")
	f.sysWrite("md0", "md/level", "raid1\n")
	f.part("md0", "md0p1", "259:5")
	f.virtual("dm-2", "253:2", "md0")
	f.sysWrite("dm-2", "dm/name", "vg--md-pg\n")
	f.mount("27 1 9:0 / / rw - ext4 /dev/md0 rw")
	f.mount("60 27 259:5 / /boot rw - ext4 /dev/md0p1 rw")
	f.mount("61 27 253:2 / /srv/pg rw - xfs /dev/mapper/vg--md-pg rw")
	f.path("/srv/data", "9:0")
	f.path("/boot/pg", "259:5")
	f.path("/srv/pg/data", "253:2")
	raid := []BlockDevice{{"sdc", 8, 32}, {"sdd", 8, 48}}

	checkPlacement(t, f.resolve("/srv/data", "data"), raid, "md0 (raid1) → [sdc1 → sdc, sdd1 → sdd]", "")
	checkPlacement(t, f.resolve("/boot/pg", "wal"), raid, "md0p1 → md0 (raid1) → [sdc1 → sdc, sdd1 → sdd]", "")
	p := f.resolve("/srv/pg/data", "data")
	checkPlacement(t, p, raid, "dm-2 (vg--md-pg) → md0 (raid1) → [sdc1 → sdc, sdd1 → sdd]", "")
	checkStack(t, p, "dm-2 dm vg--md-pg md0", "md0 md raid1 sdc1+sdd1", "sdc1 partition sdc", "sdc disk", "sdd1 partition sdd", "sdd disk")
}

func TestDeviceLoop(t *testing.T) {
	f := newDeviceFixture(t)
	f.disk(virtioBus, "vda", "254:0")
	f.part("vda", "vda1", "254:1")
	for i := range 4 {
		f.virtual(fmt.Sprintf("loop%d", i), fmt.Sprintf("7:%d", i))
	}
	f.sysWrite("loop0", "loop/backing_file", "/var/img/disk.img\n")
	// loop1 is attached to nothing: sysfs then has no loop/ directory.
	f.sysWrite("loop2", "loop/backing_file", "/var/img/old.img (deleted)\n")
	f.sysWrite("loop3", "loop/backing_file", "/host/only.img\n")
	f.mount("27 1 254:1 / / rw,relatime - ext4 /dev/vda1 rw")
	for i := range 4 {
		f.mount(fmt.Sprintf("%d 27 7:%d / /mnt/img%d rw,relatime - ext4 /dev/loop%d rw", 70+i, i, i, i))
		f.path(fmt.Sprintf("/mnt/img%d/pg", i), fmt.Sprintf("7:%d", i))
	}
	f.path("/var/img/disk.img", "254:1")

	p := f.resolve("/mnt/img0/pg", "data")
	checkPlacement(t, p, []BlockDevice{{"loop0", 7, 0}, {"vda", 254, 0}}, "loop0 → /var/img/disk.img → vda1 → vda", "")
	checkMount(t, p, "/mnt/img0", "ext4", "/dev/loop0")
	checkPlacement(t, f.resolve("/mnt/img1/pg", "data"), []BlockDevice{{"loop1", 7, 1}}, "loop1",
		"loop1 has no backing file")
	checkPlacement(t, f.resolve("/mnt/img2/pg", "data"), []BlockDevice{{"loop2", 7, 2}}, "loop2",
		"backing file /var/img/old.img was deleted")
	checkPlacement(t, f.resolve("/mnt/img3/pg", "data"), []BlockDevice{{"loop3", 7, 3}}, "loop3 → /host/only.img",
		"backing file /host/only.img is not visible here")
}

func TestDeviceNoBlockDevice(t *testing.T) {
	f := newDeviceFixture(t)
	f.disk(virtioBus, "vda", "254:0")
	f.mount("27 1 254:0 / / rw - ext4 /dev/vda rw")
	f.mount("30 27 0:23 / /dev/shm rw,nosuid,nodev shared:3 - tmpfs tmpfs rw,size=8192k")
	f.mount("80 27 0:60 / /mnt/nas rw,relatime shared:40 - nfs4 nas.local:/export/pg rw,vers=4.2,proto=tcp")
	f.path("/dev/shm/pg", "0:23")
	f.path("/mnt/nas/pg", "0:60")

	p := f.resolve("/dev/shm/pg", "data")
	checkPlacement(t, p, []BlockDevice{}, "tmpfs", "tmpfs has no block device: no disk figures")
	checkMount(t, p, "/dev/shm", "tmpfs", "tmpfs")
	if p.Note != "tmpfs has no block device: no disk figures" {
		t.Errorf("note %q", p.Note)
	}
	b, err := json.Marshal(p)
	if err != nil || !strings.Contains(string(b), `"devices":[]`) {
		t.Errorf("JSON %s (%v): want an empty devices list, not null", b, err)
	}

	p = f.resolve("/mnt/nas/pg", "wal")
	checkPlacement(t, p, []BlockDevice{}, "nfs4", "nfs4 has no block device: no disk figures")
	checkMount(t, p, "/mnt/nas", "nfs4", "nas.local:/export/pg")
}

func TestDeviceOverlay(t *testing.T) {
	f := newDeviceFixture(t)
	f.disk(ata1Bus, "sda", "8:0")
	f.part("sda", "sda2", "8:2")
	f.mount("27 1 8:2 / / rw,relatime shared:1 - ext4 /dev/sda2 rw")
	const docker = "/var/lib/docker/overlay2/4f3c0a"
	f.mount("612 27 0:50 / " + docker + "/merged rw,relatime shared:300 - overlay overlay " +
		"rw,lowerdir=/var/lib/docker/overlay2/l/ABCD:/var/lib/docker/overlay2/l/EFGH," +
		"upperdir=" + docker + "/diff,workdir=" + docker + "/work,nouserxattr")
	// As a container sees its root: the upperdir is a host path.
	f.mount("613 27 0:51 / /ctr rw,relatime - overlay overlay rw,lowerdir=/h/l/A,upperdir=/h/9a9a/diff,workdir=/h/9a9a/work")
	f.mount("614 27 0:52 / /ro rw,relatime - overlay overlay ro,lowerdir=/h/l/A:/h/l/B")
	// As a user other than root sees a container's overlay on the host.
	f.mount("615 27 0:53 / /var/lib/docker/overlay2/77aa/merged rw,relatime - overlay overlay " +
		"rw,lowerdir=/var/lib/docker/overlay2/l/A,upperdir=/var/lib/docker/overlay2/77aa/diff,workdir=/var/lib/docker/overlay2/77aa/work")
	f.path(docker+"/merged/var/lib/postgresql/data", "0:50")
	f.path(docker+"/diff", "8:2")
	f.path("/ctr/pg", "0:51")
	f.path("/ro/pg", "0:52")
	f.path("/var/lib/docker/overlay2/77aa/merged/pg", "0:53")
	f.denied["/var/lib/docker/overlay2/77aa/diff"] = true

	p := f.resolve(docker+"/merged/var/lib/postgresql/data", "data")
	checkPlacement(t, p, []BlockDevice{{"sda", 8, 0}}, "overlay upperdir "+docker+"/diff → sda2 → sda", "")
	checkMount(t, p, docker+"/merged", "overlay", "overlay")
	checkPlacement(t, f.resolve("/ctr/pg", "data"), []BlockDevice{}, "overlay upperdir /h/9a9a/diff",
		"overlay upperdir /h/9a9a/diff is not visible here: no disk figures")
	checkPlacement(t, f.resolve("/ro/pg", "data"), []BlockDevice{}, "overlay", "overlay has no upperdir")
	checkPlacement(t, f.resolve("/var/lib/docker/overlay2/77aa/merged/pg", "data"), []BlockDevice{},
		"overlay upperdir /var/lib/docker/overlay2/77aa/diff",
		"overlay upperdir /var/lib/docker/overlay2/77aa/diff cannot be read here (permission denied): no disk figures")
}

func TestDeviceBtrfs(t *testing.T) {
	f := newDeviceFixture(t)
	f.disk(ata1Bus, "sda", "8:0")
	f.part("sda", "sda1", "8:1")
	f.disk(ata2Bus, "sdb", "8:16")
	f.part("sdb", "sdb2", "8:18")
	f.disk(ata3Bus, "sdc", "8:32")
	f.disk(ata4Bus, "sdd", "8:48")
	f.disk(nvmeBus, "nvme0n1", "259:0")
	f.part("nvme0n1", "nvme0n1p3", "259:3")
	f.virtual("dm-3", "253:3", "nvme0n1p3")
	f.sysWrite("dm-3", "dm/name", "luks-7e1d\n")
	// A two-device btrfs: mountinfo names only sdc.
	for _, d := range []string{"sdc", "sdd"} {
		f.symlink(f.dirs[d], filepath.Join(f.sys, "fs", "btrfs", "0f6c6c4e-5c38-4bb5-9e8d-2d1a1b4f6f01", "devices", d))
	}
	f.symlink(f.dirs["sdb2"], filepath.Join(f.sys, "fs", "btrfs", "5b1e0c9a-0d62-4a5e-8d5f-6c3c5bb1c002", "devices", "sdb2"))
	f.mount("27 1 8:1 / / rw - ext4 /dev/sda1 rw")
	f.mount("90 27 0:45 /@home /home rw,relatime shared:50 - btrfs /dev/sdb2 rw,ssd,space_cache=v2,subvolid=257,subvol=/@home")
	f.mount("91 27 0:46 / /data rw,relatime shared:51 - btrfs /dev/sdc rw,space_cache=v2,subvolid=5,subvol=/")
	f.mount("92 27 0:47 / /srv rw,relatime shared:52 - btrfs /dev/mapper/luks-7e1d rw,subvolid=5,subvol=/")
	f.path("/home/pg", "0:45")
	f.path("/data/pg", "0:46")
	f.path("/srv/pg", "0:47")

	p := f.resolve("/home/pg", "data")
	checkPlacement(t, p, []BlockDevice{{"sdb", 8, 16}}, "btrfs /dev/sdb2 → sdb2 → sdb", "")
	checkMount(t, p, "/home", "btrfs", "/dev/sdb2")
	checkPlacement(t, f.resolve("/data/pg", "data"), []BlockDevice{{"sdc", 8, 32}, {"sdd", 8, 48}},
		"btrfs /dev/sdc → [sdc, sdd]", "")
	checkPlacement(t, f.resolve("/srv/pg", "data"), []BlockDevice{{"nvme0n1", 259, 0}},
		"btrfs /dev/mapper/luks-7e1d → dm-3 (luks-7e1d) → nvme0n1p3 → nvme0n1", "")
}

func TestDeviceMissingPath(t *testing.T) {
	f := newDeviceFixture(t)
	f.disk(virtioBus, "vda", "254:0")
	f.mount("27 1 254:0 / / rw - ext4 /dev/vda rw")
	_, err := f.resolver().Resolve("/srv/nope", "path")
	if !errors.Is(err, input.ErrInvalid) || !strings.Contains(err.Error(), "--path /srv/nope does not exist") {
		t.Errorf("fake stat: %v, want input.ErrInvalid naming --path /srv/nope", err)
	}
	// A directory that is not the user's --path is named by what it holds.
	_, err = f.resolver().Resolve("/srv/nope", "wal")
	if !errors.Is(err, input.ErrInvalid) || !strings.Contains(err.Error(), "wal directory /srv/nope does not exist") {
		t.Errorf("fake stat, wal: %v", err)
	}

	// The real stat's ENOENT is recognised too.
	missing := filepath.Join(t.TempDir(), "nope", "data")
	if _, err := NewResolver().Resolve(missing, "data"); !errors.Is(err, input.ErrInvalid) {
		t.Errorf("real stat: %v, want input.ErrInvalid", err)
	}
}

func TestDeviceSysfsError(t *testing.T) {
	f := newDeviceFixture(t)
	f.disk(virtioBus, "vda", "254:0")
	f.mount("27 1 8:0 / / rw - ext4 /dev/sda rw")
	f.path("/srv/pg", "8:0")
	_, err := f.resolver().Resolve("/srv/pg", "data")
	if err == nil || errors.Is(err, input.ErrInvalid) || !strings.Contains(err.Error(), filepath.Join("dev", "block", "8:0")) {
		t.Errorf("%v: want a plain error naming dev/block/8:0", err)
	}
}

func TestDeviceMountinfoEscape(t *testing.T) {
	f := newDeviceFixture(t)
	f.disk(ata1Bus, "sda", "8:0")
	f.part("sda", "sda1", "8:1")
	f.part("sda", "sda2", "8:2")
	f.mount("27 1 8:1 / / rw - ext4 /dev/sda1 rw")
	f.mount(`40 27 8:2 / /mnt/my\040disk rw,relatime shared:5 master:1 - ext4 /dev/sda2 rw`)
	f.mount("41 27 8:1 / /mnt/my rw,relatime - ext4 /dev/sda1 rw")
	f.path("/mnt/my disk/pg", "8:2")
	f.path("/mnt/mydisk/pg", "8:1")

	checkMount(t, f.resolve("/mnt/my disk/pg", "data"), "/mnt/my disk", "ext4", "/dev/sda2")
	// A mount point is a prefix only up to a '/'.
	checkMount(t, f.resolve("/mnt/mydisk/pg", "data"), "/", "ext4", "/dev/sda1")

	for in, want := range map[string]string{
		`/a\040b`:     "/a b",
		`tab\011x`:    "tab\tx",
		`back\134sl`:  `back\sl`,
		`/x\054y`:     "/x,y",
		`trailing\04`: `trailing\04`,
		`not\08x`:     `not\08x`,
	} {
		if got := unescapeOctal(in); got != want {
			t.Errorf("unescapeOctal(%q) = %q, want %q", in, got, want)
		}
	}

	ms, err := parseMountinfo(`5 1 0:50 / /c rw - overlay overlay rw,lowerdir=/l,upperdir=/u\054v/diff,workdir=/w` + "\n" +
		"6 1 0:51 / /e rw - tmpfs  rw\n")
	if err != nil {
		t.Fatal(err)
	}
	if up, _ := superOption(ms[0].options, "upperdir"); up != "/u,v/diff" {
		t.Errorf("upperdir %q, want /u,v/diff", up)
	}
	if ms[1].fstype != "tmpfs" || ms[1].source != "" || !slices.Equal(ms[1].options, []string{"rw"}) {
		t.Errorf("empty source field: %+v", ms[1])
	}
	if _, err := parseMountinfo("1 2 3\n"); err == nil {
		t.Error("a short line parsed")
	}
}

func TestDevicesAndRolesOf(t *testing.T) {
	sda, sdb := BlockDevice{"sda", 8, 0}, BlockDevice{"sdb", 8, 16}
	ps := []Placement{
		{Role: "wal", Devices: []BlockDevice{sdb}},
		{Role: "data", Devices: []BlockDevice{sda, sdb}},
		{Role: "path"},
		{Role: "wal", Devices: []BlockDevice{sdb}},
	}
	if got := Devices(ps); !slices.Equal(got, []BlockDevice{sda, sdb}) {
		t.Errorf("Devices = %v", got)
	}
	if got := RolesOf(ps, "sdb"); !slices.Equal(got, []string{"wal", "data"}) {
		t.Errorf("RolesOf(sdb) = %v", got)
	}
	if got := RolesOf(ps, "sda"); !slices.Equal(got, []string{"data"}) {
		t.Errorf("RolesOf(sda) = %v", got)
	}
	if got := RolesOf(ps, "sdc"); len(got) != 0 {
		t.Errorf("RolesOf(sdc) = %v", got)
	}
	if got := Devices(nil); got == nil || len(got) != 0 {
		t.Errorf("Devices(nil) = %#v, want empty", got)
	}
}

// TestDeviceRealMachine resolves a temporary directory with the running kernel's /proc
// and /sys: its disks must be ones /proc/diskstats counts.
func TestDeviceRealMachine(t *testing.T) {
	diskstats, err := os.ReadFile("/proc/diskstats")
	if err != nil {
		t.Skipf("no /proc/diskstats: %v", err)
	}
	p, err := NewResolver().Resolve(t.TempDir(), "data")
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("%+v", p)
	if p.Mount == "" || p.FSType == "" {
		t.Errorf("no mount found: %+v", p)
	}
	if len(p.Devices) == 0 {
		if p.Note == "" {
			t.Errorf("no devices and no note: %+v", p)
		}
		return
	}
	counted := map[BlockDevice]bool{}
	for _, line := range strings.Split(string(diskstats), "\n") {
		var d BlockDevice
		if _, err := fmt.Sscanf(line, "%d %d %s", &d.Major, &d.Minor, &d.Name); err == nil {
			counted[d] = true
		}
	}
	if !slices.ContainsFunc(p.Devices, func(d BlockDevice) bool { return counted[d] }) {
		t.Errorf("none of %v is in /proc/diskstats", p.Devices)
	}
}

// TestResolveLoopOnTmpfs: a filesystem on a real loop device whose backing file lies
// on a tmpfs (no disk under it) is still on a block device: the loop device itself is
// reported, and the resolution says the backing file has no disk.
func TestResolveLoopOnTmpfs(t *testing.T) {
	shm, err := os.MkdirTemp("/dev/shm", "storbench-loop-")
	if err != nil {
		t.Skipf("no /dev/shm here: %v", err)
	}
	t.Cleanup(func() { _ = os.RemoveAll(shm) })
	d := looptest.MountIn(t, shm, 32<<20)
	p, err := NewResolver().Resolve(d.Dir, "data")
	if err != nil {
		t.Fatal(err)
	}
	want := BlockDevice{Name: d.Name, Major: d.Major, Minor: d.Minor}
	if !slices.Equal(p.Devices, []BlockDevice{want}) {
		t.Errorf("%s (loop over %s on tmpfs) resolves to %+v (chain %q, note %q), want the loop device %+v", d.Dir, d.Backing, p.Devices, p.Chain, p.Note, want)
	}
	if !strings.Contains(p.Chain, d.Name+" → "+d.Backing) || !strings.Contains(p.Note, "tmpfs") {
		t.Errorf("chain %q, note %q: want the loop's backing file and that tmpfs has no disk", p.Chain, p.Note)
	}
}

// DeviceModel reads what the resolver's stack records of a whole disk: this machine's
// disks under a temporary directory have the model their stack gives them, and a
// disk the kernel has none for (a loop device, a name it does not know) has "".
func TestDeviceModel(t *testing.T) {
	p, err := NewResolver().Resolve(t.TempDir(), "data")
	if err != nil {
		t.Fatal(err)
	}
	for _, d := range p.Devices {
		i := slices.IndexFunc(p.Stack, func(s DeviceInfo) bool { return s.Name == d.Name })
		if i < 0 {
			t.Fatalf("disk %s is not in the stack %+v", d.Name, p.Stack)
		}
		if got := DeviceModel(d.Name); got != p.Stack[i].Model {
			t.Errorf("DeviceModel(%s) = %q, the stack says %q", d.Name, got, p.Stack[i].Model)
		}
	}
	loop := looptest.Attach(t, 1<<20)
	for _, name := range []string{loop.Name, "no-such-disk"} {
		if got := DeviceModel(name); got != "" {
			t.Errorf("DeviceModel(%s) = %q, want none", name, got)
		}
	}
}
