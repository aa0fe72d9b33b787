package driver

import (
	"bytes"
	"context"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/storbench/storbench/internal/engine"
	"github.com/storbench/storbench/internal/tpcc"
)

// TestOpenUsersHomes checks the users' home warehouses follow the input rules: one
// per user in turn under the spec's, drawn at random under HammerDB's, where several
// users share one.
func TestOpenUsersHomes(t *testing.T) {
	const users, warehouses = 12, 12
	cfg := Config{Users: users, Seed: 3, Workload: Workload{Mode: engine.SQL}}
	for _, c := range []struct {
		inputs string
		random bool
	}{{tpcc.SpecInputs, false}, {tpcc.HammerDBInputs, true}} {
		rules, _ := tpcc.ParseInputs(c.inputs)
		us, _, err := openUsers(context.Background(), &fakeDB{}, cfg, rules, warehouses, tpcc.Constants{})
		if err != nil {
			t.Fatal(err)
		}
		shared := false
		seen := map[int]bool{}
		var homes []int
		for i, u := range us {
			if !c.random && u.home != i+1 {
				t.Errorf("spec: user %d has home %d, want %d (one per user in turn)", i, u.home, i+1)
			}
			shared = shared || seen[u.home]
			seen[u.home] = true
			homes = append(homes, u.home)
		}
		if shared != c.random {
			t.Errorf("%s: homes %v of %d users on %d warehouses: shared %v, want %v", c.inputs, homes, users, warehouses, shared, c.random)
		}
	}
}

// TestRunRecordsInputs checks a run's result says which input rules ran, and that
// only HammerDB's add the NOPM HammerDB would show, with its source, in the JSON's
// fields and in the text.
func TestRunRecordsInputs(t *testing.T) {
	// In a bubble: the fake sessions' milliseconds and the runs' second pass on its clock.
	synctest.Test(t, func(t *testing.T) {
		for _, inputs := range []string{"", tpcc.HammerDBInputs} {
			cfg := Config{Users: 2, Duration: time.Second, Seed: 5, ClientCPUs: 1, Workload: Workload{Mode: engine.SQL, Inputs: inputs}}
			res, err := Run(context.Background(), &fakeDB{}, cfg)
			if err != nil {
				t.Fatal(err)
			}
			var text bytes.Buffer
			if err := WriteText(&text, res); err != nil {
				t.Fatal(err)
			}
			_, hasSource := res.Sources["hammerdb_nopm"]
			hammerdb := inputs == tpcc.HammerDBInputs
			want := map[bool]string{false: tpcc.SpecInputs, true: tpcc.HammerDBInputs}[hammerdb]
			if res.Config.Inputs != want || !strings.Contains(text.String(), "inputs "+want) {
				t.Errorf("inputs %q: result records %q, want %q in the config and the text:\n%s", inputs, res.Config.Inputs, want, text.String())
			}
			if hasSource != hammerdb || strings.Contains(text.String(), "HammerDB NOPM:") != hammerdb {
				t.Errorf("inputs %q: hammerdb_nopm source %v, want %v:\n%s", inputs, hasSource, hammerdb, text.String())
			}
			if hammerdb && res.HammerDBNOPM < res.NOPMDB {
				t.Errorf("hammerdb_nopm %.0f below nopm_db %.0f", res.HammerDBNOPM, res.NOPMDB)
			}
		}
	})
}

// TestHammerDBNOPM checks the figure adds the rolled-back New-Orders to the
// database's count, and does not add them twice when the client's count (which has
// them) stands in for an unreadable database.
func TestHammerDBNOPM(t *testing.T) {
	res := &Result{NOPMDB: 1000, Sources: map[string]string{}}
	res.hammerDBNOPM(10, 0.5)
	if res.HammerDBNOPM != 1020 || !strings.Contains(res.Sources["hammerdb_nopm"], "10 New-Orders rolled back") {
		t.Errorf("hammerdb_nopm %v (%s), want 1020 from nopm_db plus 10 rollbacks over half a minute", res.HammerDBNOPM, res.Sources["hammerdb_nopm"])
	}
	res = &Result{NOPMDB: 1000, NOPMClient: 1000, DatabaseUnavailable: true, Sources: map[string]string{}}
	res.hammerDBNOPM(10, 0.5)
	if res.HammerDBNOPM != 1000 || !strings.Contains(res.Sources["hammerdb_nopm"], "nopm_client") {
		t.Errorf("database unavailable: hammerdb_nopm %v (%s), want nopm_client's 1000", res.HammerDBNOPM, res.Sources["hammerdb_nopm"])
	}
}
