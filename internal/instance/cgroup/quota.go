package cgroup

import (
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
)

// CPUQuota is a cgroup directory's CFS quota in CPUs: v2 cpu.max ("max 100000": none;
// absent without the cpu controller), v1 cpu.cfs_quota_us ÷ cpu.cfs_period_us (-1:
// none); 0 for none or unreadable.
func CPUQuota(dir string) float64 {
	var quota, period string
	if b, err := os.ReadFile(filepath.Join(dir, "cpu.max")); err == nil {
		quota, period, _ = strings.Cut(strings.TrimSpace(string(b)), " ")
	} else {
		q, err1 := os.ReadFile(filepath.Join(dir, "cpu.cfs_quota_us"))
		p, err2 := os.ReadFile(filepath.Join(dir, "cpu.cfs_period_us"))
		if err1 != nil || err2 != nil {
			return 0
		}
		quota, period = strings.TrimSpace(string(q)), strings.TrimSpace(string(p))
	}
	q, err1 := strconv.ParseFloat(quota, 64)
	p, err2 := strconv.ParseFloat(period, 64)
	if err1 != nil || err2 != nil || q <= 0 || p <= 0 {
		return 0
	}
	return q / p
}

// ProcessCPUQuota is the CPUs this process's cgroups let it use: the lowest CFS quota
// of its cgroups and their parents, 0 when none is set or it cannot be read.
// GOMAXPROCS does not show it once set: a process held to a tenth of a CPU by its
// cgroup still has one P.
func ProcessCPUQuota() float64 {
	b, err := os.ReadFile("/proc/self/cgroup")
	if err != nil {
		return 0
	}
	var quota float64
	for _, line := range strings.Split(strings.TrimSpace(string(b)), "\n") {
		// "N:controllers:/path": v1 names its controllers, v2 has "0::".
		parts := strings.SplitN(line, ":", 3)
		if len(parts) != 3 {
			continue
		}
		var dir string
		switch {
		case parts[1] == "":
			v2 := v2Root()
			if v2 == "" {
				continue
			}
			dir = filepath.Join(v2, parts[2])
		case slices.Contains(strings.Split(parts[1], ","), "cpu"):
			dir = filepath.Join(root, parts[1], parts[2])
		default:
			continue
		}
		for d := dir; strings.HasPrefix(d, root); d = filepath.Dir(d) {
			if q := CPUQuota(d); q > 0 && (quota == 0 || q < quota) {
				quota = q
			}
		}
	}
	return quota
}
