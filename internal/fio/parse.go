package fio

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
)

// What fio 3.33 writes, as checked by running it (testdata/gen.sh makes the
// fixtures the tests read) and by reading its stat.c:
//
//   - With group_reporting, fio merges the jobs of a group by adding their
//     usr_time, sys_time and total_run_time (job_runtime in the JSON), then
//     prints usr_cpu = usr_time*100/total_run_time. So usr_cpu and sys_cpu are
//     a runtime-weighted average over the jobs, not a sum: numjobs=4 for 2 s
//     reported usr_cpu 1.5, 1.7, 2.15 and 3.45 without group_reporting, and
//     2.05 with it (another run), job_runtime 8000 (4 x 2000 ms).
//   - The per-direction "runtime" (ms) is the longest runtime of the group's
//     jobs in that direction; fio computes iops and bw_bytes against it. It
//     excludes ramp_time, as job_runtime does.
//   - "elapsed" is whole seconds since the job started, including file layout.
//   - steadystate: "ss" is the criterion as set ("iops_slope:0.300000%"),
//     "criterion" is the value measured at the end (not the threshold),
//     "duration" is ss_dur in seconds, "attained" is 0 or 1. fio reports no
//     time of attainment, but it checks once a second and ends the job as
//     soon as the criterion is met.
//   - A direction without I/O has runtime 0 and a clat_ns without
//     "percentile".
//   - unified_rw_reporting=mixed replaces "read" and "write" with "mixed".
//   - fio prints non-finite doubles bare, as glibc's printf spells them
//     ("slope" : -nan), which is not JSON. It does so for a steady-state job
//     whose ss_dur is under 2 s: one interval, no slope, and yet "attained" : 1
//     (ss_dur is also truncated to whole seconds: 1500ms reports duration 1).

// Report is one fio json+ report.
type Report struct {
	FioVersion string     // "fio-3.33"
	Jobs       []JobStats // in the report's order; one per group with group_reporting
}

// JobStats is one entry of a report's "jobs": a job, or a whole group of jobs
// when group_reporting is on.
type JobStats struct {
	Name        string
	Read, Write Side
	// UserCPU and SystemCPU are % of one CPU summed over the group's jobs:
	// fio's usr_cpu (an average over the jobs, see above) times job_runtime
	// (the sum of the jobs' runtimes) divided by the wall time. That is the
	// CPU time fio used per second of the point; it equals the sum of the
	// per-job figures when the jobs run for the whole point, as time_based
	// jobs do. Without a wall time (no I/O at all) fio's figure is kept, which
	// is exact for a single job.
	UserCPU, SystemCPU float64
	// RuntimeSeconds is the wall time of the point: the longest per-direction
	// runtime, which is the denominator of fio's own iops and bandwidth.
	// job_runtime is not: with group_reporting it is the sum over the jobs.
	RuntimeSeconds float64
	Steady         *Steady // nil unless the job ran with steadystate options
	// Error is fio's errno for the job; the job is returned anyway so the
	// caller can decide what a partial result is worth.
	Error int
}

// ParseReport reads fio's --output-format=json+ (or json) report. Text fio
// prints on the same stream before the report (notes, warnings) is skipped up
// to the first line that starts with '{'; anything after the report's JSON
// value is ignored.
func ParseReport(data []byte) (*Report, error) {
	start := jsonStart(data)
	if start < 0 {
		return nil, fmt.Errorf("fio report: expected a JSON object on a line starting with '{', input begins %s", head(data))
	}
	var raw rawReport
	dec := json.NewDecoder(bytes.NewReader(quoteNonFinite(data[start:])))
	if err := dec.Decode(&raw); err != nil {
		return nil, fmt.Errorf("fio report: expected fio's JSON report: %v; input begins %s", err, head(data))
	}
	if len(raw.Jobs) == 0 {
		return nil, fmt.Errorf("fio report: expected at least one entry in \"jobs\", found none; input begins %s", head(data))
	}
	rep := &Report{FioVersion: raw.FioVersion, Jobs: make([]JobStats, 0, len(raw.Jobs))}
	for i, rj := range raw.Jobs {
		js, err := rj.convert()
		if err != nil {
			return nil, fmt.Errorf("fio report: jobs[%d] (%q): %w", i, rj.JobName, err)
		}
		rep.Jobs = append(rep.Jobs, js)
	}
	return rep, nil
}

