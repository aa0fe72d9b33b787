package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestRunHammerDBInputs runs HammerDB's inputs on a real (SQLite) database and checks
// the result records the input rules and the NOPM HammerDB would show, with its
// source, in the JSON and the text; a run without --inputs records the spec's and
// has no such figure.
func TestRunHammerDBInputs(t *testing.T) {
	t.Parallel() // its own servers, directories and names: see docs/architecture.md#tests
	dir := t.TempDir()
	dsn := "sqlite://" + filepath.Join(dir, "tpcc.db")
	if code, out, errOut := storbench(t, "build", "--dsn", dsn, "--warehouses", "1"); code != 0 {
		t.Fatalf("build: exit %d\n%s%s", code, out, errOut)
	}
	for _, c := range []struct {
		args     []string
		inputs   string
		hammerdb bool
	}{
		{[]string{"--inputs", "hammerdb"}, "hammerdb", true},
		{nil, "spec", false},
	} {
		jsonPath := filepath.Join(dir, c.inputs+".json")
		args := append([]string{"run", "--dsn", dsn, "--users", "2", "--mode", "sql", "--ramp", "0s", "--duration", "2s", "--no-metrics", "--json", jsonPath}, c.args...)
		code, out, errOut := storbench(t, args...)
		if code != 0 {
			t.Fatalf("%v: exit %d\n%s%s", args, code, out, errOut)
		}
		b, err := os.ReadFile(jsonPath)
		must(t, err)
		var res struct {
			Config struct {
				Inputs string `json:"inputs"`
			} `json:"config"`
			NOPMDB       float64           `json:"nopm_db"`
			HammerDBNOPM *float64          `json:"hammerdb_nopm"`
			Sources      map[string]string `json:"sources"`
		}
		must(t, json.Unmarshal(b, &res))
		if res.Config.Inputs != c.inputs || !strings.Contains(out, "inputs "+c.inputs+",") {
			t.Errorf("%v: config.inputs %q, want %q in the JSON and the text:\n%s", args, res.Config.Inputs, c.inputs, out)
		}
		src, hasSource := res.Sources["hammerdb_nopm"]
		if (res.HammerDBNOPM != nil) != c.hammerdb || hasSource != c.hammerdb || strings.Contains(out, "HammerDB NOPM: ") != c.hammerdb {
			t.Errorf("%v: hammerdb_nopm %v, source %q, want present %v in the JSON and the text:\n%s", args, res.HammerDBNOPM, src, c.hammerdb, out)
		}
		if c.hammerdb && (*res.HammerDBNOPM < res.NOPMDB || res.NOPMDB <= 0 || !strings.Contains(src, "rolled back")) {
			t.Errorf("%v: hammerdb_nopm %v, nopm_db %v, source %q: want at least nopm_db, saying it adds the rolled-back New-Orders", args, *res.HammerDBNOPM, res.NOPMDB, src)
		}
	}
}
