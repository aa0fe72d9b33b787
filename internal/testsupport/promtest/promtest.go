// Package promtest gives a test a real Prometheus server (Debian's prometheus
// package) on loopback, scraping the targets the test names every second, and
// queries it through its HTTP API.
package promtest

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/storbench/storbench/internal/instance/localserver"
)

// Server is a test's Prometheus.
type Server struct {
	// URL is its HTTP API's base ("http://127.0.0.1:PORT").
	URL string
}

// FreePort is a loopback port free now (localserver.FreePort), for a target the
// server is to scrape.
func FreePort(t testing.TB) int {
	t.Helper()
	port, err := localserver.FreePort()
	if err != nil {
		t.Fatal(err)
	}
	return port
}

// Start runs Prometheus scraping targets ("127.0.0.1:PORT", path /metrics) every
// second, until the test ends. It skips the test when prometheus is not installed
// (.ci/run installs it).
func Start(t testing.TB, targets ...string) *Server {
	t.Helper()
	bin, err := exec.LookPath("prometheus")
	if err != nil {
		t.Skip("no prometheus binary (apt-get install prometheus)")
	}
	dir := t.TempDir()
	quoted := make([]string, len(targets))
	for i, target := range targets {
		quoted[i] = strconv.Quote(target)
	}
	config := fmt.Sprintf("global:\n  scrape_interval: 1s\n  scrape_timeout: 900ms\nscrape_configs:\n  - job_name: storbench\n    static_configs:\n      - targets: [%s]\n",
		strings.Join(quoted, ", "))
	if err := os.WriteFile(filepath.Join(dir, "prometheus.yml"), []byte(config), 0o644); err != nil {
		t.Fatal(err)
	}
	addr := fmt.Sprintf("127.0.0.1:%d", FreePort(t))
	cmd := exec.Command(bin, "--config.file="+filepath.Join(dir, "prometheus.yml"), "--storage.tsdb.path="+filepath.Join(dir, "data"),
		"--web.listen-address="+addr, "--web.console.templates="+dir, "--web.console.libraries="+dir)
	log, err := os.Create(filepath.Join(dir, "prometheus.log"))
	if err != nil {
		t.Fatal(err)
	}
	cmd.Stdout, cmd.Stderr = log, log
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = cmd.Process.Signal(syscall.SIGTERM)
		_ = cmd.Wait()
		log.Close()
	})
	s := &Server{URL: "http://" + addr}
	for deadline := time.Now().Add(30 * time.Second); ; time.Sleep(100 * time.Millisecond) {
		resp, err := http.Get(s.URL + "/-/ready")
		if err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return s
			}
		}
		if time.Now().After(deadline) {
			b, _ := os.ReadFile(filepath.Join(dir, "prometheus.log"))
			t.Fatalf("prometheus not ready at %s after 30 s: %v\n%s", addr, err, b)
		}
	}
}

// Series is one series of a query's result: its labels and its values.
type Series struct {
	Labels map[string]string
	Values []float64
}

// Query evaluates a PromQL expression now (an instant query): one value per series
// of a vector, every value of a range vector's series.
func (s *Server) Query(ctx context.Context, t testing.TB, expr string) []Series {
	t.Helper()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, s.URL+"/api/v1/query?query="+url.QueryEscape(expr), nil)
	if err != nil {
		t.Fatal(err)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var body struct {
		Status string `json:"status"`
		Error  string `json:"error"`
		Data   struct {
			ResultType string `json:"resultType"`
			Result     []struct {
				Metric map[string]string `json:"metric"`
				Value  []any             `json:"value"`
				Values [][]any           `json:"values"`
			} `json:"result"`
		} `json:"data"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&body); err != nil {
		t.Fatalf("query %s: %v", expr, err)
	}
	if body.Status != "success" {
		t.Fatalf("query %s: %s", expr, body.Error)
	}
	var out []Series
	for _, r := range body.Data.Result {
		s := Series{Labels: r.Metric}
		points := r.Values
		if r.Value != nil {
			points = [][]any{r.Value}
		}
		for _, p := range points {
			v, err := strconv.ParseFloat(p[1].(string), 64)
			if err != nil {
				t.Fatalf("query %s: value %v", expr, p[1])
			}
			s.Values = append(s.Values, v)
		}
		out = append(out, s)
	}
	return out
}
