package blockdev

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"golang.org/x/sys/unix"

	"github.com/storbench/storbench/internal/input"
)

// BlockDevice is a whole disk as /proc/diskstats and the block tracepoints name it.
type BlockDevice struct {
	Name  string `json:"name"` // as in /proc/diskstats, e.g. "sda", "nvme0n1"
	Major uint32 `json:"major"`
	Minor uint32 `json:"minor"`
}

// Roles of a placed path: what it holds, given by whoever places it, which the report
// labels the path's disks by.
const (
	RoleData   = "data"   // a database's data directory
	RoleWAL    = "wal"    // its write-ahead log, when on a directory of its own
	RolePath   = "path"   // a directory the user named to be sampled (--path)
	RoleBackup = "backup" // where backups go
	RoleFio    = "fio"    // fio's test file
)

// Placement is where a path's bytes go.
type Placement struct {
	Path   string `json:"path"`
	Role   string `json:"role"`  // what it holds, given by the caller: RoleData, RoleWAL…
	Mount  string `json:"mount"` // mount point holding Path
	FSType string `json:"fs_type"`
	Source string `json:"source"` // mount source, e.g. /dev/vda1
	// Devices are whole disks; empty (not null in JSON) when the filesystem has none.
	Devices []BlockDevice `json:"devices"`
	Chain   string        `json:"chain"`          // how it was resolved, e.g. "dm-0 (vg-data) → sda2 → sda"
	Note    string        `json:"note,omitempty"` // e.g. "tmpfs has no block device: no disk figures"
	// MountOptions are the mount's options as /proc/mounts lists them.
	MountOptions string `json:"mount_options,omitempty"`
	// Stack is every block device from the filesystem's down to the disks, each once
	// (a loop device, then those of its backing file's filesystem).
	Stack []DeviceInfo `json:"stack,omitempty"`
}

// Resolver resolves paths with /proc and /sys under its roots, so tests can use fixture
// trees.
type Resolver struct {
	ProcRoot, SysRoot string
	// stat returns the device number of the filesystem holding path (st_dev); nil
	// means unix.Stat. Tests replace it.
	stat func(path string) (uint64, error)
	// realpath resolves path's links; nil means filepath.EvalSymlinks. A host's
	// (HostSys) are its own.
	realpath func(path string) (string, error)
}

// NewResolver resolves with the running system's /proc and /sys.
func NewResolver() Resolver {
	return Resolver{ProcRoot: "/proc", SysRoot: "/sys"}
}

// maxStackDepth bounds the nesting of devices and backing files, so that a loop device
// whose backing file lies on itself (or a corrupt fixture) cannot recurse forever.
const maxStackDepth = 16

// errMissing is a path that does not exist: an input error at the top, a note when it
// is a loop's backing file or an overlay's upperdir.
var errMissing = errors.New("does not exist")

// Resolve finds the mount and the whole disks holding path.
func (r Resolver) Resolve(path, role string) (Placement, error) {
	p, err := r.place(path, 0)
	switch {
	case errors.Is(err, errMissing):
		return Placement{}, refusePath(role, path, "does not exist")
	case errors.Is(err, fs.ErrPermission):
		return Placement{}, refusePath(role, path, "cannot be read by this user (permission denied): run as its owner or root")
	}
	if err != nil {
		return Placement{}, err
	}
	p.Role = role
	return p, nil
}

// refusePath refuses a path Resolve cannot use: the setting path for the role "path"
// (the directories the user named), else the role's directory.
func refusePath(role, path, problem string) error {
	if role == RolePath {
		return input.Errorf("path", "{path} %s %s", path, problem)
	}
	return fmt.Errorf("%w: %s directory %s %s", input.ErrInvalid, role, path, problem)
}

// unreachable says why a loop's backing file or an overlay's upperdir could not be
// followed when that is no fault of the user's: they are named in the mount namespace
// that set them up (the host, seen from a container), and container runtimes keep
// them in root-only directories (/var/lib/docker is 0710).
func unreachable(err error) (string, bool) {
	switch {
	case errors.Is(err, errMissing):
		return "is not visible here", true
	case errors.Is(err, fs.ErrPermission):
		return "cannot be read here (permission denied)", true
	}
	return "", false
}

// resolution is a (sub)tree of the device stack: the whole disks under it, its chain
// text, what the reader should know about the figures, and each device's facts.
type resolution struct {
	devs  []BlockDevice
	chain string
	notes []string
	stack []DeviceInfo
}

