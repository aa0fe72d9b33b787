package report

import (
	"errors"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/storbench/storbench/internal/input"
	"github.com/storbench/storbench/internal/study"
)

// minimalStore copies the fixture store's marker, study file, environment and the
// plan's first step into a new directory, with step as steps/0001.json, and
// returns the directory.
func minimalStore(t testing.TB, step []byte) string {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "results")
	if err := os.MkdirAll(filepath.Join(dir, "steps"), 0o755); err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{".storbench-study", "study.yaml", "environment.json", "plan.json"} {
		b, err := os.ReadFile(filepath.Join(fixtureStore, name))
		if err != nil {
			t.Fatal(err)
		}
		if name == "plan.json" {
			b = firstPlanStep(t, b)
		}
		if err := os.WriteFile(filepath.Join(dir, name), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.WriteFile(filepath.Join(dir, "steps", "0001.json"), step, 0o644); err != nil {
		t.Fatal(err)
	}
	return dir
}

// firstPlanStep cuts a plan.json down to its first step.
func firstPlanStep(t testing.TB, plan []byte) []byte {
	t.Helper()
	s := string(plan)
	i := strings.Index(s, "\n  },")
	if !strings.HasPrefix(s, "[") || i < 0 {
		t.Fatalf("%s/plan.json is not the indented JSON array it was", fixtureStore)
	}
	return []byte(s[:i] + "\n  }\n]\n")
}

// checkLoadError: a bad input is refused with one line that wraps input.ErrInvalid
// (exit 2) and names the file.
func checkLoadError(t *testing.T, err error, file string) {
	t.Helper()
	if !errors.Is(err, input.ErrInvalid) {
		t.Fatalf("error does not wrap input.ErrInvalid: %v", err)
	}
	if strings.Contains(err.Error(), "\n") {
		t.Fatalf("error is not one line: %q", err)
	}
	if !strings.Contains(err.Error(), file) {
		t.Fatalf("error does not name %s: %v", file, err)
	}
}

// FuzzLoad: a hostile run or fio JSON file, or a hostile step in a results
// store, is refused by Load with a one-line input.ErrInvalid naming it, or loads and
// makes a report; it never panics.
func FuzzLoad(f *testing.F) {
	for _, p := range []string{fixtureRunA, fixtureFioA, filepath.Join(fixtureStore, "steps", "0001.json"), filepath.Join(fixtureStore, "steps", "0013.json")} {
		b, err := os.ReadFile(p)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b)
		f.Add(b[:len(b)/2])
		f.Add([]byte(strings.Replace(string(b), "1", "-1", 5)))
		f.Add([]byte(strings.ReplaceAll(string(b), "[", "null, [")))
	}
	for _, s := range []string{
		"", "null", "{}", "[]", `{"tpm_db": 1}`, `{"tpm_db": null}`, `{"results": []}`, `{"results": [null]}`,
		`{"results": [{"profile": {"block_size": 0}}]}`, `{"step": {"seq": -1, "kind": "user-sweep"}, "run": {}}`,
		`{"step": {"kind": "storage-profiles"}, "fio": [{}]}`, `{"step": {"kind": "consolidation"}, "consolidation": {}}`,
		`{"step": {"kind": "backup-restore"}, "backup": {}}`, `{"tpm_db": 1, "config": {"users": -5}, "seconds": [{}]}`,
		// A capacity search whose outcome points at probes it does not have.
		`{"step": {"seq": 1, "id": "a/cap", "kind": "capacity"}, "capacity": {"outcome": "found", "best_probe": 9, "fail_probe": -3, "probes": [{"rate_tpm": 5, "pass": true}, {"rate_tpm": 0, "run": {}}]}}`,
		`{"step": {"seq": 1, "id": "a/cap", "kind": "capacity"}, "capacity": {"outcome": "no-probe-passed", "probes": []}}`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		file := filepath.Join(t.TempDir(), "run.json")
		if err := os.WriteFile(file, data, 0o644); err != nil {
			t.Fatal(err)
		}
		store := minimalStore(t, data)
		for _, tc := range []struct{ path, names string }{
			{file, file},
			{store, filepath.Join(store, "steps", "0001.json")},
		} {
			srcs, err := Load([]string{tc.path})
			if err != nil {
				checkLoadError(t, err, tc.names)
				continue
			}
			r, err := Build(srcs, Options{Version: "fuzz", Now: fixedNow})
			if err != nil {
				if !errors.Is(err, input.ErrInvalid) || strings.Contains(err.Error(), "\n") {
					t.Fatalf("Build: %q, want one line wrapping input.ErrInvalid", err)
				}
				continue
			}
			if err := Write(io.Discard, r); err != nil {
				t.Fatalf("Write: %v", err)
			}
		}
	})
}

