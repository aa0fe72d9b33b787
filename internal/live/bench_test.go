package live

import (
	"io"
	"net/http"
	"testing"
	"time"

	"github.com/storbench/storbench/internal/driver"
	"github.com/storbench/storbench/internal/measure"
	"github.com/storbench/storbench/internal/metrics"
	"github.com/storbench/storbench/internal/tpcc"
)

// BenchmarkScrape is one scrape of an endpoint holding a run's figures, the GET's
// client side included (docs/benchmarks.md, "Live endpoint").
func BenchmarkScrape(b *testing.B) {
	s, w := benchPoint(b)
	var buckets [tpcc.NumTransactions]driver.LatencyBuckets
	for i := range buckets {
		buckets[i].Counts[3] = 100
	}
	w.Tick(driver.Tick{Elapsed: time.Second, Phase: driver.PhaseTimed, TPM: 1, Buckets: &buckets})
	w.Sample(&metrics.Sample{CPU: &metrics.CPU{User: 1}, Disks: []metrics.Disk{{Device: "vda"}, {Device: "vdb"}},
		Database: &metrics.Database{}, Bottleneck: "cpu"})
	b.ReportAllocs()
	for b.Loop() {
		resp, err := http.Get(s.URL())
		if err != nil {
			b.Fatal(err)
		}
		_, _ = io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
	}
}

// BenchmarkTick is what a driver second costs the endpoint.
func BenchmarkTick(b *testing.B) {
	_, w := benchPoint(b)
	var buckets [tpcc.NumTransactions]driver.LatencyBuckets
	b.ReportAllocs()
	for b.Loop() {
		buckets[tpcc.NewOrder].Counts[3]++
		w.Tick(driver.Tick{Elapsed: time.Second, Phase: driver.PhaseTimed, TPM: 1, Buckets: &buckets})
	}
}

// benchPoint is an endpoint on a free loopback port, closed when the benchmark
// ends, and a run's watcher of it.
func benchPoint(b *testing.B) (*Server, measure.Watcher) {
	s, err := Listen(Options{Listen: "127.0.0.1:0"}, "bench")
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { s.Close() })
	return s, s.Point(RunTarget, 4)
}