func (r Resolver) place(path string, depth int) (Placement, error) {
	if depth > maxStackDepth {
		return Placement{}, fmt.Errorf("resolving %s: devices nested deeper than %d", path, maxStackDepth)
	}
	abs, err := filepath.Abs(path)
	if err != nil {
		return Placement{}, err
	}
	dev, err := r.statDev(abs)
	if errors.Is(err, fs.ErrNotExist) || errors.Is(err, unix.ENOTDIR) {
		return Placement{}, fmt.Errorf("%s: %w", abs, errMissing)
	}
	if err != nil {
		return Placement{}, err
	}
	// The mount is looked up by the symlink-free path (pg_wal is often a symlink to
	// another disk). A path that stat saw but EvalSymlinks cannot follow (a race, or a
	// test's fake stat) is matched as given.
	resolved := abs
	realpath := r.realpath
	if realpath == nil {
		realpath = filepath.EvalSymlinks
	}
	if p, err := realpath(abs); err == nil {
		resolved = p
	}
	mounts, err := r.mounts()
	if err != nil {
		return Placement{}, err
	}
	m := mountOf(mounts, resolved)
	p := Placement{Path: abs}
	if m != nil {
		p.Mount, p.FSType, p.Source, p.MountOptions = m.point, m.fstype, m.source, mountOptions(m)
	}

	var res resolution
	if major := unix.Major(dev); major != 0 {
		link := filepath.Join(r.SysRoot, "dev", "block", fmt.Sprintf("%d:%d", major, unix.Minor(dev)))
		res, err = r.node(link, depth+1)
	} else {
		res, err = r.anonymous(m, depth+1)
	}
	if err != nil {
		return Placement{}, err
	}
	p.Devices = uniqueDevices(res.devs)
	p.Chain = res.chain
	p.Note = strings.Join(distinctStrings(res.notes), "; ")
	p.Stack = uniqueStack(res.stack)
	return p, nil
}

func (r Resolver) statDev(path string) (uint64, error) {
	if r.stat != nil {
		return r.stat(path)
	}
	var st unix.Stat_t
	if err := unix.Stat(path, &st); err != nil {
		return 0, &fs.PathError{Op: "stat", Path: path, Err: err}
	}
	return uint64(st.Dev), nil
}

// node resolves a block device's sysfs directory (or a symlink to it) down to whole
// disks.
func (r Resolver) node(dir string, depth int) (resolution, error) {
	if depth > maxStackDepth {
		return resolution{}, fmt.Errorf("resolving %s: devices nested deeper than %d", dir, maxStackDepth)
	}
	sysDir, err := filepath.EvalSymlinks(dir)
	if err != nil {
		// EvalSymlinks names only the component it could not find.
		return resolution{}, fmt.Errorf("block device %s: %w", dir, err)
	}
	name := kernelName(filepath.Base(sysDir))

	if sysfsHas(filepath.Join(sysDir, "partition")) {
		// Busy time and queue depth belong to the disk all its partitions share, so the
		// disk is what is sampled; sysfs nests a partition inside its disk's directory.
		sub, err := r.node(filepath.Dir(sysDir), depth+1)
		if err != nil {
			return resolution{}, err
		}
		sub.chain = name + " → " + sub.chain
		sub.stack = append([]DeviceInfo{deviceInfo(sysDir)}, sub.stack...)
		return sub, nil
	}

	label := name
	if s, err := readSysfs(filepath.Join(sysDir, "dm", "name")); err == nil && s != "" {
		label += " (" + s + ")"
	} else if s, err := readSysfs(filepath.Join(sysDir, "md", "level")); err == nil && s != "" {
		label += " (" + s + ")"
	}

	slaves, err := os.ReadDir(filepath.Join(sysDir, "slaves"))
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return resolution{}, err
	}
	if len(slaves) > 0 {
		var dirs []string
		for _, e := range slaves {
			dirs = append(dirs, filepath.Join(sysDir, "slaves", e.Name()))
		}
		res, err := r.nodes(label, dirs, depth)
		res.stack = append([]DeviceInfo{deviceInfo(sysDir)}, res.stack...)
		return res, err
	}

	if strings.HasPrefix(filepath.Base(sysDir), "loop") {
		return r.loop(sysDir, name, depth)
	}
	return r.disk(sysDir, name)
}

