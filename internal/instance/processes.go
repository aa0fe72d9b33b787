package instance

import (
	"fmt"

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
