package fio

import (
	"bytes"
	"encoding/json"
	"math"
	"os"
	"path/filepath"
	"reflect"
	"strconv"
	"strings"
	"testing"
)

// The fixtures are real fio 3.33 output made by testdata/gen.sh. The tests
// derive what each field must be from the fixture itself through a plain
// map[string]any, so a mistake in ParseReport's field mapping cannot cancel
// out.

func readFixture(t testing.TB, name string) []byte {
	t.Helper()
	data, err := os.ReadFile(filepath.Join("testdata", name))
	if err != nil {
		t.Fatal(err)
	}
	return data
}

// fixtureJobs decodes a fixture's "jobs" independently of ParseReport.
func fixtureJobs(t *testing.T, data []byte) (version string, jobs []map[string]any) {
	t.Helper()
	i := 0
	if !bytes.HasPrefix(data, []byte("{")) {
		i = bytes.Index(data, []byte("\n{")) + 1
	}
	// steady_nan.json holds fio's bare -nan; only that token needs fixing here.
	text := strings.ReplaceAll(string(data[i:]), ": -nan,", `: "-nan",`)
	var doc map[string]any
	if err := json.NewDecoder(strings.NewReader(text)).Decode(&doc); err != nil {
		t.Fatalf("fixture does not decode: %v", err)
	}
	for _, j := range doc["jobs"].([]any) {
		jobs = append(jobs, j.(map[string]any))
	}
	return doc["fio version"].(string), jobs
}

func obj(m map[string]any, keys ...string) map[string]any {
	for _, k := range keys {
		m, _ = m[k].(map[string]any)
	}
	return m
}

func numAt(m map[string]any, keys ...string) float64 {
	v, _ := obj(m, keys[:len(keys)-1]...)[keys[len(keys)-1]].(float64)
	return v
}

func wantSide(m map[string]any) Side {
	pct := func(k string) float64 {
		v, _ := obj(m, "clat_ns", "percentile")[k].(float64)
		return v / 1e6
	}
	return Side{
		IOs:       int64(numAt(m, "total_ios")),
		Bytes:     int64(numAt(m, "io_bytes")),
		IOPS:      numAt(m, "iops"),
		MBps:      numAt(m, "bw_bytes") / 1e6,
		MeanLatMs: numAt(m, "clat_ns", "mean") / 1e6,
		P50Ms:     pct("50.000000"),
		P99Ms:     pct("99.000000"),
		P999Ms:    pct("99.900000"),
		MaxMs:     numAt(m, "clat_ns", "max") / 1e6,
	}
}

func wantJob(m map[string]any) JobStats {
	wall := max(numAt(m, "read", "runtime"), numAt(m, "write", "runtime"), numAt(m, "trim", "runtime"))
	scale := numAt(m, "job_runtime") / wall
	js := JobStats{
		Name:           m["jobname"].(string),
		Read:           wantSide(obj(m, "read")),
		Write:          wantSide(obj(m, "write")),
		UserCPU:        numAt(m, "usr_cpu") * scale,
		SystemCPU:      numAt(m, "sys_cpu") * scale,
		RuntimeSeconds: wall / 1000,
		Error:          int(numAt(m, "error")),
	}
	if ss := obj(m, "steadystate"); ss != nil {
		js.Steady = &Steady{
			Attained: numAt(ss, "attained") == 1,
			// The fixtures ask for iops_slope:0.3%, which fio prints as
			// 0.300000.
			Criterion: strings.Replace(ss["ss"].(string), "0.300000", "0.3", 1),
			Duration:  numAt(ss, "duration"),
		}
		if js.Steady.Attained {
			js.Steady.AttainedAfter = wall / 1000
		}
	}
	return js
}

func closeTo(a, b float64) bool {
	return a == b || math.Abs(a-b) <= 1e-9*math.Max(math.Abs(a), math.Abs(b))
}