// jsonStart is the offset of the first line starting with '{', or -1.
func jsonStart(data []byte) int {
	for i := 0; i < len(data); {
		if data[i] == '{' {
			return i
		}
		nl := bytes.IndexByte(data[i:], '\n')
		if nl < 0 {
			return -1
		}
		i += nl + 1
	}
	return -1
}

// quoteNonFinite turns the bare nan/inf tokens fio prints for non-finite
// doubles into JSON strings, so that a report decodes and a field read here
// that holds one fails as not finite, by name, while fields nobody reads
// (usually steadystate's slope) do not sink the report.
func quoteNonFinite(b []byte) []byte {
	var out []byte // stays nil, and b is returned as is, when nothing needs quoting
	last := 0
	inString, escaped := false, false
	for i := 0; i < len(b); i++ {
		c := b[i]
		if inString {
			switch {
			case escaped:
				escaped = false
			case c == '\\':
				escaped = true
			case c == '"':
				inString = false
			}
			continue
		}
		if c == '"' {
			inString = true
			continue
		}
		if c != '-' && c != '+' && !isLetter(c) {
			continue
		}
		j := i
		if !isLetter(c) {
			j++
		}
		k := j
		for k < len(b) && isLetter(b[k]) {
			k++
		}
		switch strings.ToLower(string(b[j:k])) {
		case "nan", "inf", "infinity":
			out = append(out, b[last:i]...)
			out = append(out, '"')
			out = append(out, b[i:k]...)
			out = append(out, '"')
			last = k
		}
		i = max(i, k-1)
	}
	if out == nil {
		return b
	}
	return append(out, b[last:]...)
}

