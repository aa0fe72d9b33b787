package live

import (
	"github.com/prometheus/client_golang/prometheus"

	"github.com/storbench/storbench/internal/driver"
	"github.com/storbench/storbench/internal/measure"
	"github.com/storbench/storbench/internal/metrics"
	"github.com/storbench/storbench/internal/tpcc"
)

// RunTarget labels a single run's figures (storbench run, which has no target).
const RunTarget = "run"

// point is a measure.Watcher that sets the endpoint's figures of one target.
type point struct {
	m      *families
	target string
	// buckets are the driver's latency buckets as of the last tick.
	buckets [tpcc.NumTransactions]driver.LatencyBuckets
	// open: the run is open-loop (it had arrivals); moved: the database figures
	// the server has counted (counted).
	open  bool
	moved map[string]bool
}

var _ measure.Watcher = (*point)(nil)

// Point watches a measurement of users on target (RunTarget for a single run).
func (s *Server) Point(target string, users int) measure.Watcher {
	s.m.users.WithLabelValues(target).Set(float64(users))
	s.m.timed.WithLabelValues(target).Set(0)
	return &point{m: s.m, target: target, moved: map[string]bool{}}
}

// Tick sets the driver's figures of the last second.
func (p *point) Tick(t driver.Tick) {
	m := p.m
	m.tpm.WithLabelValues(p.target, "client").Set(t.TPM)
	m.nopm.WithLabelValues(p.target, "client").Set(t.NOPM)
	m.errors.WithLabelValues(p.target).Add(float64(t.Errors))
	m.elapsed.WithLabelValues(p.target).Set(t.Elapsed.Seconds())
	timed := 0.0
	if t.Phase == driver.PhaseTimed {
		timed = 1
	}
	m.timed.WithLabelValues(p.target).Set(timed)
	if t.OfferedTPM > 0 {
		p.open = true // an open-loop run: its arrivals are served from the first
	}
	if p.open {
		m.offeredTPM.WithLabelValues(p.target).Set(t.OfferedTPM)
	}
	if t.Buckets != nil {
		for txn := range t.Buckets {
			cur, since := &t.Buckets[txn], driver.LatencyBuckets{}
			for i, n := range cur.Counts {
				since.Counts[i] = n - p.buckets[txn].Counts[i]
			}
			since.SumMicros = cur.SumMicros - p.buckets[txn].SumMicros
			if cur.Counts != p.buckets[txn].Counts {
				m.latencies.add(p.target, tpcc.Transaction(txn).String(), &since)
			}
			p.buckets[txn] = *cur
		}
	}
}

// Sample sets the sampler's figures of its last sample.
func (p *point) Sample(s *metrics.Sample) {
	m, t := p.m, p.target
	if c := s.CPU; c != nil {
		for state, pct := range map[string]float64{"user": c.User, "system": c.System, "idle": c.Idle, "iowait": c.IOWait, "steal": c.Steal} {
			m.cpu.WithLabelValues(t, state).Set(pct / 100)
		}
	}
	for _, d := range s.Disks {
		m.diskIOPS.WithLabelValues(t, d.Device, "read").Set(d.ReadIOPS)
		m.diskIOPS.WithLabelValues(t, d.Device, "write").Set(d.WriteIOPS)
		m.diskBytes.WithLabelValues(t, d.Device, "read").Set(d.ReadMBps * 1e6)
		m.diskBytes.WithLabelValues(t, d.Device, "write").Set(d.WriteMBps * 1e6)
		m.diskAwait.WithLabelValues(t, d.Device, "read").Set(d.ReadAwaitMs / 1000)
		m.diskAwait.WithLabelValues(t, d.Device, "write").Set(d.WriteAwaitMs / 1000)
		m.diskBusy.WithLabelValues(t, d.Device).Set(d.BusyPct / 100)
	}
	if db := s.Database; db != nil {
		m.tpm.WithLabelValues(t, "database").Set(60 * (db.CommitsPerSec + db.RollbacksPerSec))
		m.dbTxns.WithLabelValues(t, "commit").Set(db.CommitsPerSec)
		m.dbTxns.WithLabelValues(t, "rollback").Set(db.RollbacksPerSec)
		m.dbWAL.WithLabelValues(t).Set(db.WALMBps * 1e6)
		// A server that does not count a figure reads 0 for it (PostgreSQL 13's
		// fsyncs, 17's and 18's data-file writes): such a series is served once
		// its counter has moved, never as a 0 that would read as none done.
		p.counted(m.dbFsyncs, db.FsyncsPerSec, "fsyncs")
		p.counted(m.dbDataWrites, db.DataWriteMBps*1e6, "data writes")
		if db.BlocksReadPerS+db.BlocksHitPerS > 0 {
			m.dbHit.WithLabelValues(t).Set(db.BufferHitPct / 100)
		}
		m.dbCheckpoints.WithLabelValues(t).Add(float64(max(db.Checkpoints, 0)))
	}
	if w := s.Waits; w != nil {
		for _, r := range w.Roles {
			if r.IntervalSeconds > 0 {
				m.activeSess.WithLabelValues(t, r.Server, r.Role).Set(r.MeanActive())
			}
			if r.Active() <= 0 {
				continue
			}
			for _, class := range metrics.WaitClasses {
				m.waitShare.WithLabelValues(t, r.Server, r.Role, class).Set(r.Pct(class) / 100)
			}
		}
	}
	if s.Bottleneck != "" {
		m.setVerdict(t, "interval", s.Bottleneck)
	}
}

// counted sets a figure of the target's once the server has counted one (moved).
func (p *point) counted(g *prometheus.GaugeVec, v float64, figure string) {
	if v != 0 {
		p.moved[figure] = true
	}
	if p.moved[figure] {
		g.WithLabelValues(p.target).Set(v)
	}
}

// Done sets the run's verdict; the run's users are gone, and the rest stands as
// the last second and sample left it.
func (p *point) Done(r *driver.Result) {
	p.m.timed.WithLabelValues(p.target).Set(0)
	p.m.users.DeleteLabelValues(p.target)
	if r != nil && r.Bottleneck != nil {
		p.m.setVerdict(p.target, "run", r.Bottleneck.Short())
	}
}

// setVerdict makes verdict the target's current one of the scope, removing the
// one before: one verdict per target and scope is current at a time.
func (m *families) setVerdict(target, scope, verdict string) {
	m.verdictMu.Lock()
	defer m.verdictMu.Unlock()
	key := [2]string{target, scope}
	if old := m.verdicts[key]; old != "" && old != verdict {
		m.bottleneck.Delete(prometheus.Labels{"target": target, "scope": scope, "verdict": old})
	}
	m.verdicts[key] = verdict
	m.bottleneck.WithLabelValues(target, scope, verdict).Set(1)
}