// nodes resolves the devices under label (a dm, md or multi-device filesystem) and
// joins their chains.
func (r Resolver) nodes(label string, dirs []string, depth int) (resolution, error) {
	slices.Sort(dirs)
	res := resolution{}
	var chains []string
	for _, d := range dirs {
		sub, err := r.node(d, depth+1)
		if err != nil {
			return resolution{}, err
		}
		res.devs = append(res.devs, sub.devs...)
		res.notes = append(res.notes, sub.notes...)
		res.stack = append(res.stack, sub.stack...)
		chains = append(chains, sub.chain)
	}
	res.chain = label + " → " + joinChains(chains)
	return res, nil
}

// loop reports a loop device and follows it to the disks of its backing file, if any.
// Without a backing file the loop's own diskstats line is the only figure there is.
func (r Resolver) loop(dir, name string, depth int) (resolution, error) {
	backing, err := readSysfs(filepath.Join(dir, "loop", "backing_file"))
	if err != nil || backing == "" {
		res, err := r.disk(dir, name)
		res.notes = append(res.notes, name+" has no backing file: figures are the loop device's own")
		return res, err
	}
	if file, ok := strings.CutSuffix(backing, " (deleted)"); ok {
		res, err := r.disk(dir, name)
		res.notes = append(res.notes, fmt.Sprintf("%s's backing file %s was deleted: figures are the loop device's own", name, file))
		return res, err
	}
	p, err := r.place(backing, depth+1)
	if why, ok := unreachable(err); ok {
		res, err := r.disk(dir, name)
		res.chain = name + " → " + backing
		res.notes = append(res.notes, fmt.Sprintf("%s's backing file %s %s: figures are the loop device's own", name, backing, why))
		return res, err
	}
	if err != nil {
		return resolution{}, err
	}
	// The loop device is a block device of its own: its figures are the filesystem's
	// I/O as issued, the backing disk's (when there is one) what reached the disk
	// through the backing file's page cache. A backing file on tmpfs has no disk.
	res, err := r.disk(dir, name)
	if err != nil {
		return resolution{}, err
	}
	res.devs = append(res.devs, p.Devices...)
	res.stack = append(res.stack, p.Stack...)
	res.chain = name + " → " + backing + " → " + p.Chain
	if len(p.Devices) == 0 {
		res.notes = append(res.notes, fmt.Sprintf("%s's backing file %s is on %s, which has no disk: figures are the loop device's own", name, backing, p.FSType))
	} else if p.Note != "" {
		res.notes = append(res.notes, p.Note)
	}
	return res, nil
}

// disk is a whole disk: a device with no parent and nothing under it.
func (r Resolver) disk(dir, name string) (resolution, error) {
	file := filepath.Join(dir, "dev")
	s, err := readSysfs(file)
	if err != nil {
		return resolution{}, err
	}
	majS, minS, ok := strings.Cut(s, ":")
	major, err1 := strconv.ParseUint(majS, 10, 32)
	minor, err2 := strconv.ParseUint(minS, 10, 32)
	if !ok || err1 != nil || err2 != nil {
		return resolution{}, fmt.Errorf("%s: %q is not MAJOR:MINOR", file, s)
	}
	return resolution{
		devs:  []BlockDevice{{Name: name, Major: uint32(major), Minor: uint32(minor)}},
		chain: name,
		stack: []DeviceInfo{deviceInfo(dir)},
	}, nil
}

