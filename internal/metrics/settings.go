package metrics

import (
	"time"

	"github.com/storbench/storbench/internal/input"
)

// Defaults and bounds of the sampler's settings, for the command line and study
// files alike (DefaultMaxClockSkew is beside the clock comparison).
const (
	DefaultInterval = time.Second
	// MinInterval: over a shorter interval a disk completes a handful of I/Os, so its
	// await and busy figures are noise, and a node_exporter scrape's round trip takes
	// a good part of it.
	MinInterval = 100 * time.Millisecond
	// DefaultIOLatency traces per-I/O latency when this host can, and says why not
	// otherwise, rather than fail a run for want of bpftrace or root.
	DefaultIOLatency = "auto"
	// DefaultWaitRate is how many times a second the database's sessions are read
	// for their wait events: enough for a share within a few percent over a
	// 60 s window, at a cost measured in docs/benchmarks.md.
	DefaultWaitRate = 10.0
	// MaxWaitRate: each reading is a query of the server; faster than this the
	// readings cost the server more than they add to the profile's precision.
	MaxWaitRate = 100.0
)

// CheckInterval checks a sampling interval.
func CheckInterval(d time.Duration) error {
	if d < MinInterval {
		return input.Errorf("interval", "{interval} %s is too short (sample every %v or more; %v is the default)", d, MinInterval, DefaultInterval)
	}
	return nil
}

// CheckMaxClockSkew checks how far a host's clock may be from this machine's.
func CheckMaxClockSkew(d time.Duration) error {
	if d <= 0 {
		return input.Errorf("max_clock_skew", "{max_clock_skew} %s is not positive (give how far a host's clock may be from this machine's, e.g. %v)", d, DefaultMaxClockSkew)
	}
	return nil
}

// CheckWaitRate checks the wait sampling rate in Hz (0 turns sampling off).
func CheckWaitRate(hz float64) error {
	if hz < 0 || hz > MaxWaitRate || hz != hz {
		return input.Errorf("wait_rate", "{wait_rate} %g is out of range (give readings per second from 0, off, to %g; %g is the default)", hz, MaxWaitRate, DefaultWaitRate)
	}
	return nil
}

// CheckIOLatency checks the per-I/O latency setting.
func CheckIOLatency(v string) error {
	switch v {
	case "auto", "on", "off":
		return nil
	}
	return input.Errorf("io_latency", "{io_latency} %q is unknown (use auto, traced when bpftrace can, on, which requires it, or off)", v)
}