func isLetter(c byte) bool { return 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' }

func head(data []byte) string {
	const n = 80
	if len(data) > n {
		return strconv.Quote(string(data[:n])) + "…"
	}
	return strconv.Quote(string(data))
}

type rawReport struct {
	FioVersion string   `json:"fio version"`
	Jobs       []rawJob `json:"jobs"`
}

type rawJob struct {
	JobName    string     `json:"jobname"`
	Error      number     `json:"error"`
	Read       *rawSide   `json:"read"`
	Write      *rawSide   `json:"write"`
	Trim       *rawSide   `json:"trim"`
	JobRuntime number     `json:"job_runtime"`
	UsrCPU     number     `json:"usr_cpu"`
	SysCPU     number     `json:"sys_cpu"`
	Steady     *rawSteady `json:"steadystate"`
}

type rawSide struct {
	IOBytes  number `json:"io_bytes"`
	BWBytes  number `json:"bw_bytes"`
	IOPS     number `json:"iops"`
	Runtime  number `json:"runtime"` // ms
	TotalIOs number `json:"total_ios"`
	Clat     struct {
		N          number            `json:"N"`
		Mean       number            `json:"mean"`
		Max        number            `json:"max"`
		Percentile map[string]number `json:"percentile"`
	} `json:"clat_ns"`
}

type rawSteady struct {
	SS           string `json:"ss"`
	Duration     number `json:"duration"`
	Attained     number `json:"attained"`
	Slope        number `json:"slope"`
	MaxDeviation number `json:"max_deviation"`
	Data         struct {
		IOPS []number `json:"iops"`
	} `json:"data"`
}

// judged says whether fio had what it needs for a steady-state verdict. With
// fewer than two intervals there is no slope and no deviation to speak of,
// yet fio 3.33 still prints "attained" : 1.
func (rs *rawSteady) judged() error {
	if n := len(rs.Data.IOPS); n < 2 {
		return fmt.Errorf("steadystate: fio judged %s over %d interval(s) (ss_dur under 2 s?); its verdict means nothing", rs.SS, n)
	}
	for _, f := range []struct {
		name string
		n    number
	}{{"slope", rs.Slope}, {"max_deviation", rs.MaxDeviation}} {
		if f.n.lit == "" {
			continue
		}
		if v, err := strconv.ParseFloat(f.n.lit, 64); err != nil || math.IsNaN(v) || math.IsInf(v, 0) {
			return fmt.Errorf("steadystate: fio's %s is %s, so its verdict on %s means nothing", f.name, f.n.lit, rs.SS)
		}
	}
	return nil
}

// number takes a numeric field as fio prints it: an integer or a float
// depending on the field and the fio version (and JSON null or a quoted number,
// to not depend on that either), keeping the literal so that byte counts are
// read as integers without a trip through float64. A nan or inf (quoted by
// quoteNonFinite) is kept too, to be refused by name where it is used.
type number struct{ lit string }

func (n *number) UnmarshalJSON(b []byte) error {
	s := string(b)
	if s == "null" {
		*n = number{}
		return nil
	}
	if strings.HasPrefix(s, `"`) {
		if err := json.Unmarshal(b, &s); err != nil {
			return err
		}
		s = strings.TrimSpace(s)
	}
	if strings.EqualFold(strings.TrimLeft(s, "+-"), "nan") {
		s = "NaN" // glibc's "-nan", which strconv does not take
	}
	if _, err := strconv.ParseFloat(s, 64); err != nil && !errors.Is(err, strconv.ErrRange) {
		return fmt.Errorf("not a number: %s", b)
	}
	n.lit = s
	return nil
}

// float is the value, which must be finite and non-negative: everything read
// here is a count, a rate, a time or a percentage.
func (n number) float(field string) (float64, error) {
	if n.lit == "" {
		return 0, nil
	}
	v, err := strconv.ParseFloat(n.lit, 64)
	underflow := errors.Is(err, strconv.ErrRange) && v == 0
	if (err != nil && !underflow) || math.IsNaN(v) || math.IsInf(v, 0) {
		return 0, fmt.Errorf("%s: %q is not a finite number", field, n.lit)
	}
	if v < 0 {
		return 0, fmt.Errorf("%s: %s is negative", field, n.lit)
	}
	if v == 0 {
		v = 0 // not -0, which would print as a negative figure
	}
	return v, nil
}

func (n number) int(field string) (int64, error) {
	if n.lit == "" {
		return 0, nil
	}
	if v, err := strconv.ParseInt(n.lit, 10, 64); err == nil {
		if v < 0 {
			return 0, fmt.Errorf("%s: %s is negative", field, n.lit)
		}
		return v, nil
	}
	v, err := n.float(field)
	if err != nil {
		return 0, err
	}
	// 2^63 itself is not representable; float64(MaxInt64) rounds up to it.
	if v != math.Trunc(v) || v >= math.MaxInt64 {
		return 0, fmt.Errorf("%s: %s is not an integer count", field, n.lit)
	}
	return int64(v), nil
}

// conv collects the first conversion error so the field mapping reads as a list.
type conv struct{ err error }

func (c *conv) f(n number, field string) float64 {
	v, err := n.float(field)
	if err != nil && c.err == nil {
		c.err = err
	}
	return v
}

func (c *conv) i(n number, field string) int64 {
	v, err := n.int(field)
	if err != nil && c.err == nil {
		c.err = err
	}
	return v
}

func (rj rawJob) convert() (JobStats, error) {
	if rj.Read == nil && rj.Write == nil {
		return JobStats{}, errors.New(`no "read" or "write" section (unified_rw_reporting=mixed is not supported)`)
	}
	c := &conv{}
	js := JobStats{Name: rj.JobName}
	errno := c.i(rj.Error, "error")
	if errno > math.MaxInt32 {
		return JobStats{}, fmt.Errorf("error: %d is not an errno", errno)
	}
	js.Error = int(errno)

	var wallMs float64
	for _, s := range []struct {
		name string
		raw  *rawSide
		dst  *Side
	}{{"read", rj.Read, &js.Read}, {"write", rj.Write, &js.Write}, {"trim", rj.Trim, nil}} {
		if s.raw == nil {
			continue
		}
		wallMs = math.Max(wallMs, c.f(s.raw.Runtime, s.name+".runtime"))
		if s.dst == nil {
			continue
		}
		side, err := s.raw.convert(s.name)
		if err != nil {
			return JobStats{}, err
		}
		*s.dst = side
	}
	js.RuntimeSeconds = wallMs / 1000

	usr := c.f(rj.UsrCPU, "usr_cpu")
	sys := c.f(rj.SysCPU, "sys_cpu")
	jobMs := c.f(rj.JobRuntime, "job_runtime")
	js.UserCPU, js.SystemCPU = usr, sys
	if wallMs > 0 && jobMs > 0 {
		js.UserCPU = usr * jobMs / wallMs
		js.SystemCPU = sys * jobMs / wallMs
	}

	if rj.Steady != nil {
		if err := rj.Steady.judged(); err != nil {
			return JobStats{}, err
		}
		st := &Steady{
			Criterion: tidyCriterion(rj.Steady.SS),
			Duration:  c.f(rj.Steady.Duration, "steadystate.duration"),
			Attained:  c.f(rj.Steady.Attained, "steadystate.attained") != 0,
		}
		if st.Attained {
			// fio stops the job when the criterion is met (checked once a
			// second), so the job's wall time is when it was attained.
			st.AttainedAfter = js.RuntimeSeconds
		}
		js.Steady = st
	}
	if c.err != nil {
		return JobStats{}, c.err
	}
	// Products of finite inputs can still overflow; a report must never carry
	// an infinity into a result.
	if math.IsInf(js.UserCPU, 0) || math.IsInf(js.SystemCPU, 0) {
		return JobStats{}, fmt.Errorf("usr_cpu %v, sys_cpu %v: overflow scaling by job_runtime/runtime", usr, sys)
	}
	return js, nil
}

var wantPercentiles = [...]float64{50, 99, 99.9}

func (rs *rawSide) convert(dir string) (Side, error) {
	c := &conv{}
	s := Side{
		IOs:       c.i(rs.TotalIOs, dir+".total_ios"),
		Bytes:     c.i(rs.IOBytes, dir+".io_bytes"),
		IOPS:      c.f(rs.IOPS, dir+".iops"),
		MBps:      c.f(rs.BWBytes, dir+".bw_bytes") / 1e6,
		MeanLatMs: c.f(rs.Clat.Mean, dir+".clat_ns.mean") / 1e6,
		MaxMs:     c.f(rs.Clat.Max, dir+".clat_ns.max") / 1e6,
	}
	samples := c.f(rs.Clat.N, dir+".clat_ns.N")
	var got [len(wantPercentiles)]bool
	var val [len(wantPercentiles)]float64
	keys := make([]string, 0, len(rs.Clat.Percentile))
	for k := range rs.Clat.Percentile {
		keys = append(keys, k)
	}
	// Sorted so that, were two keys to name the same percentile, the pick
	// does not depend on map order.
	sort.Strings(keys)
	for _, k := range keys {
		v := rs.Clat.Percentile[k]
		p, err := strconv.ParseFloat(strings.TrimSpace(k), 64)
		if err != nil {
			continue // a key fio did not write; not one of ours either way
		}
		for i, w := range wantPercentiles {
			if !got[i] && math.Abs(p-w) < 1e-6 {
				got[i] = true
				val[i] = c.f(v, dir+".clat_ns.percentile."+k) / 1e6
			}
		}
	}
	if c.err != nil {
		return Side{}, c.err
	}
	for i, ok := range got {
		// Without I/O fio omits the percentiles and zero is the truth; with I/O
		// a missing one (clat_percentiles=0, a custom percentile_list) would
		// read as a 0 ms latency, so refuse.
		if !ok && (s.IOs > 0 || samples > 0) {
			return Side{}, fmt.Errorf("%s: %d I/Os but clat_ns has no %g percentile", dir, s.IOs, wantPercentiles[i])
		}
	}
	s.P50Ms, s.P99Ms, s.P999Ms = val[0], val[1], val[2]
	return s, nil
}

// tidyCriterion turns fio's "iops_slope:0.300000%" back into the
// "iops_slope:0.3%" the job asked for; anything else is kept as fio wrote it.
func tidyCriterion(ss string) string {
	i := strings.LastIndexByte(ss, ':')
	if i < 0 {
		return ss
	}
	num, pct := strings.CutSuffix(ss[i+1:], "%")
	v, err := strconv.ParseFloat(num, 64)
	if err != nil {
		return ss
	}
	// fio printed a float32 with %f; 6 decimals is all it carried.
	out := ss[:i+1] + strconv.FormatFloat(math.Round(v*1e6)/1e6, 'f', -1, 64)
	if pct {
		out += "%"
	}
	return out
}

// Per-second logs, as fio 3.33 writes them with log_avg_msec=1000 (checked
// against the same run's JSON report):
//
//   - PREFIX_iops.N.log: I/Os per second over the window (a rate, not a count).
//   - PREFIX_bw.N.log: KiB/s (1024 bytes) over the window.
//   - PREFIX_clat.N.log: mean completion latency over the window, in ns.
//
// Each line is "msec, value, direction, blocksize, offset[, priority]", msec
// being the end of the window. The iops and bw entries come from fio's helper
// thread, and the last window of a job is often missing (a 2 s run logs only
// second 1; some jobs miss a second that others have). The clat entries are
// flushed on completions and again when the job ends, so the last second
// often has a second clat entry covering the few milliseconds after it.

// PerSecond combines one point's logs of all its jobs into seconds: IOPS and
// MB/s summed over jobs, latency the IOPS-weighted mean over jobs.
//
// A second is reported only when every job has its iops and bw entries for it
// (and a clat entry wherever it did I/O): a sum over some of the jobs would
// understate the point, so such seconds (usually the last) are left out and
// show as a gap or a shorter series. Seconds are numbered from the window end,
// round(msec/1000), since fio's timestamps drift by a few ms. A second clat
// entry for the same job, second and direction is the end-of-job flush of a
// few ms and is ignored: entries are means over windows, so adding them would
// be wrong and fio does not log the sample counts needed to merge them. Trim
// entries are ignored.
func PerSecond(dir, prefix string) ([]Second, error) {
	kinds := [...]string{"iops", "bw", "clat"}
	var logs [len(kinds)][]jobLog
	for k, kind := range kinds {
		var err error
		if logs[k], err = readKind(dir, prefix, kind); err != nil {
			return nil, err
		}
		if len(logs[k]) != len(logs[0]) {
			return nil, fmt.Errorf("fio logs: %d %s_iops logs but %d %s_%s logs in %s", len(logs[0]), prefix, len(logs[k]), prefix, kind, dir)
		}
	}
	iops, bw, clat := logs[0], logs[1], logs[2]

	dirs := map[int]bool{}
	secs := map[int]bool{}
	entries := 0
	for _, l := range append(append([]jobLog{}, iops...), bw...) {
		for key := range l.vals {
			dirs[key.dir] = true
			secs[key.sec] = true
		}
		entries += len(l.vals)
	}

	var out []Second
	for t := range secs {
		if sec, ok := combine(t, dirs, iops, bw, clat); ok {
			out = append(out, sec)
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].T < out[j].T })
	if entries > 0 && len(out) == 0 {
		return nil, fmt.Errorf("fio logs: no second has entries from all %d jobs in %s/%s_*.log (were they written with log_avg_msec=1000?)", len(iops), dir, prefix)
	}
	return out, nil
}