// anonymous resolves a filesystem on an anonymous device (major 0) through its mount:
// btrfs and bcachefs name their block devices as the source, overlay writes to its
// upperdir; the others (tmpfs, proc, nfs, fuse…) have no disk.
func (r Resolver) anonymous(m *mountEntry, depth int) (resolution, error) {
	if m == nil {
		return resolution{chain: "?", notes: []string{"no mount found in mountinfo: no disk figures"}}, nil
	}
	if m.fstype == "overlay" {
		upper, ok := superOption(m.options, "upperdir")
		if !ok {
			return resolution{chain: "overlay", notes: []string{"overlay has no upperdir (read-only): no disk figures"}}, nil
		}
		p, err := r.place(upper, depth+1)
		if why, ok := unreachable(err); ok {
			return resolution{chain: "overlay upperdir " + upper,
				notes: []string{"overlay upperdir " + upper + " " + why + ": no disk figures"}}, nil
		}
		if err != nil {
			return resolution{}, err
		}
		res := resolution{devs: p.Devices, chain: "overlay upperdir " + upper + " → " + p.Chain, stack: p.Stack}
		if p.Note != "" {
			res.notes = append(res.notes, p.Note)
		}
		return res, nil
	}

	sources := strings.Split(m.source, ":") // bcachefs lists its devices as /dev/a:/dev/b
	for _, s := range sources {
		if !strings.HasPrefix(s, "/dev/") {
			return resolution{chain: m.fstype, notes: []string{m.fstype + " has no block device: no disk figures"}}, nil
		}
	}
	var dirs []string
	for _, s := range sources {
		dir, ok := r.findBlock(s)
		if !ok {
			return resolution{chain: m.fstype + " " + m.source, notes: []string{fmt.Sprintf("%s source %s is not in %s: no disk figures",
				m.fstype, s, filepath.Join(r.SysRoot, "class", "block"))}}, nil
		}
		dirs = append(dirs, dir)
	}
	if m.fstype == "btrfs" && len(dirs) == 1 {
		// mountinfo names one device of a multi-device btrfs; sysfs lists them all.
		if members := r.btrfsMembers(filepath.Base(dirs[0])); len(members) > 0 {
			dirs = members
		}
	}
	return r.nodes(m.fstype+" "+m.source, dirs, depth)
}

// findBlock finds the sysfs entry of a /dev node by name, since stat on the node
// gives the devtmpfs device, not the node's own.
func (r Resolver) findBlock(source string) (string, bool) {
	classBlock := filepath.Join(r.SysRoot, "class", "block")
	rel := strings.TrimPrefix(source, "/dev/")
	// sysfs spells a '/' in a kernel name (cciss/c0d0) as '!'.
	for _, name := range []string{strings.ReplaceAll(rel, "/", "!"), filepath.Base(source)} {
		if dir := filepath.Join(classBlock, name); sysfsHas(dir) {
			return dir, true
		}
	}
	if mapped, ok := strings.CutPrefix(source, "/dev/mapper/"); ok {
		entries, _ := os.ReadDir(classBlock)
		for _, e := range entries {
			if s, err := readSysfs(filepath.Join(classBlock, e.Name(), "dm", "name")); err == nil && s == mapped {
				return filepath.Join(classBlock, e.Name()), true
			}
		}
	}
	// /dev/disk/by-uuid/…, /dev/vg/lv and other udev links.
	if target, err := filepath.EvalSymlinks(source); err == nil {
		if dir := filepath.Join(classBlock, filepath.Base(target)); sysfsHas(dir) {
			return dir, true
		}
	}
	return "", false
}

// btrfsMembers are the devices of the btrfs filesystem that has the device name among
// its members.
func (r Resolver) btrfsMembers(name string) []string {
	found, _ := filepath.Glob(filepath.Join(r.SysRoot, "fs", "btrfs", "*", "devices", name))
	if len(found) == 0 {
		return nil
	}
	devices := filepath.Dir(found[0])
	entries, err := os.ReadDir(devices)
	if err != nil {
		return nil
	}
	var dirs []string
	for _, e := range entries {
		dirs = append(dirs, filepath.Join(devices, e.Name()))
	}
	return dirs
}

// joinChains shows several branches of the device tree in brackets, so that
// "md0 → [sda1 → sda, sdb1 → sdb]" cannot be misread as one chain.
func joinChains(chains []string) string {
	if len(chains) == 1 {
		return chains[0]
	}
	return "[" + strings.Join(chains, ", ") + "]"
}

// mountEntry is one line of mountinfo, unescaped.
type mountEntry struct {
	point, fstype, source string
	mountOptions          []string // the mount's own (rw, noatime…)
	options               []string // super options
}

func (r Resolver) mounts() ([]mountEntry, error) {
	file := filepath.Join(r.ProcRoot, "self", "mountinfo")
	data, err := os.ReadFile(file)
	if err != nil {
		return nil, err
	}
	ms, err := parseMountinfo(string(data))
	if err != nil {
		return nil, fmt.Errorf("%s: %w", file, err)
	}
	return ms, nil
}

