package metrics

import (
	"context"
	"encoding/json"
	"math"
	"os"
	"os/exec"
	"path/filepath"
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

	ctx := context.Background()
	mon, err := New(ctx, Config{Interval: 500 * time.Millisecond, Targets: []Target{{Path: dir, Role: "path"}}, IOLatency: "off"})
	if err != nil {
		t.Fatal(err)
	}
	defer mon.Close()
	start := time.Now()
	mon.Start(ctx, start)
	fio := runFio(t, reports, "--name=mixed", "--filename="+file, "--size=64m", "--rw=randrw", "--rwmixread=60",
		"--bs=4k", "--direct=1", "--ioengine=psync", "--numjobs=1", "--time_based", "--runtime=5")
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

	// Rates over the samples inside fio's run.
	inside := Summarize(report.Samples, first, last)
	if inside.Samples < 4 || len(inside.Disks) != 1 {
		t.Fatalf("%d samples inside fio's run", inside.Samples)
	}
	d := inside.Disks[0]
	within("read IOPS", d.ReadIOPS, job.Read.IOPS)
	within("write IOPS", d.WriteIOPS, job.Write.IOPS)
	within("read MB/s", d.ReadMBps*1e6, job.Read.BWBytes)
	within("write MB/s", d.WriteMBps*1e6, job.Write.BWBytes)
}