func combine(t int, dirs map[int]bool, iops, bw, clat []jobLog) (Second, bool) {
	sec := Second{T: t}
	for d := range dirs {
		var sumIOPS, sumKiB, latWeighted float64
		for j := range iops {
			key := logKey{t, d}
			n, ok1 := iops[j].vals[key]
			kib, ok2 := bw[j].vals[key]
			if !ok1 || !ok2 || iops[j].ambiguous[key] || bw[j].ambiguous[key] {
				return Second{}, false
			}
			sumIOPS += n
			sumKiB += kib
			if n > 0 {
				lat, ok := clat[j].vals[key]
				if !ok {
					return Second{}, false
				}
				latWeighted += lat * n
			}
		}
		mbps := sumKiB * 1024 / 1e6
		var latMs float64
		if sumIOPS > 0 {
			latMs = latWeighted / sumIOPS / 1e6
		}
		switch d {
		case 0:
			sec.ReadIOPS, sec.ReadMBps, sec.ReadLatMs = sumIOPS, mbps, latMs
		case 1:
			sec.WriteIOPS, sec.WriteMBps, sec.WriteLatMs = sumIOPS, mbps, latMs
		}
	}
	return sec, true
}

type logKey struct{ sec, dir int }

// jobLog is one job's log of one kind: the first value per second and
// direction, and which keys had more than one entry.
type jobLog struct {
	vals      map[logKey]float64
	ambiguous map[logKey]bool
}