// parseMountinfo reads proc(5)'s format: "36 35 98:0 /mnt1 /mnt2 rw,noatime master:1 -
// ext3 /dev/root rw,errors=continue", with a variable number of optional fields
// before the "-".
func parseMountinfo(data string) ([]mountEntry, error) {
	var ms []mountEntry
	for i, line := range strings.Split(data, "\n") {
		if line == "" {
			continue
		}
		// Split on single spaces: an empty source prints as an empty field.
		f := strings.Split(line, " ")
		sep := -1
		for j := 6; j < len(f); j++ {
			if f[j] == "-" {
				sep = j
				break
			}
		}
		if len(f) < 7 || sep < 0 || len(f) < sep+3 {
			return nil, fmt.Errorf("line %d: not a mountinfo line: %q", i+1, line)
		}
		m := mountEntry{point: unescapeOctal(f[4]), fstype: unescapeOctal(f[sep+1]), source: unescapeOctal(f[sep+2]),
			mountOptions: strings.Split(unescapeOctal(f[5]), ",")}
		if len(f) > sep+3 {
			// Commas inside a value are escaped too, so splitting first is safe.
			for _, o := range strings.Split(f[sep+3], ",") {
				m.options = append(m.options, unescapeOctal(o))
			}
		}
		ms = append(ms, m)
	}
	return ms, nil
}

// unescapeOctal undoes the kernel's \ooo escapes of space, tab, newline, backslash
// (and comma, in super options).
func unescapeOctal(s string) string {
	if !strings.Contains(s, `\`) {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] == '\\' && i+3 < len(s) && octalDigit(s[i+1]) && octalDigit(s[i+2]) && octalDigit(s[i+3]) {
			b.WriteByte((s[i+1]-'0')<<6 | (s[i+2]-'0')<<3 | (s[i+3] - '0'))
			i += 3
			continue
		}
		b.WriteByte(s[i])
	}
	return b.String()
}

func octalDigit(c byte) bool { return c >= '0' && c <= '7' }

// mountOf is the mount holding path: the longest mount point containing it, the last
// one listed when several are mounted on the same point (the later hides the earlier).
func mountOf(ms []mountEntry, path string) *mountEntry {
	var best *mountEntry
	for i := range ms {
		m := &ms[i]
		if m.point != "/" && path != m.point && !strings.HasPrefix(path, m.point+"/") {
			continue
		}
		if best == nil || len(m.point) >= len(best.point) {
			best = m
		}
	}
	return best
}

func superOption(options []string, key string) (string, bool) {
	for _, o := range options {
		if v, ok := strings.CutPrefix(o, key+"="); ok {
			return v, true
		}
	}
	return "", false
}

// kernelName is a sysfs block device name as /proc/diskstats spells it.
func kernelName(sysfsName string) string {
	return strings.ReplaceAll(sysfsName, "!", "/")
}

func readSysfs(file string) (string, error) {
	b, err := os.ReadFile(file)
	return strings.TrimSpace(string(b)), err
}

func sysfsHas(path string) bool {
	_, err := os.Stat(path)
	return err == nil
}

// uniqueDevices sorts by name so that a placement reads the same on every run whatever
// order sysfs lists slaves in; never nil, so JSON shows [] rather than null.
func uniqueDevices(devs []BlockDevice) []BlockDevice {
	out := make([]BlockDevice, 0, len(devs))
	for _, d := range devs {
		if !slices.Contains(out, d) {
			out = append(out, d)
		}
	}
	slices.SortFunc(out, func(a, b BlockDevice) int { return strings.Compare(a.Name, b.Name) })
	return out
}

func distinctStrings(ss []string) []string {
	var out []string
	for _, s := range ss {
		if !slices.Contains(out, s) {
			out = append(out, s)
		}
	}
	return out
}

// Devices are the distinct whole disks of several placements, sorted by name.
func Devices(ps []Placement) []BlockDevice {
	var all []BlockDevice
	for _, p := range ps {
		all = append(all, p.Devices...)
	}
	return uniqueDevices(all)
}

// RolesOf are the roles of the placements on the disk named dev, each once, in
// placement order.
func RolesOf(ps []Placement, dev string) []string {
	var roles []string
	for _, p := range ps {
		if slices.ContainsFunc(p.Devices, func(d BlockDevice) bool { return d.Name == dev }) && !slices.Contains(roles, p.Role) {
			roles = append(roles, p.Role)
		}
	}
	return roles
}

// DeviceModel is a whole disk's model as the kernel reports it ("" when it does not:
// virtio disks have none), for results that say what was measured.
func DeviceModel(name string) string {
	b, err := os.ReadFile(filepath.Join("/sys/block", name, "device", "model"))
	if err != nil {
		return ""
	}
	return strings.TrimSpace(string(b))
}
