package instance

import (
	"fmt"
	"os"
	"path/filepath"
	"runtime"

	"github.com/storbench/storbench/internal/engine"
	"github.com/storbench/storbench/internal/instance/cgroup"
	"github.com/storbench/storbench/internal/metrics"
)

// Server is the running instance's server for sampling its processes' I/O by role:
// its cgroup's members where one holds it (every process it forks, whatever their
// parent), otherwise its main process and that process's descendants. name tells it
// apart in the figures ("" for the only one).
func (r Registry) Server(instanceName, name string) (metrics.Server, error) {
	st, err := r.Load(instanceName)
	if err != nil {
		return metrics.Server{}, err
	}
	roles := engine.RolesOf(st.Engine)
	if roles == nil {
		return metrics.Server{}, fmt.Errorf("instance %s: engine %s does not tell its processes apart", instanceName, st.Engine)
	}
	srv := metrics.Server{Name: name, Roles: roles, Main: servers[st.Engine].PID(st)}
	if srv.Main == 0 {
		return metrics.Server{}, fmt.Errorf("instance %s is stopped", instanceName)
	}
	if st.Cgroup != "" {
		if g, err := cgroup.Open(st.Cgroup); err == nil {
			srv.Processes = g.Pids
		}
	}
	return srv, nil
}

// CPUGroup is the instance's cgroup, for sampling its CPU time, use of its limit and
// throttling (name tells it apart in the figures); the error says why there is none.
func (r Registry) CPUGroup(instanceName, name string) (metrics.CgroupCPU, error) {
	st, err := r.Load(instanceName)
	if err != nil {
		return metrics.CgroupCPU{}, err
	}
	return cpuGroup(st, name)
}

// CPUGroup is the leased instance's cgroup, as Registry.CPUGroup; a nil lease (no
// managed instance) has none.
func (l *Lease) CPUGroup() (metrics.CgroupCPU, error) {
	if l == nil {
		return metrics.CgroupCPU{}, fmt.Errorf("not a managed instance")
	}
	return cpuGroup(l.st, "")
}

func cpuGroup(st *State, name string) (metrics.CgroupCPU, error) {
	if st.Cgroup == "" {
		return metrics.CgroupCPU{}, fmt.Errorf("instance %s runs in no cgroup (no limit asked, or cgroups unavailable)", st.Name)
	}
	g, err := cgroup.Open(st.Cgroup)
	if err != nil {
		return metrics.CgroupCPU{}, err
	}
	dirs := g.Dirs()
	if _, ok := dirs["cpuacct"]; g.Version() == cgroup.V1 && !ok {
		return metrics.CgroupCPU{}, fmt.Errorf("instance %s's cgroup is in no cpuacct hierarchy (started by an older storbench: restart it)", st.Name)
	}
	grp := metrics.CgroupCPU{Server: name, Dirs: dirs, CPUs: cgroup.CountCPUs(st.CPUs), Cpuset: st.CPUs != ""}
	if grp.CPUs == 0 {
		grp.CPUs = runtime.NumCPU()
	}
	if t := st.IOThrottle; t != nil {
		// The disk as /proc/diskstats names it: /sys/dev/block/MAJ:MIN links to it.
		if link, err := os.Readlink(filepath.Join("/sys/dev/block", t.Device)); err == nil {
			l := t.Limit
			grp.IOLimit = &metrics.IOLimit{Device: filepath.Base(link), ReadIOPS: float64(l.ReadIOPS), WriteIOPS: float64(l.WriteIOPS),
				ReadMBps: float64(l.ReadBPS) / 1e6, WriteMBps: float64(l.WriteBPS) / 1e6}
		}
	}
	return grp, nil
}