// readKind reads PREFIX_KIND.1.log … PREFIX_KIND.N.log in job order. It lists
// the directory rather than globbing so that no character of dir or prefix
// is taken as a pattern.
func readKind(dir, prefix, kind string) ([]jobLog, error) {
	base := prefix + "_" + kind + "."
	ents, err := os.ReadDir(dir)
	if err != nil {
		return nil, fmt.Errorf("fio logs: %w", err)
	}
	byJob := map[int]string{}
	for _, e := range ents {
		name := e.Name()
		num, ok := strings.CutPrefix(name, base)
		if !ok || !strings.HasSuffix(num, ".log") {
			continue
		}
		num = strings.TrimSuffix(num, ".log")
		n, err := strconv.Atoi(num)
		if err != nil || n < 1 {
			return nil, fmt.Errorf("fio logs: %s: %q is not a job number", filepath.Join(dir, name), num)
		}
		byJob[n] = filepath.Join(dir, name)
	}
	if len(byJob) == 0 {
		return nil, fmt.Errorf("fio logs: no %s log (%s1.log …) in %s", kind, base, dir)
	}
	out := make([]jobLog, len(byJob))
	for n := 1; n <= len(byJob); n++ {
		p, ok := byJob[n]
		if !ok {
			return nil, fmt.Errorf("fio logs: %s%d.log is missing among %d %s logs in %s", base, n, len(byJob), kind, dir)
		}
		// Only clat gets a second entry for a second by design (the flush at
		// the end of the job); for iops and bw a repeat means the windows are
		// not the 1 s ones assumed here, so that second is not trusted.
		if out[n-1], err = readLog(p, kind != "clat"); err != nil {
			return nil, err
		}
	}
	return out, nil
}