func checkSide(t *testing.T, what string, got, want Side) {
	t.Helper()
	if got.IOs != want.IOs || got.Bytes != want.Bytes {
		t.Errorf("%s: IOs, Bytes = %d, %d; want %d, %d", what, got.IOs, got.Bytes, want.IOs, want.Bytes)
	}
	for _, f := range []struct {
		name      string
		got, want float64
	}{
		{"IOPS", got.IOPS, want.IOPS}, {"MBps", got.MBps, want.MBps},
		{"MeanLatMs", got.MeanLatMs, want.MeanLatMs}, {"P50Ms", got.P50Ms, want.P50Ms},
		{"P99Ms", got.P99Ms, want.P99Ms}, {"P999Ms", got.P999Ms, want.P999Ms},
		{"MaxMs", got.MaxMs, want.MaxMs},
	} {
		if !closeTo(f.got, f.want) {
			t.Errorf("%s.%s = %v, want %v", what, f.name, f.got, f.want)
		}
	}
	if got.IOs > 0 {
		if !(got.P50Ms > 0 && got.P50Ms <= got.P99Ms && got.P99Ms <= got.P999Ms && got.P999Ms <= got.MaxMs) {
			t.Errorf("%s: percentiles out of order: p50 %v, p99 %v, p99.9 %v, max %v", what, got.P50Ms, got.P99Ms, got.P999Ms, got.MaxMs)
		}
	} else if got != (Side{}) {
		t.Errorf("%s: no I/O but %+v", what, got)
	}
}

func TestParseReportFixtures(t *testing.T) {
	tests := []struct {
		file  string
		names []string
		// reads and writes say which directions must have I/O, per job.
		reads, writes []bool
		// jobsPerEntry is numjobs: the CPU figures must be about that many
		// times fio's per-job average.
		jobsPerEntry int
		check        func(t *testing.T, r *Report)
	}{
		{file: "randread.json", names: []string{"randread"}, reads: []bool{true}, writes: []bool{false}, jobsPerEntry: 1},
		{file: "randwrite.json", names: []string{"randwrite"}, reads: []bool{false}, writes: []bool{true}, jobsPerEntry: 1},
		{file: "randrw.json", names: []string{"randrw"}, reads: []bool{true}, writes: []bool{true}, jobsPerEntry: 2,
			check: func(t *testing.T, r *Report) {
				js := r.Jobs[0]
				share := js.Read.IOPS / (js.Read.IOPS + js.Write.IOPS)
				if share < 0.65 || share > 0.75 {
					t.Errorf("rwmixread=70 but reads are %.1f%% of IOPS", share*100)
				}
			}},
		{file: "ungrouped.json", names: []string{"ungrouped", "ungrouped", "ungrouped", "ungrouped"},
			reads: []bool{true, true, true, true}, writes: []bool{false, false, false, false}, jobsPerEntry: 1},
		{file: "stonewall.json", names: []string{"seqread", "seqwrite"},
			reads: []bool{true, false}, writes: []bool{false, true}, jobsPerEntry: 0,
			check: func(t *testing.T, r *Report) {
				// seqread has one job, seqwrite numjobs=2.
				_, raw := fixtureJobs(t, readFixture(t, "stonewall.json"))
				for i, n := range []float64{1, 2} {
					if got, usr := r.Jobs[i].UserCPU, numAt(raw[i], "usr_cpu"); math.Abs(got-n*usr) > 0.01*n*usr {
						t.Errorf("%s: UserCPU %v, want about %v x usr_cpu %v", r.Jobs[i].Name, got, n, usr)
					}
				}
			}},
		{file: "steady.json", names: []string{"steady"}, reads: []bool{true}, writes: []bool{false}, jobsPerEntry: 1,
			check: func(t *testing.T, r *Report) {
				st := r.Jobs[0].Steady
				if st == nil || !st.Attained || st.Criterion != "iops_slope:0.3%" || st.Duration != 2 {
					t.Fatalf("Steady = %+v", st)
				}
				// ss_ramp 1 s + ss_dur 2 s at least, and fio stopped before runtime=6.
				if st.AttainedAfter < 3 || st.AttainedAfter >= 6 {
					t.Errorf("AttainedAfter = %v, want within [3, 6)", st.AttainedAfter)
				}
			}},
		{file: "steady_unattained.json", names: []string{"unsteady"}, reads: []bool{true}, writes: []bool{false}, jobsPerEntry: 1,
			check: func(t *testing.T, r *Report) {
				st := r.Jobs[0].Steady
				if st == nil || st.Attained || st.AttainedAfter != 0 || st.Criterion != "iops_slope:0.3%" {
					t.Fatalf("Steady = %+v", st)
				}
				if rt := r.Jobs[0].RuntimeSeconds; rt < 5.9 || rt > 6.1 {
					t.Errorf("RuntimeSeconds = %v, want the whole runtime=6", rt)
				}
			}},
		{file: "note.json", names: []string{"note"}, reads: []bool{true}, writes: []bool{false}, jobsPerEntry: 1},
	}
	for _, tc := range tests {
		t.Run(tc.file, func(t *testing.T) {
			data := readFixture(t, tc.file)
			r, err := ParseReport(data)
			if err != nil {
				t.Fatal(err)
			}
			version, raw := fixtureJobs(t, data)
			if r.FioVersion != version || version != "fio-3.33" {
				t.Errorf("FioVersion = %q, fixture says %q", r.FioVersion, version)
			}
			if len(r.Jobs) != len(tc.names) || len(raw) != len(tc.names) {
				t.Fatalf("%d jobs parsed, %d in the fixture, want %d", len(r.Jobs), len(raw), len(tc.names))
			}
			for i, js := range r.Jobs {
				want := wantJob(raw[i])
				if js.Name != tc.names[i] || js.Name != want.Name {
					t.Errorf("job %d: Name = %q, want %q", i, js.Name, tc.names[i])
				}
				checkSide(t, js.Name+" read", js.Read, want.Read)
				checkSide(t, js.Name+" write", js.Write, want.Write)
				if (js.Read.IOs > 0) != tc.reads[i] || (js.Write.IOs > 0) != tc.writes[i] {
					t.Errorf("%s: read IOs %d, write IOs %d; want reads %v, writes %v", js.Name, js.Read.IOs, js.Write.IOs, tc.reads[i], tc.writes[i])
				}
				// fio's own per-job figures, summed over directions.
				fioIOPS := numAt(raw[i], "read", "iops") + numAt(raw[i], "write", "iops")
				if !closeTo(js.Read.IOPS+js.Write.IOPS, fioIOPS) {
					t.Errorf("%s: read+write IOPS %v, fio says %v", js.Name, js.Read.IOPS+js.Write.IOPS, fioIOPS)
				}
				// RuntimeSeconds must be the denominator of fio's rates.
				ios := float64(js.Read.IOs + js.Write.IOs)
				if rate := ios / js.RuntimeSeconds; math.Abs(rate-fioIOPS) > 1e-6*fioIOPS {
					t.Errorf("%s: IOs/RuntimeSeconds = %v, fio's IOPS %v", js.Name, rate, fioIOPS)
				}
				for _, c := range []struct {
					name      string
					got, want float64
				}{{"UserCPU", js.UserCPU, want.UserCPU}, {"SystemCPU", js.SystemCPU, want.SystemCPU}, {"RuntimeSeconds", js.RuntimeSeconds, want.RuntimeSeconds}} {
					if !closeTo(c.got, c.want) {
						t.Errorf("%s: %s = %v, want %v", js.Name, c.name, c.got, c.want)
					}
				}
				if n := float64(tc.jobsPerEntry); n > 0 {
					usr := numAt(raw[i], "usr_cpu")
					if math.Abs(js.UserCPU-n*usr) > 0.01*n*usr {
						t.Errorf("%s: UserCPU %v, want about %v x usr_cpu %v", js.Name, js.UserCPU, n, usr)
					}
				}
				if js.Error != want.Error || js.Error != 0 {
					t.Errorf("%s: Error = %d, want %d", js.Name, js.Error, want.Error)
				}
				if !reflect.DeepEqual(js.Steady, want.Steady) {
					t.Errorf("%s: Steady = %+v, want %+v", js.Name, js.Steady, want.Steady)
				}
			}
			if tc.check != nil {
				tc.check(t, r)
			}
		})
	}
}

