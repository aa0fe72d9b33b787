package metrics

import (
	"encoding/json"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"
)

// fioSide is the part of fio's JSON report for one direction that the test compares.
type fioSide struct {
	IOBytes   int64   `json:"io_bytes"`
	TotalIOs  int64   `json:"total_ios"`
	IOPS      float64 `json:"iops"`
	BWBytes   float64 `json:"bw_bytes"`
	RuntimeMs int64   `json:"runtime"`
}

type fioReport struct {
	Jobs []struct {
		Read  fioSide `json:"read"`
		Write fioSide `json:"write"`
	} `json:"jobs"`
}

// runFio runs fio with args, its JSON report written to a file (fio may print notes
// on stdout before the JSON).
func runFio(t *testing.T, dir string, args ...string) fioReport {
	t.Helper()
	out := filepath.Join(dir, "fio.json")
	cmd := exec.Command("fio", append(args, "--output-format=json", "--output="+out)...)
	if b, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("fio %v: %v\n%s", args, err, b)
	}
	b, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	var r fioReport
	if err := json.Unmarshal(b, &r); err != nil || len(r.Jobs) != 1 {
		t.Fatalf("fio report: %v (%d jobs)", err, len(r.Jobs))
	}
	return r
}

// The sampler's figures for the disk under a directory agree with fio's own count of
// what it did there, within 10%: in total over the sampling, and as rates over the
// intervals that lie inside fio's run. fio uses direct I/O, so each of its I/Os is one
// I/O of the disk. The disk is a loop device of the test's own, which serves nothing
// else: on the machine's disk, any other writer (another test package, a backup)
// counted with fio's writes. Besides fio's, the loop device sees only ext4's journal
// commits of the file's times, a few per second, well within the 10%.
func TestSamplerAgreesWithFio(t *testing.T) {
	if testing.Short() {
		t.Skip("runs fio on the disk")
	}
	if _, err := exec.LookPath("fio"); err != nil {
		t.Fatal("fio is not installed: apt-get install fio (.ci/run installs it)")
	}
	dir, dev := ownDisk(t, 256<<20)
	file := filepath.Join(dir, "fio.data")
	// fio's reports go elsewhere: written on the measured disk, they would be I/O fio
	// does not count.
	reports := t.TempDir()
	runFio(t, reports, "--name=layout", "--filename="+file, "--size=64m", "--rw=write", "--bs=1m", "--direct=1")

	ctx := t.Context()
	mon, err := New(ctx, Config{Interval: 500 * time.Millisecond, Targets: []Target{{Path: dir, Role: "path"}}, IOLatency: "off"})
	if err != nil {
		t.Fatal(err)
	}
	defer mon.Close()
	start := time.Now()
	mon.Start(ctx, start)
	// fio also logs what it did each 50 ms, stamped with the wall clock: its own count
	// over exactly the sampler's intervals.
	iopsLog := filepath.Join(reports, "mixed")
	fio := runFio(t, reports, "--name=mixed", "--filename="+file, "--size=64m", "--rw=randrw", "--rwmixread=60",
		"--bs=4k", "--direct=1", "--ioengine=psync", "--numjobs=1", "--time_based", "--runtime=5",
		"--write_iops_log="+iopsLog, "--log_avg_msec=50", "--log_unix_epoch=1")
	report := mon.Stop(ctx, math.Inf(-1), math.Inf(1))
	job := fio.Jobs[0]
	if job.Read.TotalIOs < 1000 || job.Write.TotalIOs < 500 {
		t.Fatalf("fio did too little I/O to compare: %+v", job)
	}

	// fio's I/O runs from the first interval with reads to the last: the intervals
	// strictly between are wholly inside it, however long fio took to start on a
	// loaded machine.
	var total DiskCounters
	first, last := math.Inf(1), math.Inf(-1)
	for _, s := range report.Samples {
		for _, d := range s.Disks {
			if d.Device == dev.Name {
				total = total.plus(d.delta)
				if d.delta.ReadIOs > 0 {
					first, last = min(first, s.T), max(last, s.T-s.Seconds)
				}
			}
		}
	}
	within := func(what string, sampler, fio float64) {
		t.Helper()
		t.Logf("%s: sampler %.0f, fio %.0f", what, sampler, fio)
		if math.Abs(sampler-fio) > 0.10*fio {
			t.Errorf("%s: sampler %.0f vs fio %.0f: more than 10%% apart", what, sampler, fio)
		}
	}
	within("reads", float64(total.ReadIOs), float64(job.Read.TotalIOs))
	within("writes", float64(total.WriteIOs), float64(job.Write.TotalIOs))
	within("bytes read", float64(total.ReadSectors*SectorBytes), float64(job.Read.IOBytes))
	within("bytes written", float64(total.WriteSectors*SectorBytes), float64(job.Write.IOBytes))

	// Rates over the samples inside fio's run, against fio's own count over the same
	// span of wall-clock time. fio's average over its whole run is no reference: on a
	// loaded machine its rate at the edges, outside the span, differs by more than 10%.
	inside := Summarize(report.Samples, first, last)
	if inside.Samples < 4 || len(inside.Disks) != 1 {
		t.Fatalf("%d samples inside fio's run", inside.Samples)
	}
	from := start.Add(time.Duration(first * float64(time.Second)))
	to := start.Add(time.Duration(last * float64(time.Second)))
	reads, writes := fioIOsBetween(t, iopsLog+"_iops.1.log", 50*time.Millisecond, from, to)
	span := to.Sub(from).Seconds()
	d := inside.Disks[0]
	within("read IOPS", d.ReadIOPS, reads/span)
	within("write IOPS", d.WriteIOPS, writes/span)
	within("read MB/s", d.ReadMBps*1e6, reads*4096/span)
	within("write MB/s", d.WriteMBps*1e6, writes*4096/span)
}

// fioIOsBetween counts the reads and writes of fio's IOPS log (written with
// --log_avg_msec=period and --log_unix_epoch: one line per direction and period, "end
// of the period in Unix ms, IOPS, direction, …") whose period's middle lies between
// from and to.
func fioIOsBetween(t *testing.T, log string, period time.Duration, from, to time.Time) (reads, writes float64) {
	t.Helper()
	b, err := os.ReadFile(log)
	if err != nil {
		t.Fatalf("fio's IOPS log: %v", err)
	}
	lines := 0
	for _, line := range strings.Split(strings.TrimSpace(string(b)), "\n") {
		f := strings.Split(line, ", ")
		if len(f) < 3 {
			t.Fatalf("fio's IOPS log: line %q", line)
		}
		ms, err1 := strconv.ParseInt(f[0], 10, 64)
		iops, err2 := strconv.ParseFloat(f[1], 64)
		if err1 != nil || err2 != nil {
			t.Fatalf("fio's IOPS log: line %q", line)
		}
		middle := time.UnixMilli(ms).Add(-period / 2)
		if middle.Before(from) || !middle.Before(to) {
			continue
		}
		lines++
		switch f[2] {
		case "0":
			reads += iops * period.Seconds()
		case "1":
			writes += iops * period.Seconds()
		}
	}
	if lines == 0 {
		t.Fatalf("fio's IOPS log has no period between %v and %v", from, to)
	}
	return reads, writes
}