func readLog(path string, repeatsAmbiguous bool) (jobLog, error) {
	f, err := os.Open(path)
	if err != nil {
		return jobLog{}, fmt.Errorf("fio logs: %w", err)
	}
	defer f.Close()
	l := jobLog{vals: map[logKey]float64{}, ambiguous: map[logKey]bool{}}
	sc := bufio.NewScanner(f)
	for line := 1; sc.Scan(); line++ {
		if strings.TrimSpace(sc.Text()) == "" {
			continue
		}
		msec, v, d, err := parseLogLine(sc.Text())
		if err != nil {
			return jobLog{}, fmt.Errorf("%s:%d: %w", path, line, err)
		}
		if d == 2 {
			continue
		}
		key := logKey{secondOf(msec), d}
		if _, seen := l.vals[key]; seen {
			if repeatsAmbiguous {
				l.ambiguous[key] = true
			}
			continue
		}
		l.vals[key] = v
	}
	if err := sc.Err(); err != nil {
		return jobLog{}, fmt.Errorf("%s: %w", path, err)
	}
	return l, nil
}

// secondOf numbers the window ending at msec: (t-1, t] seconds, t >= 1.
func secondOf(msec int64) int {
	t := msec / 1000
	if msec%1000 >= 500 {
		t++
	}
	return int(max(t, 1))
}

// maxLogMsec keeps seconds within int on every platform: 68 years.
const maxLogMsec = math.MaxInt32 * 1000

// parseLogLine reads "msec, value, direction, blocksize, offset[, priority]";
// only the first three fields are used, and fio versions differ in how many
// follow.
func parseLogLine(line string) (msec int64, value float64, dir int, err error) {
	fields := strings.Split(strings.TrimSpace(line), ",")
	if len(fields) < 3 {
		return 0, 0, 0, fmt.Errorf("want \"msec, value, direction, …\", got %q", line)
	}
	msec, err = strconv.ParseInt(strings.TrimSpace(fields[0]), 10, 64)
	if err != nil || msec < 0 || msec > maxLogMsec {
		return 0, 0, 0, fmt.Errorf("time %q is not a millisecond count", fields[0])
	}
	value, err = strconv.ParseFloat(strings.TrimSpace(fields[1]), 64)
	if err != nil || math.IsNaN(value) || math.IsInf(value, 0) || value < 0 {
		return 0, 0, 0, fmt.Errorf("value %q is not a finite non-negative number", fields[1])
	}
	dir, err = strconv.Atoi(strings.TrimSpace(fields[2]))
	if err != nil || dir < 0 || dir > 2 {
		return 0, 0, 0, fmt.Errorf("direction %q is not 0 (read), 1 (write) or 2 (trim)", fields[2])
	}
	return msec, value, dir, nil
}
