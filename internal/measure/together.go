package measure

import (
	"sync"
	"time"
)

// Together is a consolidation's skeleton: Workers points measured over one common
// timed window, the last Noisy of them running the noisy workload instead of TPC-C.
type Together struct {
	Workers, Noisy int
	// Users per worker and the Ramp, to place the common start.
	Users int
	Ramp  time.Duration
}

// Start is the common start of the timed window, from now: time for every user of
// every TPC-C worker to connect (Allowance), then the ramp.
func (t Together) Start() time.Time {
	return time.Now().Add(t.Allowance() + t.Ramp)
}

// Allowance is the time given to the TPC-C workers' users to connect before the
// ramp starts; the noisy workers connect none.
func (t Together) Allowance() time.Duration {
	return connectAllowance(t.Users * (t.Workers - t.Noisy))
}

// connectAllowance is the time given to connect every user before the ramp starts.
// A session costs a round trip and an authentication, and a server process on
// PostgreSQL and a thread on MariaDB, on this machine as on another host: a flat
// allowance would let the common start pass while hundreds of users still connect
// (the driver then refuses the point), so it grows with the users.
func connectAllowance(users int) time.Duration {
	return 2*time.Second + time.Duration(users)*5*time.Millisecond
}

// Run runs every worker at once, oltp for the first Workers-Noisy and noisy for the
// others (nil: they stay idle), and returns each one's error once all are done.
func (t Together) Run(oltp, noisy func(i int) error) []error {
	errs := make([]error, t.Workers)
	var wg sync.WaitGroup
	for i := range t.Workers {
		work := oltp
		if t.IsNoisy(i) {
			if noisy == nil {
				continue
			}
			work = noisy
		}
		wg.Go(func() { errs[i] = work(i) })
	}
	wg.Wait()
	return errs
}

// IsNoisy says whether worker i runs the noisy workload.
func (t Together) IsNoisy(i int) bool { return i >= t.Workers-t.Noisy }
