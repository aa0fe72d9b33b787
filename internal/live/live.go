// Package live serves what a run or a study measures, as it measures it, on an
// OpenMetrics/Prometheus endpoint (`--listen`): the driver's throughput, errors and
// per-transaction latency histograms each second, the sampler's disks, CPU,
// database counters, wait shares and bottleneck verdicts each sample, and a study's
// progress. It adds nothing to what storbench measures and keeps nothing of it: a
// figure here is the last one taken, labelled by the target it was taken on.
package live

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"strconv"
	"sync/atomic"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"
	"github.com/spf13/pflag"

	"github.com/storbench/storbench/internal/input"
)

// Options are the endpoint's settings.
type Options struct {
	// Listen is the address to serve on: "PORT" or ":PORT" is loopback's
	// (127.0.0.1), "HOST:PORT" that host's. "": no endpoint.
	Listen string
}

// AddFlags declares the endpoint's flag.
func (o *Options) AddFlags(fs *pflag.FlagSet) {
	fs.StringVar(&o.Listen, "listen", "", "serve live metrics for Prometheus at ADDR (PORT or :PORT: on 127.0.0.1; HOST:PORT: on that host), path /metrics")
}

// Address is where Listen serves: a port alone is loopback's.
func (o Options) Address() (string, error) {
	addr := o.Listen
	if _, err := strconv.Atoi(addr); err == nil {
		addr = ":" + addr
	}
	host, port, err := net.SplitHostPort(addr)
	if err != nil {
		return "", input.Errorf("listen", "{listen} %q is not an address: give PORT, :PORT or HOST:PORT (e.g. 9464)", o.Listen)
	}
	if n, err := strconv.Atoi(port); err != nil || n < 0 || n > 65535 {
		return "", input.Errorf("listen", "{listen} %q: the port must be a number from 0 to 65535", o.Listen)
	}
	if host == "" {
		host = "127.0.0.1"
	}
	return net.JoinHostPort(host, port), nil
}

// Server is a live endpoint. Its figures are set by the watchers it hands out
// (Point, Study).
type Server struct {
	reg      *prometheus.Registry
	m        *families
	http     *http.Server
	listener net.Listener
	served   chan error
	// scraped and every are the last scrape's start (Unix ns; 0: never scraped)
	// and the time since the one before (0: fewer than two scrapes).
	scraped, every atomic.Int64
	// studying: a study is watched (Study).
	studying atomic.Bool
}

// finalScrapeWait bounds how long Close waits for a scrape to see the final figures.
const finalScrapeWait = 10 * time.Second

// Listen starts an endpoint at the options' address; nil, nil when none is asked
// for. An address that cannot be had is the user's to change (input.ErrInvalid).
func Listen(o Options, version string) (*Server, error) {
	if o.Listen == "" {
		return nil, nil
	}
	addr, err := o.Address()
	if err != nil {
		return nil, err
	}
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, input.Errorf("listen", "{listen}: cannot serve at %s: %v (choose another port)", addr, errors.Unwrap(err))
	}
	s := &Server{reg: prometheus.NewRegistry(), listener: ln, served: make(chan error, 1)}
	s.m = newFamilies(s.reg, version)
	mux := http.NewServeMux()
	metricsHandler := promhttp.HandlerFor(s.reg, promhttp.HandlerOpts{EnableOpenMetrics: true})
	mux.HandleFunc("/metrics", func(w http.ResponseWriter, r *http.Request) {
		now := time.Now().UnixNano()
		if last := s.scraped.Swap(now); last != 0 {
			s.every.Store(now - last)
		}
		metricsHandler.ServeHTTP(w, r)
	})
	s.http = &http.Server{Handler: mux, ReadHeaderTimeout: 10 * time.Second}
	go func() { s.served <- s.http.Serve(ln) }()
	return s, nil
}

// Addr is the address served (with the port chosen, when :0 asked for any).
func (s *Server) Addr() string { return s.listener.Addr().String() }

// URL is the endpoint's metrics URL.
func (s *Server) URL() string { return "http://" + s.Addr() + "/metrics" }

// Close stops serving, letting a scrape in progress finish (nil: nothing to close).
// An endpoint scraped at a steady pace first waits for one more scrape (up to one
// and a half of its intervals, at most finalScrapeWait): what scrapes it sees a
// run's or a study's final figures (its verdict, its last step stored), not the
// second before them.
func (s *Server) Close() error {
	if s == nil {
		return nil
	}
	if s.studying.Load() {
		s.m.studyRunning.Set(0) // it ended, whether done, failed or interrupted
	}
	if every := time.Duration(s.every.Load()); every > 0 {
		closing := time.Now().UnixNano()
		for deadline := time.Now().Add(min(every*3/2, finalScrapeWait)); s.scraped.Load() < closing && time.Now().Before(deadline); {
			time.Sleep(50 * time.Millisecond)
		}
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	err := s.http.Shutdown(ctx)
	if serr := <-s.served; !errors.Is(serr, http.ErrServerClosed) {
		err = errors.Join(err, fmt.Errorf("live endpoint: %w", serr))
	}
	return err
}
