package hammerdb

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"
)

// HammerDB's published reports (testdata/README.md) validate against its schema and
// the TPROC-C rules, and read as runs with HammerDB's figures and sources.
func TestPublishedReportsRead(t *testing.T) {
	files, err := filepath.Glob("testdata/*-6*.json")
	if err != nil || len(files) < 4 {
		t.Fatalf("test data: %v %v", files, err)
	}
	want := map[string][2]float64{ // NOPM, TPM as the files state them
		"postgresql-6A21B3A8BFA103E283934383.json": {776679, 1787531},
		"postgresql-6A0CA8E1ABE703E283338383.json": {816787, 1879818},
		"mariadb-6A0D4536FD5E03E223237363.json":    {586379, 1362335},
		"mariadb-6A48B9652EF303E233433333.json":    {1354740, 3149277},
	}
	for _, f := range files {
		t.Run(filepath.Base(f), func(t *testing.T) {
			b, err := os.ReadFile(f)
			if err != nil {
				t.Fatal(err)
			}
			if !Is(b) {
				t.Fatal("not recognised as a job report")
			}
			res, err := Read(b)
			if err != nil {
				t.Fatal(err)
			}
			w := want[filepath.Base(f)]
			if res.NOPMDB != w[0] || res.TPMDB != w[1] {
				t.Errorf("NOPM %v, TPM %v; want %v", res.NOPMDB, res.TPMDB, w)
			}
			if res.Measured("nopm_client") || res.Measured("tpm_client") || res.Measured("timeline_nopm") {
				t.Errorf("figures a HammerDB report does not hold are not marked not measured: %v", res.Sources)
			}
			if !strings.HasPrefix(res.Sources["nopm_db"], "HammerDB job report ") || !strings.HasPrefix(res.Config.Version, "HammerDB v") {
				t.Errorf("not labelled as HammerDB's: %v, %q", res.Sources, res.Config.Version)
			}
			if no := res.Transactions.NewOrder; no.Count == 0 || no.P95Ms <= no.P50Ms || no.P99Ms < no.P95Ms {
				t.Errorf("New-Order response times: %+v", no)
			}
			// The local timestamp is placed by the job ID's Unix seconds.
			if id, _ := strconv.ParseInt(filepath.Base(f)[strings.Index(filepath.Base(f), "-")+1:][:8], 16, 64); !res.Start.Add(-2 * time.Minute).Equal(time.Unix(id, 0)) {
				t.Errorf("the users started at %v, the job ID says %v", res.Start.Add(-2*time.Minute), time.Unix(id, 0).UTC())
			}
			if last := res.Timeline[len(res.Timeline)-1]; last.T > 300 {
				t.Errorf("the timeline goes on past the window's end, to second %d (HammerDB's shutdown tail)", last.T)
			}
			if len(res.Timeline) < 30 || res.Config.Users == 0 || res.End.Sub(res.Start).Minutes() != 5 {
				t.Errorf("timeline of %d points, %d users, window %v", len(res.Timeline), res.Config.Users, res.End.Sub(res.Start))
			}
		})
	}
}

// A report that breaks a rule of the schema or of HammerDB's validator is refused in
// one line naming the field.
func TestBrokenReportsRefused(t *testing.T) {
	good, err := os.ReadFile("testdata/postgresql-6A21B3A8BFA103E283934383.json")
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct{ from, to, field string }{
		{`"audited": false`, `"audited": true`, "/disclaimer/audited"},
		{`"benchmark": "TPROC-C",
    "timestamp": "2026-06-04 18:19:36"`, `"benchmark": "TPROC-C",
    "timestamp": "4 June 2026"`, "/job/timestamp"},
		{`"nopm": 776679`, `"nopm": "776679"`, "/result/nopm"},
		{`"virtual_users": 24,`, ``, "/benchmark_config"},
		{`"jobid": "6A21B3A8BFA103E283934383"`, `"jobid": ""`, "/job/jobid"},
		{`"benchmark": "TPROC-C"`, `"benchmark": "TPROC-H"`, "/job/benchmark"},
	} {
		b := strings.Replace(string(good), c.from, c.to, 1)
		if b == string(good) {
			t.Fatalf("%q is not in the report", c.from)
		}
		_, err := Read([]byte(b))
		if err == nil || !strings.Contains(err.Error(), c.field) || strings.Contains(err.Error(), "\n") {
			t.Errorf("%s → %s: %v; want one line naming %s", c.from, c.to, err, c.field)
		}
	}
}
