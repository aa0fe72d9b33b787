package live

import (
	"sync"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/storbench/storbench/internal/driver"
)

// latencyCollector serves the driver's per-type response times as Prometheus
// histograms, with the driver's own buckets (driver.LatencyBounds): the driver
// counts each transaction into them, and each second the counts since the last are
// added here, by target, so a study's runs on one target make one histogram.
type latencyCollector struct {
	name string
	desc *prometheus.Desc
	mu   sync.Mutex
	hist map[[2]string]*driver.LatencyBuckets // by target and type
	keys [][2]string                          // in the order first seen
}

func newLatencyCollector(name, help string, labels ...string) *latencyCollector {
	return &latencyCollector{name: name, desc: prometheus.NewDesc(name, help, labels, nil), hist: map[[2]string]*driver.LatencyBuckets{}}
}

// add adds a target's response times of one type, counted since the last add.
func (c *latencyCollector) add(target, txn string, since *driver.LatencyBuckets) {
	c.mu.Lock()
	defer c.mu.Unlock()
	key := [2]string{target, txn}
	h := c.hist[key]
	if h == nil {
		h = &driver.LatencyBuckets{}
		c.hist[key] = h
		c.keys = append(c.keys, key)
	}
	for i, n := range since.Counts {
		h.Counts[i] += n
	}
	h.SumMicros += since.SumMicros
}

func (c *latencyCollector) Describe(ch chan<- *prometheus.Desc) { ch <- c.desc }

func (c *latencyCollector) Collect(ch chan<- prometheus.Metric) {
	c.mu.Lock()
	defer c.mu.Unlock()
	for _, key := range c.keys {
		h := c.hist[key]
		buckets := make(map[float64]uint64, len(driver.LatencyBounds))
		var cum, count uint64
		for i, n := range h.Counts {
			cum += uint64(n)
			if i < len(driver.LatencyBounds) {
				buckets[float64(driver.LatencyBounds[i])/1e6] = cum
			}
			count = cum
		}
		ch <- prometheus.MustNewConstHistogram(c.desc, count, float64(h.SumMicros)/1e6, buckets, key[0], key[1])
	}
}