// A corrupt results store is read step by step: a step file that does not read costs
// its step, named in one line by report.Load's notes and by the store's ReadSteps;
// a corrupt plan refuses the store, with a one-line input.ErrInvalid (exit 2) that
// names it.
func TestLoadCorruptStore(t *testing.T) {
	good, err := os.ReadFile(filepath.Join(fixtureStore, "steps", "0001.json"))
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name  string
		spoil func(dir string) error
		file  string // the file named, in the store
		why   string // what is said of it
	}{
		{"truncated step", func(dir string) error {
			return os.WriteFile(filepath.Join(dir, "steps", "0001.json"), good[:len(good)/2], 0o644)
		}, filepath.Join("steps", "0001.json"), "is torn (its JSON ends early)"},
		{"step not JSON", func(dir string) error {
			return os.WriteFile(filepath.Join(dir, "steps", "0002.json"), []byte("PK\x03\x04 not json\n"), 0o644)
		}, filepath.Join("steps", "0002.json"), "is not JSON storbench wrote"},
		{"step is null", func(dir string) error {
			return os.WriteFile(filepath.Join(dir, "steps", "0002.json"), []byte("null\n"), 0o644)
		}, filepath.Join("steps", "0002.json"), `is not a stored step: it holds step 0 "", not step 2`},
		{"step empty", func(dir string) error {
			return os.WriteFile(filepath.Join(dir, "steps", "0001.json"), nil, 0o644)
		}, filepath.Join("steps", "0001.json"), "is empty"},
		{"plan missing", func(dir string) error {
			return os.Remove(filepath.Join(dir, "plan.json"))
		}, "plan.json", ""},
		{"plan not JSON", func(dir string) error {
			return os.WriteFile(filepath.Join(dir, "plan.json"), []byte("[{"), 0o644)
		}, "plan.json", ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := minimalStore(t, good)
			if err := tc.spoil(dir); err != nil {
				t.Fatal(err)
			}
			st, err := study.ReadStore(dir)
			if err != nil {
				t.Fatal(err)
			}
			srcs, err := Load([]string{dir})
			if tc.why == "" {
				checkLoadError(t, err, filepath.Join(dir, tc.file))
				_, err = st.Plan()
				checkLoadError(t, err, filepath.Join(dir, tc.file))
				return
			}
			line := tc.file + " " + tc.why
			if err != nil || !strings.Contains(strings.Join(srcs[0].Notes, "\n"), line) {
				t.Errorf("report.Load: %v, want the store loaded with a note %q", err, line)
			}
			steps, bad, err := st.ReadSteps()
			if err != nil || len(bad) != 1 || !strings.HasPrefix(bad[0].String(), line) || strings.Contains(bad[0].String(), "\n") {
				t.Errorf("ReadSteps: unreadable %v (%v), want one line %q", bad, err, line)
			}
			if tc.file == filepath.Join("steps", "0002.json") && (len(steps) != 1 || steps[0].Step.Seq != 1) {
				t.Errorf("ReadSteps: %d steps, want step 1 read beside the corrupt step 2", len(steps))
			}
		})
	}
}