func TestParseReportNoteBeforeJSON(t *testing.T) {
	data := readFixture(t, "note.json")
	if !bytes.HasPrefix(data, []byte("note: both iodepth >= 1 and synchronous I/O engine")) {
		t.Fatalf("fixture should start with fio's note, starts %q", data[:40])
	}
	r, err := ParseReport(data)
	if err != nil {
		t.Fatal(err)
	}
	if len(r.Jobs) != 1 || r.Jobs[0].Read.IOs == 0 {
		t.Errorf("jobs = %+v", r.Jobs)
	}
	// Several lines of notes, one of them with a brace inside the line.
	more := append([]byte("fio: warning {sic}\n\nnote: another\n"), data...)
	r2, err := ParseReport(more)
	if err != nil || !reflect.DeepEqual(r, r2) {
		t.Errorf("with more notes: %v, %+v", err, r2)
	}
}

func TestParseReportTrailingText(t *testing.T) {
	data := readFixture(t, "randread.json")
	want, err := ParseReport(data)
	if err != nil {
		t.Fatal(err)
	}
	for _, tail := range []string{
		"fio: file hash not empty on exit\n",
		"\n{\"jobs\": []}\n", // a second JSON value is not read
		"garbage } ] \"",
	} {
		got, err := ParseReport(append(append([]byte{}, data...), tail...))
		if err != nil || !reflect.DeepEqual(got, want) {
			t.Errorf("tail %q: %v", tail, err)
		}
	}
}

