package live

import (
	"errors"
	"math"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"

	"github.com/storbench/storbench/internal/driver"
	"github.com/storbench/storbench/internal/input"
	"github.com/storbench/storbench/internal/tpcc"
)

func TestAddress(t *testing.T) {
	for give, want := range map[string]string{"9464": "127.0.0.1:9464", ":9464": "127.0.0.1:9464", "0.0.0.0:9464": "0.0.0.0:9464",
		"[::1]:0": "[::1]:0", "localhost:80": "localhost:80"} {
		if got, err := (Options{Listen: give}).Address(); err != nil || got != want {
			t.Errorf("%q: %q, %v; want %q", give, got, err, want)
		}
	}
	for _, bad := range []string{"nine", "127.0.0.1", "host:port", ":70000"} {
		_, err := (Options{Listen: bad}).Address()
		if !errors.Is(err, input.ErrInvalid) || !strings.Contains(err.Error(), "--listen") {
			t.Errorf("%q: %v, want an invalid-input error naming listen", bad, err)
		}
	}
}

// A port already taken is refused as the user's to change, in one line.
func TestListenOnATakenPort(t *testing.T) {
	s, err := Listen(Options{Listen: "127.0.0.1:0"}, "test")
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	_, err = Listen(Options{Listen: s.Addr()}, "test")
	if !errors.Is(err, input.ErrInvalid) || strings.Contains(err.Error(), "\n") {
		t.Errorf("a second endpoint on %s: %v, want one invalid-input line", s.Addr(), err)
	}
}

// The latency histograms count each transaction the driver's ticks counted, once,
// under every bound at or above its latency, and their sum is the latencies' sum,
// across ticks and across the points (runs) of one target: checked against
// latencies worked out by hand.
func TestLatencyHistogramsReconcile(t *testing.T) {
	s, err := Listen(Options{Listen: "127.0.0.1:0"}, "test")
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	// What the driver's buckets hold after New-Orders of 0.3, 1.5 and 40 ms (its
	// cumulative counts, as Tick gives them), then after one more of 3 s.
	var buckets [tpcc.NumTransactions]driver.LatencyBuckets
	count := func(us int64) {
		no := &buckets[tpcc.NewOrder]
		i := slices.IndexFunc(driver.LatencyBounds[:], func(b int64) bool { return us <= b })
		if i < 0 {
			i = len(driver.LatencyBounds)
		}
		no.Counts[i]++
		no.SumMicros += us
	}
	w := s.Point("a", 4)
	for _, us := range []int64{300, 1500, 40_000} {
		count(us)
	}
	w.Tick(driver.Tick{Elapsed: time.Second, Phase: driver.PhaseTimed, TPM: 180, Buckets: &buckets})
	count(3_000_000)
	w.Tick(driver.Tick{Elapsed: 2 * time.Second, Phase: driver.PhaseTimed, TPM: 60, Buckets: &buckets})
	w.Done(nil)
	// A second run on the same target starts its own count: 12 s.
	buckets = [tpcc.NumTransactions]driver.LatencyBuckets{}
	w = s.Point("a", 4)
	count(12_000_000)
	w.Tick(driver.Tick{Elapsed: time.Second, Phase: driver.PhaseTimed, TPM: 60, Buckets: &buckets})

	families := scrape(t, s)
	h := families["storbench_transaction_duration_seconds"]
	if h == nil || len(h.Metric) != 1 {
		t.Fatalf("histograms: %v, want New-Order's alone (no other type completed)", h)
	}
	got := h.Metric[0].GetHistogram()
	if got.GetSampleCount() != 5 {
		t.Errorf("count %d, want 5", got.GetSampleCount())
	}
	if sum := got.GetSampleSum(); math.Abs(sum-15.0418) > 1e-9 {
		t.Errorf("sum %.5f s, want 15.0418 (0.0003 + 0.0015 + 0.04 + 3 + 12)", sum)
	}
	want := map[float64]uint64{0.0005: 1, 0.001: 1, 0.002: 2, 0.05: 3, 1: 3, 5: 4, 10: 4}
	if n := len(got.GetBucket()); n != len(driver.LatencyBounds)+1 {
		t.Errorf("%d buckets, want the driver's %d and +Inf", n, len(driver.LatencyBounds))
	}
	for _, b := range got.GetBucket() {
		if n, ok := want[b.GetUpperBound()]; ok && b.GetCumulativeCount() != n {
			t.Errorf("bucket le=%g: %d, want %d", b.GetUpperBound(), b.GetCumulativeCount(), n)
		}
	}
	if tpm := families["storbench_tpm"]; tpm == nil || tpm.Metric[0].GetGauge().GetValue() != 60 {
		t.Errorf("client TPM %v, want the last second's 60", tpm)
	}
}

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

// scrape reads the endpoint as Prometheus does (text format), by family name.
func scrape(t *testing.T, s *Server) map[string]*dto.MetricFamily {
	t.Helper()
	resp, err := http.Get(s.URL())
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	parser := expfmt.NewTextParser(model.UTF8Validation)
	families, err := parser.TextToMetricFamilies(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return families
}
