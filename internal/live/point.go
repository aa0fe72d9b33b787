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
	// counted are the driver's latency buckets as of the last tick.
	counted [tpcc.NumTransactions]driver.LatencyBuckets
}

var _ measure.Watcher = (*point)(nil)

// Point watches a measurement of users on target (RunTarget for a single run).
func (s *Server) Point(target string, users int) measure.Watcher {
	s.m.users.WithLabelValues(target).Set(float64(users))
	s.m.timed.WithLabelValues(target).Set(0)
	return &point{m: s.m, target: target}
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
		m.offeredTPM.WithLabelValues(p.target).Set(t.OfferedTPM)
	}
	if t.Buckets != nil {
		for txn := range t.Buckets {
			cur, since := &t.Buckets[txn], driver.LatencyBuckets{}
			for i, n := range cur.Counts {
				since.Counts[i] = n - p.counted[txn].Counts[i]
			}
			since.SumMicros = cur.SumMicros - p.counted[txn].SumMicros
			if cur.Counts != p.counted[txn].Counts {
				m.latencies.add(p.target, tpcc.Transaction(txn).String(), &since)
			}
			p.counted[txn] = *cur
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
		m.dbFsyncs.WithLabelValues(t).Set(db.FsyncsPerSec)
		m.dbDataWrites.WithLabelValues(t).Set(db.DataWriteMBps * 1e6)
		m.dbHit.WithLabelValues(t).Set(db.BufferHitPct / 100)
		m.dbCheckpoints.WithLabelValues(t).Add(float64(max(db.Checkpoints, 0)))
	}
	if w := s.Waits; w != nil {
		for _, r := range w.Roles {
			var active float64
			for _, sec := range r.Seconds {
				active += sec
			}
			if r.IntervalSeconds > 0 {
				m.activeSess.WithLabelValues(t, r.Server, r.Role).Set(active / r.IntervalSeconds)
			}
			if active <= 0 {
				continue
			}
			for _, class := range metrics.WaitClasses {
				m.waitShare.WithLabelValues(t, r.Server, r.Role, class).Set(r.Seconds[class] / active)
			}
		}
	}
	if s.Bottleneck != "" {
		m.setVerdict(t, "interval", s.Bottleneck)
	}
}

// Done sets the run's verdict and leaves the rest as the last second left it.
func (p *point) Done(r *driver.Result) {
	p.m.timed.WithLabelValues(p.target).Set(0)
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
