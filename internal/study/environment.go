package study

import (
	"bufio"
	"fmt"
	"os"
	"runtime"
	"strconv"
	"strings"
	"time"

	"golang.org/x/sys/unix"

	"github.com/storbench/storbench/internal/blockdev"
	"github.com/storbench/storbench/internal/fsplace"
	"github.com/storbench/storbench/internal/instance"
)

// Environment is what a study ran on: a result means little without it.
type Environment struct {
	Recorded         time.Time   `json:"recorded"`
	StorbenchVersion string      `json:"storbench_version"`
	GoVersion        string      `json:"go_version"`
	Host             string      `json:"host"`
	CPUModel         string      `json:"cpu_model"`
	Cores            int         `json:"cores"`
	MemoryBytes      uint64      `json:"memory_bytes"`
	Kernel           string      `json:"kernel"`
	Targets          []TargetEnv `json:"targets"`
}

// TargetEnv is one target's storage and database as found when it was prepared.
type TargetEnv struct {
	Name       string               `json:"name"`
	Kind       string               `json:"kind"`
	Placements []blockdev.Placement `json:"placements,omitempty"`
	Models     []string             `json:"device_models,omitempty"`
	// ServerVersion and Settings are the database's; Limits the instance's memory and
	// CPU limits as applied (or why not).
	ServerVersion string            `json:"server_version"`
	Settings      map[string]string `json:"settings,omitempty"`
	Limits        []string          `json:"limits,omitempty"`
	// Host is an external target's host and HostDevices the disks of it that were
	// sampled (named in the study or found over SSH; none: every whole disk).
	Host        string   `json:"host,omitempty"`
	HostMetrics string   `json:"host_metrics,omitempty"` // node_exporter's URL, without a password
	HostDevices []string `json:"host_devices,omitempty"`
}

// machine reads this host's description.
func machine(version string) Environment {
	env := Environment{Recorded: time.Now(), StorbenchVersion: version, GoVersion: runtime.Version(), Cores: runtime.NumCPU()}
	env.Host, _ = os.Hostname()
	var u unix.Utsname
	if unix.Uname(&u) == nil {
		env.Kernel = unix.ByteSliceToString(u.Sysname[:]) + " " + unix.ByteSliceToString(u.Release[:])
	}
	env.CPUModel = procField("/proc/cpuinfo", "model name")
	if total, err := instance.MachineMemory(); err == nil {
		env.MemoryBytes = uint64(total)
	}
	return env
}

// procField is the first "key : value" of a /proc file with that key.
func procField(path, key string) string {
	f, err := os.Open(path)
	if err != nil {
		return ""
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		k, v, ok := strings.Cut(sc.Text(), ":")
		if ok && strings.TrimSpace(k) == key {
			return strings.TrimSpace(v)
		}
	}
	return ""
}

// targetPlacements resolves a managed target's directories and names their disks.
func targetPlacements(t Target) ([]blockdev.Placement, []string) {
	var ps []blockdev.Placement
	var models []string
	r := blockdev.NewResolver()
	for _, d := range []struct{ path, role string }{{t.Path, "data"}, {t.WALPath, "wal"}} {
		if d.path == "" {
			continue
		}
		if p, err := r.Resolve(d.path, d.role); err == nil {
			ps = append(ps, p)
			for _, dev := range p.Devices {
				models = append(models, dev.Name+": "+blockdev.DeviceModel(dev.Name))
			}
		}
	}
	return ps, models
}

// sameFilesystem says, when a backup directory is on the same filesystem as the
// data, which one ("" when not, or when either cannot be found): a backup-restore
// cycle then reads and writes one disk, which its figures alone do not show. Paths
// not made yet are placed by their nearest existing parent.
func sameFilesystem(data, backup string) string {
	d, errD := fsplace.Device(data)
	b, errB := fsplace.Device(backup)
	if errD != nil || errB != nil || d != b {
		return ""
	}
	fs := "device " + strconv.FormatUint(b, 10)
	if p, err := blockdev.NewResolver().Resolve(backup, blockdev.RoleBackup); err == nil && p.Source != "" {
		fs = p.Source
	}
	return fmt.Sprintf("backup on the same filesystem as the data (%s): a restore measures one disk", fs)
}