func TestParseReportGarbage(t *testing.T) {
	long := strings.Repeat("x", 200)
	for name, in := range map[string]string{
		"empty":               "",
		"not JSON":            "this is not fio output",
		"long text":           long,
		"note only":           "note: both iodepth >= 1 and synchronous I/O engine are selected\n",
		"brace not at start":  "  {\"jobs\": [{\"jobname\": \"x\", \"read\": {}}]}",
		"truncated":           "{\n  \"fio version\" : \"fio-3.33\",\n  \"jobs\" : [",
		"no jobs key":         `{"fio version": "fio-3.33"}`,
		"no jobs":             `{"fio version": "fio-3.33", "jobs": []}`,
		"jobs not a list":     `{"jobs": 3}`,
		"array":               `[1, 2]`,
		"mixed only":          `{"jobs": [{"jobname": "u", "mixed": {"iops": 10}}]}`,
		"negative iops":       `{"jobs": [{"jobname": "n", "read": {"iops": -1}}]}`,
		"string iops":         `{"jobs": [{"jobname": "s", "read": {"iops": "fast"}}]}`,
		"nan iops":            `{"jobs": [{"jobname": "s", "read": {"iops": nan}}]}`,
		"inf runtime":         `{"jobs": [{"jobname": "s", "read": {"runtime": inf}}]}`,
		"overflow":            `{"jobs": [{"jobname": "s", "read": {"bw_bytes": 1e999}}]}`,
		"fractional count":    `{"jobs": [{"jobname": "s", "read": {"total_ios": 1.5}}]}`,
		"huge count":          `{"jobs": [{"jobname": "s", "read": {"total_ios": 1e30}}]}`,
		"negative error":      `{"jobs": [{"jobname": "s", "error": -5, "read": {}}]}`,
		"percentile missing":  `{"jobs": [{"jobname": "p", "read": {"total_ios": 5, "clat_ns": {"N": 5, "mean": 1000, "max": 2000}}}]}`,
		"percentile partial":  `{"jobs": [{"jobname": "p", "read": {"total_ios": 5, "clat_ns": {"percentile": {"50.000000": 1000, "99.000000": 1500}}}}]}`,
		"cpu overflow":        `{"jobs": [{"jobname": "c", "usr_cpu": 1e300, "job_runtime": 1e300, "read": {"runtime": 1}}]}`,
		"steady one interval": `{"jobs": [{"jobname": "s", "read": {}, "steadystate": {"ss": "iops_slope:0.300000%", "attained": 1, "slope": 2, "data": {"iops": [5]}}}]}`,
	} {
		t.Run(name, func(t *testing.T) {
			r, err := ParseReport([]byte(in))
			if err == nil {
				t.Fatalf("no error; got %+v", r)
			}
			want := in
			if len(want) > 80 {
				want = want[:80]
			}
			msg := err.Error()
			switch name {
			case "empty", "not JSON", "long text", "note only", "brace not at start", "truncated", "no jobs key", "no jobs", "jobs not a list", "array":
				if !strings.Contains(msg, strconv.Quote(want)) {
					t.Errorf("error %q does not quote the input's first 80 chars %q", msg, want)
				}
				if !strings.Contains(msg, "expected") {
					t.Errorf("error %q does not say what was expected", msg)
				}
			}
			t.Log(msg)
		})
	}
}

