package blockdev

import (
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
)

// DeviceInfo is one block device between a path and its disks, as a storage engineer
// asks about it before trusting a figure: what it is, how the kernel queues to it,
// and what lies under it. Every field is the device's own /sys/class/block entry;
// one the kernel does not have for it is left empty (a partition has no queue of
// its own: its disk's is the one that counts).
type DeviceInfo struct {
	Name string `json:"name"` // kernel name, as in /proc/diskstats
	// Kind is disk, partition, dm (device-mapper), md (software RAID) or loop.
	Kind   string `json:"kind"`
	Vendor string `json:"vendor,omitempty"` // device/vendor
	Model  string `json:"model,omitempty"`  // device/model
	// Rotational is queue/rotational: a spinning disk, as the kernel believes (a
	// virtual disk says what its hypervisor tells it).
	Rotational *bool `json:"rotational,omitempty"`
	// Scheduler is the active I/O scheduler, the bracketed one of queue/scheduler.
	Scheduler string `json:"scheduler,omitempty"`
	// NrRequests is queue/nr_requests: the requests the block layer queues at most.
	NrRequests int `json:"nr_requests,omitempty"`
	// LogicalBlock and PhysicalBlock are queue/logical_block_size and
	// physical_block_size in bytes (512e disks: 512 and 4096).
	LogicalBlock  int `json:"logical_block_size,omitempty"`
	PhysicalBlock int `json:"physical_block_size,omitempty"`
	// WriteCache is queue/write_cache: "write back" (the device has a volatile cache
	// the kernel flushes) or "write through".
	WriteCache string `json:"write_cache,omitempty"`
	// Discard says whether the device takes discards (queue/discard_max_bytes > 0).
	Discard *bool `json:"discard,omitempty"`
	// What it is made of: a device-mapper's name, an md array's level, a loop
	// device's backing file, a partition's disk, the devices under it (slaves) and
	// those built on it (holders).
	DMName      string   `json:"dm_name,omitempty"`
	MDLevel     string   `json:"md_level,omitempty"`
	BackingFile string   `json:"backing_file,omitempty"`
	Parent      string   `json:"parent,omitempty"`
	Slaves      []string `json:"slaves,omitempty"`
	Holders     []string `json:"holders,omitempty"`
}

// deviceInfo reads the device whose sysfs directory is dir.
func deviceInfo(dir string) DeviceInfo {
	read := func(rel string) string {
		s, _ := readSysfs(filepath.Join(dir, rel))
		return s
	}
	number := func(rel string) (int, bool) {
		n, err := strconv.Atoi(read(rel))
		return n, err == nil
	}
	d := DeviceInfo{Name: kernelName(filepath.Base(dir)), Vendor: read("device/vendor"), Model: read("device/model"),
		WriteCache: read("queue/write_cache"), DMName: read("dm/name"), MDLevel: read("md/level"),
		Slaves: entries(filepath.Join(dir, "slaves")), Holders: entries(filepath.Join(dir, "holders"))}
	switch {
	case sysfsHas(filepath.Join(dir, "partition")):
		d.Kind, d.Parent = "partition", kernelName(filepath.Base(filepath.Dir(dir)))
	case d.DMName != "":
		d.Kind = "dm"
	case d.MDLevel != "":
		d.Kind = "md"
	case strings.HasPrefix(d.Name, "loop"):
		d.Kind, d.BackingFile = "loop", read("loop/backing_file")
	default:
		d.Kind = "disk"
	}
	if n, ok := number("queue/rotational"); ok {
		d.Rotational = new(n == 1)
	}
	d.Scheduler = activeScheduler(read("queue/scheduler"))
	d.NrRequests, _ = number("queue/nr_requests")
	d.LogicalBlock, _ = number("queue/logical_block_size")
	d.PhysicalBlock, _ = number("queue/physical_block_size")
	if n, ok := number("queue/discard_max_bytes"); ok {
		d.Discard = new(n > 0)
	} else if n, ok := number("queue/discard_granularity"); ok {
		d.Discard = new(n > 0)
	}
	return d
}

// activeScheduler is the bracketed entry of queue/scheduler ("none [mq-deadline]
// kyber"), or the only one listed (a device with one choice prints it bare).
func activeScheduler(s string) string {
	if _, after, ok := strings.Cut(s, "["); ok {
		name, _, _ := strings.Cut(after, "]")
		return name
	}
	if f := strings.Fields(s); len(f) == 1 {
		return f[0]
	}
	return ""
}

// entries are the names in a sysfs directory (slaves, holders), sorted; none when it
// is missing.
func entries(dir string) []string {
	es, err := os.ReadDir(dir)
	if err != nil {
		return nil
	}
	var names []string
	for _, e := range es {
		names = append(names, kernelName(e.Name()))
	}
	slices.Sort(names)
	return names
}

// uniqueStack keeps the first of each device (two volumes on one disk list it
// twice), in the order found: from the path down to the disks.
func uniqueStack(stack []DeviceInfo) []DeviceInfo {
	var out []DeviceInfo
	for _, d := range stack {
		if !slices.ContainsFunc(out, func(o DeviceInfo) bool { return o.Name == d.Name }) {
			out = append(out, d)
		}
	}
	return out
}

// mountOptions are a mount's options as /proc/mounts prints them: the mount's own
// (rw, noatime…) then the filesystem's (errors=remount-ro, data=ordered…), each once.
func mountOptions(m *mountEntry) string {
	var out []string
	for _, o := range append(slices.Clone(m.mountOptions), m.options...) {
		if !slices.Contains(out, o) {
			out = append(out, o)
		}
	}
	return strings.Join(out, ",")
}
