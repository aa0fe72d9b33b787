package main

import (
	"bytes"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/santhosh-tekuri/jsonschema/v6"
)

const hammerdbTestdata = "../../internal/hammerdb/testdata"

// validHammerDB validates a file against HammerDB's published v1 schema alone, as
// published (the package's copy, schema/), with the JSON Schema library: what the export
// writes is HammerDB's format, not only storbench's reading of it.
func validHammerDB(t *testing.T, path string) {
	t.Helper()
	c := jsonschema.NewCompiler()
	s, err := c.Compile("../../internal/hammerdb/schema/hammerdb-job-report-v1.schema.json")
	if err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(b))
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Validate(doc); err != nil {
		t.Errorf("%s does not validate against HammerDB's schema: %v", path, err)
	}
}

// TestHammerDBResultsBothWays: a storbench run exported as a HammerDB job report
// validates against HammerDB's schema; report and compare take it, and HammerDB's
// own published report, beside storbench's results, HammerDB's labelled as its; the
// export reads back with the run's NOPM. A study's export writes one report per
// TPC-C step, says which steps it skipped, and replaces only what it wrote.
func TestHammerDBResultsBothWays(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	run := reportFixtures + "/run-fast.json"
	exported := filepath.Join(dir, "run-fast.hammerdb.json")
	code, out, errOut := storbench(t, "results", "export", run, "--hammerdb", exported)
	if code != 0 || !strings.Contains(out, "written to "+exported) {
		t.Fatalf("export of a run: exit %d\n%s%s", code, out, errOut)
	}
	validHammerDB(t, exported)
	published := hammerdbTestdata + "/postgresql-6A21B3A8BFA103E283934383.json"
	validHammerDB(t, published)

	html := filepath.Join(dir, "r.html")
	code, out, errOut = storbench(t, "report", run, exported, published, hammerdbTestdata+"/mariadb-6A48B9652EF303E233433333.json", "-o", html)
	if code != 0 {
		t.Fatalf("report of storbench's and HammerDB's results: exit %d\n%s%s", code, out, errOut)
	}
	b, err := os.ReadFile(html)
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"HammerDB v6.0", "776,679", "1,354,740",
		"HammerDB&#39;s figures, from its job report 6A21B3A8BFA103E283934383"} {
		if !strings.Contains(string(b), want) {
			t.Errorf("the report lacks %q", want)
		}
	}

	code, out, errOut = storbench(t, "compare", run, exported)
	if code != 0 {
		t.Fatalf("compare: exit %d\n%s%s", code, out, errOut)
	}
	if m := regexp.MustCompile(`A vs B\s+\d+\s+\d+\s+\d+\s+([\d,]+)\s+([\d,]+)`).FindStringSubmatch(out); m == nil || m[1] != m[2] {
		t.Errorf("compare of a run and its export: the NOPM differ or are missing:\n%s", out)
	}
	code, out, errOut = storbench(t, "compare", run, published)
	if code != 0 || !strings.Contains(out, "776,679") {
		t.Errorf("compare with HammerDB's report: exit %d\n%s%s", code, out, errOut)
	}

	// A study's steps, twice into the same directory.
	studyOut := filepath.Join(dir, "study-hammerdb")
	for range 2 {
		code, out, errOut = storbench(t, "results", "export", fixtureStudy, "--hammerdb", studyOut)
		if code != 0 || !strings.Contains(out, "8 HammerDB job reports written to "+studyOut) ||
			!strings.Contains(out, "note: step 11 ") || !strings.Contains(out, "backup-restore step has no single TPC-C run") {
			t.Fatalf("export of a study: exit %d\n%s%s", code, out, errOut)
		}
	}
	files, _ := filepath.Glob(filepath.Join(studyOut, "*.json"))
	if len(files) != 8 {
		t.Fatalf("%d reports in %s, want 8", len(files), studyOut)
	}
	for _, f := range files {
		validHammerDB(t, f)
	}

	// What storbench did not write is neither replaced nor written into.
	mine := filepath.Join(dir, "mine.json")
	must(t, os.WriteFile(mine, []byte(`{"my": "notes"}`), 0o644))
	code, _, errOut = storbench(t, "results", "export", run, "--hammerdb", mine)
	if code != 2 || !strings.Contains(errOut, mine+" exists and is not a HammerDB job report storbench wrote") {
		t.Errorf("export over a user's file: exit %d, %q", code, errOut)
	}
	if got, _ := os.ReadFile(mine); string(got) != `{"my": "notes"}` {
		t.Errorf("the user's file was changed: %q", got)
	}
	code, _, errOut = storbench(t, "results", "export", fixtureStudy, "--hammerdb", dir)
	if code != 2 || !strings.Contains(errOut, "is not an export storbench made") {
		t.Errorf("export of a study into a directory of the user's: exit %d, %q", code, errOut)
	}
	code, _, errOut = storbench(t, "results", "export", run, "--csv", filepath.Join(dir, "x.csv"))
	if code != 2 || !strings.Contains(errOut, "--csv exports a study's results store") {
		t.Errorf("--csv of a run's file: exit %d, %q", code, errOut)
	}
}