// fio writes some numbers as integers and some as floats, varying by version.
func TestParseReportNumbers(t *testing.T) {
	in := `{"fio version": "fio-x", "jobs": [{"jobname": "n", "error": 0.0, "job_runtime": 2000.0, "usr_cpu": 1, "sys_cpu": "2.5",
		"read": {"total_ios": 1.0e3, "io_bytes": 4096000, "iops": 500, "bw_bytes": 2048000.0, "runtime": 2000,
			"clat_ns": {"N": 1000, "mean": 100000, "max": 9.0e5,
				"percentile": {"50.000000": 1e5, "99.000000": 200000, "99.90": 300000.0, "99.950000": null}}},
		"write": {"total_ios": 0, "runtime": 0, "clat_ns": {"N": 0, "mean": 0, "max": 0, "percentile": {"50.000000": 0}}},
		"steadystate": {"ss": "bw:12.500000", "duration": 4, "attained": 0, "slope": 1e-400, "max_deviation": 0, "data": {"iops": [1, 2, 3, 4]}}}]}`
	r, err := ParseReport([]byte(in))
	if err != nil {
		t.Fatal(err)
	}
	want := JobStats{Name: "n",
		Read:      Side{IOs: 1000, Bytes: 4096000, IOPS: 500, MBps: 2.048, MeanLatMs: 0.1, P50Ms: 0.1, P99Ms: 0.2, P999Ms: 0.3, MaxMs: 0.9},
		UserCPU:   1, // one job: job_runtime equals the wall time
		SystemCPU: 2.5, RuntimeSeconds: 2,
		Steady: &Steady{Criterion: "bw:12.5", Duration: 4},
	}
	if got := r.Jobs[0]; !reflect.DeepEqual(got, want) {
		t.Errorf("got  %+v\nwant %+v", got, want)
	}
}

// A steady-state job with ss_dur=1 makes fio print "slope" : -nan and
// "attained" : 1; the report is not JSON and the verdict is empty.
func TestParseReportSteadyNaN(t *testing.T) {
	data := readFixture(t, "steady_nan.json")
	if !bytes.Contains(data, []byte(`"slope" : -nan`)) {
		t.Fatal("fixture should hold fio's bare -nan")
	}
	_, err := ParseReport(data)
	if err == nil || !strings.Contains(err.Error(), "steadystate") {
		t.Fatalf("err = %v, want a steadystate error", err)
	}
	t.Log(err)
	// A bare nan where nothing reads it does not sink the report.
	fixed := bytes.Replace(data, []byte(`"steadystate" : {`), []byte(`"unread" : {`), 1)
	r, err := ParseReport(fixed)
	if err != nil || r.Jobs[0].Steady != nil || r.Jobs[0].Read.IOs == 0 {
		t.Errorf("without the steadystate object: %v, %+v", err, r)
	}
}

func TestQuoteNonFiniteParse(t *testing.T) {
	for in, want := range map[string]string{
		`{"a": -nan, "b": "-nan", "c": inf}`:      `{"a": "-nan", "b": "-nan", "c": "inf"}`,
		`{"s": "say \"nan\" -inf", "t": true}`:    `{"s": "say \"nan\" -inf", "t": true}`,
		`[-1, +Infinity, NaN, null, false, -0.5]`: `[-1, "+Infinity", "NaN", null, false, -0.5]`,
		`{"k\\": nan}`:          `{"k\\": "nan"}`,
		`nonsense nan`:          `nonsense "nan"`,
		`{"unterminated": "nan`: `{"unterminated": "nan`,
		`{"x": 1e5, "y": -2E-3, "nanx": nanometre}`: `{"x": 1e5, "y": -2E-3, "nanx": nanometre}`,
	} {
		if got := string(quoteNonFinite([]byte(in))); got != want {
			t.Errorf("quoteNonFinite(%s) = %s, want %s", in, got, want)
		}
	}
}

func TestParseLogLine(t *testing.T) {
	good := []struct {
		line string
		msec int64
		v    float64
		dir  int
	}{
		{"1000, 19180, 0, 0, 0", 1000, 19180, 0},
		{"2001, 8163, 1, 4096, 0, 0", 2001, 8163, 1}, // with the priority column
		{"999, 12.5, 2, 0", 999, 12.5, 2},            // older fio: no offset column
		{" 3000 ,7,1,0,0\r", 3000, 7, 1},
	}
	for _, g := range good {
		msec, v, dir, err := parseLogLine(g.line)
		if err != nil || msec != g.msec || v != g.v || dir != g.dir {
			t.Errorf("parseLogLine(%q) = %d, %v, %d, %v", g.line, msec, v, dir, err)
		}
	}
	for _, bad := range []string{"", "1000", "1000, 5", "x, 5, 0, 0, 0", "1000, y, 0, 0, 0", "1000, 5, 3, 0, 0",
		"1000, 5, -1, 0, 0", "-5, 5, 0, 0, 0", "1000, -5, 0, 0, 0", "1000, NaN, 0, 0, 0", "1000, inf, 0, 0, 0",
		"1.5, 5, 0, 0, 0", "99999999999999999999, 5, 0, 0, 0"} {
		if _, _, _, err := parseLogLine(bad); err == nil {
			t.Errorf("parseLogLine(%q): no error", bad)
		}
	}
}

