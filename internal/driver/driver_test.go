package driver

import (
	"reflect"
	"runtime"
	"testing"
	"time"

	"github.com/storbench/storbench/internal/engine"
	"github.com/storbench/storbench/internal/tpcc"
)

func TestHomesOf(t *testing.T) {
	cases := []struct {
		user, users, warehouses int
		want                    []int
	}{
		{0, 2, 5, []int{1, 3, 5}},
		{1, 2, 5, []int{2, 4}},
		{0, 1, 3, []int{1, 2, 3}},
		{6, 8, 4, []int{3}}, // more users than warehouses: share one
	}
	for _, c := range cases {
		if got := homesOf(c.user, c.users, c.warehouses); !reflect.DeepEqual(got, c.want) {
			t.Errorf("homesOf(%d, %d, %d) = %v, want %v", c.user, c.users, c.warehouses, got, c.want)
		}
	}
	// Every warehouse is someone's home.
	seen := map[int]bool{}
	for u := range 7 {
		for _, w := range homesOf(u, 7, 50) {
			seen[w] = true
		}
	}
	if len(seen) != 50 {
		t.Errorf("7 users cover %d of 50 warehouses", len(seen))
	}
}

func TestThinkTime(t *testing.T) {
	r := tpcc.NewRand(1, 1)
	const mean = 12.0
	var sum time.Duration
	const n = 200000
	for range n {
		d := thinkTime(r, mean)
		if d < 0 || d > time.Duration(10*mean*float64(time.Second)) {
			t.Fatalf("think time %v outside 0..10×mean", d)
		}
		sum += d
	}
	// Truncation at 10×mean lowers the mean by e^-10 × mean: negligible.
	if got := sum.Seconds() / n; got < mean*0.98 || got > mean*1.02 {
		t.Errorf("mean think time %.2f s, want about %.0f s (5.2.5.4)", got, mean)
	}
}

func TestConfigValidate(t *testing.T) {
	ok := Config{Users: 1, Duration: time.Second, ClientCPUs: 1, Workload: Workload{Mode: engine.SQL}}
	if err := ok.Validate(); err != nil {
		t.Fatalf("valid config rejected: %v", err)
	}
	steady := Config{Users: 1, Duration: time.Minute, UntilSteady: 10 * time.Minute, ClientCPUs: 1, Workload: Workload{Mode: engine.SQL}}
	if err := steady.Validate(); err != nil {
		t.Fatalf("valid config run until steady rejected: %v", err)
	}
	for name, mutate := range map[string]func(*Config){
		"users":    func(c *Config) { c.Users = 0 },
		"ramp":     func(c *Config) { c.Ramp = -time.Second },
		"duration": func(c *Config) { c.Duration = 0 },
		"mode":     func(c *Config) { c.Mode = "fast" },
		"retries":  func(c *Config) { c.MaxRetries = -1 },
		"cpus":     func(c *Config) { c.ClientCPUs = 0 },
		"inputs":   func(c *Config) { c.Inputs = "tpcc" },
		// Beyond the machine or a typo: refused before anything connects.
		"too many users":             func(c *Config) { c.Users = MaxUsers + 1 },
		"ramp too long":              func(c *Config) { c.Ramp = MaxRamp + time.Second },
		"duration too long":          func(c *Config) { c.Duration = MaxDuration + time.Second },
		"more cpus than the machine": func(c *Config) { c.ClientCPUs = runtime.NumCPU() + 1 },
		// Until steady: longer than the duration, which must be long enough to judge.
		"until steady not above the duration": func(c *Config) { c.Duration, c.UntilSteady = time.Minute, time.Minute },
		"until steady negative":               func(c *Config) { c.Duration, c.UntilSteady = time.Minute, -time.Minute },
		"until steady too long":               func(c *Config) { c.Duration, c.UntilSteady = time.Minute, MaxDuration+time.Second },
		"until steady of a short window":      func(c *Config) { c.Duration, c.UntilSteady = 10*time.Second, time.Minute },
	} {
		c := ok
		mutate(&c)
		if err := c.Validate(); err == nil {
			t.Errorf("%s: invalid config accepted", name)
		}
	}
}

func TestPerMinute(t *testing.T) {
	if got := PerMinute(500, 0.5); got != 1000 {
		t.Errorf("PerMinute(500, 0.5) = %v", got)
	}
	if got := PerMinute(5, 0); got != 0 {
		t.Errorf("PerMinute over no time = %v, want 0", got)
	}
}