// logEntries reads a fixture log independently: second (rounded) and
// direction to the first value.
func logEntries(t *testing.T, path string) map[[2]int]float64 {
	t.Helper()
	out := map[[2]int]float64{}
	for _, line := range strings.Split(strings.TrimSpace(string(readFixture(t, path))), "\n") {
		f := strings.Split(line, ",")
		ms, _ := strconv.ParseFloat(strings.TrimSpace(f[0]), 64)
		v, _ := strconv.ParseFloat(strings.TrimSpace(f[1]), 64)
		d, _ := strconv.Atoi(strings.TrimSpace(f[2]))
		k := [2]int{int(math.Round(ms / 1000)), d}
		if _, ok := out[k]; !ok {
			out[k] = v
		}
	}
	return out
}

func TestPerSecondFixture(t *testing.T) {
	got, err := PerSecond("testdata", "randrw")
	if err != nil {
		t.Fatal(err)
	}
	// runtime=2: fio logs the iops and bw of the last window of a job only
	// sometimes, so one or two seconds.
	if len(got) < 1 || len(got) > 2 || got[0].T != 1 {
		t.Fatalf("PerSecond = %+v, want seconds 1 (and 2)", got)
	}
	for _, s := range got {
		var want Second
		want.T = s.T
		for d, dst := range []struct{ iops, mbps, lat *float64 }{
			{&want.ReadIOPS, &want.ReadMBps, &want.ReadLatMs},
			{&want.WriteIOPS, &want.WriteMBps, &want.WriteLatMs},
		} {
			var weighted float64
			for job := 1; job <= 2; job++ {
				k := [2]int{s.T, d}
				n := logEntries(t, "randrw_iops."+strconv.Itoa(job)+".log")[k]
				*dst.iops += n
				*dst.mbps += logEntries(t, "randrw_bw."+strconv.Itoa(job)+".log")[k] * 1024 / 1e6
				weighted += logEntries(t, "randrw_clat."+strconv.Itoa(job)+".log")[k] * n
			}
			*dst.lat = weighted / *dst.iops / 1e6
		}
		if !closeTo(s.ReadIOPS, want.ReadIOPS) || !closeTo(s.WriteIOPS, want.WriteIOPS) ||
			!closeTo(s.ReadMBps, want.ReadMBps) || !closeTo(s.WriteMBps, want.WriteMBps) ||
			!closeTo(s.ReadLatMs, want.ReadLatMs) || !closeTo(s.WriteLatMs, want.WriteLatMs) {
			t.Errorf("second %d:\n got  %+v\n want %+v", s.T, s, want)
		}
	}
	// The logs and the report come from the same run: a second's rates are
	// near the run's, and 4 KiB blocks tie MB/s to IOPS.
	r, err := ParseReport(readFixture(t, "randrw.json"))
	if err != nil {
		t.Fatal(err)
	}
	js := r.Jobs[0]
	for _, s := range got {
		for _, c := range []struct {
			name            string
			iops, mbps, lat float64
			side            Side
		}{{"read", s.ReadIOPS, s.ReadMBps, s.ReadLatMs, js.Read}, {"write", s.WriteIOPS, s.WriteMBps, s.WriteLatMs, js.Write}} {
			if math.Abs(c.iops/c.side.IOPS-1) > 0.25 || math.Abs(c.lat/c.side.MeanLatMs-1) > 0.5 {
				t.Errorf("second %d %s: %v IOPS at %v ms; the run's %v IOPS at %v ms", s.T, c.name, c.iops, c.lat, c.side.IOPS, c.side.MeanLatMs)
			}
			if !closeTo(c.mbps, c.iops*4096/1e6) && math.Abs(c.mbps/(c.iops*4096/1e6)-1) > 0.001 {
				t.Errorf("second %d %s: %v MB/s for %v IOPS of 4 KiB", s.T, c.name, c.mbps, c.iops)
			}
		}
	}
}

// writeLogs writes PREFIX_KIND.N.log files: files maps "iops.1" to contents.
func writeLogs(t *testing.T, files map[string]string) string {
	t.Helper()
	dir := t.TempDir()
	for name, text := range files {
		if err := os.WriteFile(filepath.Join(dir, "p_"+name+".log"), []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

func TestPerSecondCombining(t *testing.T) {
	dir := writeLogs(t, map[string]string{
		// job 1 has three seconds (drifting timestamps), job 2 misses the
		// third: second 3 is left out rather than summed over one job.
		"iops.1": "1000, 100, 0, 0, 0\n1000, 10, 1, 0, 0\n2001, 200, 0, 0, 0\n2001, 0, 1, 0, 0\n3001, 300, 0, 0, 0\n3001, 30, 1, 0, 0\n",
		"iops.2": "999, 300, 0, 0, 0\n999, 30, 1, 0, 0\n2000, 200, 0, 0, 0\n2000, 20, 1, 0, 0\n",
		"bw.1":   "1000, 400, 0, 0, 0\n1000, 40, 1, 0, 0\n2001, 800, 0, 0, 0\n2001, 0, 1, 0, 0\n3001, 1200, 0, 0, 0\n3001, 120, 1, 0, 0\n",
		"bw.2":   "999, 1200, 0, 0, 0\n999, 120, 1, 0, 0\n2000, 800, 0, 0, 0\n2000, 80, 1, 0, 0\n",
		// job 1 has no write completions in second 2 (none needed), and the
		// end-of-job flush repeats second 2 (ignored); trim is ignored.
		"clat.1": "1000, 1000000, 0, 0, 0\n1000, 2000000, 1, 0, 0\n2000, 3000000, 0, 0, 0\n2000, 9000000000, 0, 0, 0\n2000, 5, 2, 0, 0\n3000, 1, 0, 0, 0\n",
		"clat.2": "1000, 3000000, 0, 0, 0\n1000, 4000000, 1, 0, 0\n2000, 1000000, 0, 0, 0\n2000, 6000000, 1, 0, 0\n",
	})
	got, err := PerSecond(dir, "p")
	if err != nil {
		t.Fatal(err)
	}
	want := []Second{
		{T: 1, ReadIOPS: 400, WriteIOPS: 40, ReadMBps: 1600 * 1024 / 1e6, WriteMBps: 160 * 1024 / 1e6,
			ReadLatMs: (1*100 + 3*300) / 400.0, WriteLatMs: (2*10 + 4*30) / 40.0},
		{T: 2, ReadIOPS: 400, WriteIOPS: 20, ReadMBps: 1600 * 1024 / 1e6, WriteMBps: 80 * 1024 / 1e6,
			ReadLatMs: (3*200 + 1*200) / 400.0, WriteLatMs: 6},
	}
	if len(got) != len(want) {
		t.Fatalf("got %+v, want %+v", got, want)
	}
	for i := range want {
		g, w := got[i], want[i]
		if g.T != w.T || !closeTo(g.ReadIOPS, w.ReadIOPS) || !closeTo(g.WriteIOPS, w.WriteIOPS) ||
			!closeTo(g.ReadMBps, w.ReadMBps) || !closeTo(g.WriteMBps, w.WriteMBps) ||
			!closeTo(g.ReadLatMs, w.ReadLatMs) || !closeTo(g.WriteLatMs, w.WriteLatMs) {
			t.Errorf("second %d:\n got  %+v\n want %+v", i+1, g, w)
		}
	}
}

func TestPerSecondIncomplete(t *testing.T) {
	base := map[string]string{
		"iops.1": "1000, 100, 0, 0, 0\n2000, 100, 0, 0, 0\n",
		"bw.1":   "1000, 400, 0, 0, 0\n2000, 400, 0, 0, 0\n",
		"clat.1": "1000, 1000, 0, 0, 0\n2000, 1000, 0, 0, 0\n",
	}
	with := func(k, v string) map[string]string {
		m := map[string]string{}
		for a, b := range base {
			m[a] = b
		}
		m[k] = v
		return m
	}
	for name, tc := range map[string]struct {
		files map[string]string
		secs  []int
	}{
		"complete":             {base, []int{1, 2}},
		"bw missing second 2":  {with("bw.1", "1000, 400, 0, 0, 0\n"), []int{1}},
		"clat missing with IO": {with("clat.1", "2000, 1000, 0, 0, 0\n"), []int{2}},
		"iops repeated":        {with("iops.1", "1000, 100, 0, 0, 0\n1400, 100, 0, 0, 0\n2000, 100, 0, 0, 0\n"), []int{2}},
		"empty logs":           {map[string]string{"iops.1": "", "bw.1": "\n", "clat.1": ""}, nil},
	} {
		t.Run(name, func(t *testing.T) {
			got, err := PerSecond(writeLogs(t, tc.files), "p")
			if err != nil {
				t.Fatal(err)
			}
			var secs []int
			for _, s := range got {
				secs = append(secs, s.T)
			}
			if !reflect.DeepEqual(secs, tc.secs) {
				t.Errorf("seconds %v, want %v", secs, tc.secs)
			}
		})
	}
}

func TestPerSecondErrors(t *testing.T) {
	ok := "1000, 1, 0, 0, 0\n"
	for name, tc := range map[string]struct {
		files map[string]string
		want  string
	}{
		"no clat logs":     {map[string]string{"iops.1": ok, "bw.1": ok}, "no clat log"},
		"no logs":          {map[string]string{}, "no iops log"},
		"bad line":         {map[string]string{"iops.1": ok, "bw.1": ok + ok + "1000, x, 0\n", "clat.1": ok}, "p_bw.1.log:3:"},
		"job gap":          {map[string]string{"iops.1": ok, "iops.3": ok, "bw.1": ok, "bw.3": ok, "clat.1": ok, "clat.3": ok}, "p_iops.2.log is missing"},
		"job counts":       {map[string]string{"iops.1": ok, "iops.2": ok, "bw.1": ok, "clat.1": ok, "clat.2": ok}, "2 p_iops logs but 1 p_bw"},
		"not a job number": {map[string]string{"iops.1": ok, "iops.x": ok, "bw.1": ok, "clat.1": ok}, `"x" is not a job number`},
		"no whole second":  {map[string]string{"iops.1": ok, "iops.2": "2000, 1, 0, 0, 0\n", "bw.1": ok, "bw.2": ok, "clat.1": ok, "clat.2": ok}, "no second has entries from all 2 jobs"},
	} {
		t.Run(name, func(t *testing.T) {
			_, err := PerSecond(writeLogs(t, tc.files), "p")
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("err = %v, want it to mention %q", err, tc.want)
			}
			t.Log(err)
		})
	}
	if _, err := PerSecond(filepath.Join(t.TempDir(), "nope"), "p"); err == nil {
		t.Error("missing directory: no error")
	}
}

func FuzzParseReport(f *testing.F) {
	names, err := filepath.Glob(filepath.Join("testdata", "*.json"))
	if err != nil || len(names) == 0 {
		f.Fatalf("no fixtures: %v", err)
	}
	for _, n := range names {
		f.Add(readFixture(f, filepath.Base(n)))
	}
	for _, s := range []string{
		"", "{", "}", "note: x\n{", `{"jobs": []}`, `{"jobs": [{}]}`, `{"jobs": [{"read": {"iops": -nan}}]}`,
		`{"jobs": [{"read": {"iops": 1e309, "runtime": "5"}}]}`, `{"jobs": [{"read": {}, "usr_cpu": 5, "job_runtime": 1e308}]}`,
		"{\"jobs\": [{\"read\": {\"clat_ns\": {\"percentile\": {\"99.900000\": 1}}}}]}\nfio: trailing",
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		r, err := ParseReport(data)
		if err != nil {
			return
		}
		if len(r.Jobs) == 0 {
			t.Fatal("no error and no jobs")
		}
		check := func(name string, v float64) {
			if math.IsNaN(v) || math.IsInf(v, 0) || v < 0 || math.Signbit(v) {
				t.Fatalf("%s = %v", name, v)
			}
		}
		for _, js := range r.Jobs {
			for _, s := range []Side{js.Read, js.Write} {
				if s.IOs < 0 || s.Bytes < 0 {
					t.Fatalf("negative count in %+v", s)
				}
				for i, v := range []float64{s.IOPS, s.MBps, s.MeanLatMs, s.P50Ms, s.P99Ms, s.P999Ms, s.MaxMs} {
					check("side field "+strconv.Itoa(i), v)
				}
			}
			check("UserCPU", js.UserCPU)
			check("SystemCPU", js.SystemCPU)
			check("RuntimeSeconds", js.RuntimeSeconds)
			if js.Error < 0 {
				t.Fatalf("Error = %d", js.Error)
			}
			if st := js.Steady; st != nil {
				check("Duration", st.Duration)
				check("AttainedAfter", st.AttainedAfter)
			}
		}
	})
}
