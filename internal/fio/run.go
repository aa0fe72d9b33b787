package fio

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"github.com/spf13/pflag"

	"github.com/storbench/storbench/internal/bytesize"
	"github.com/storbench/storbench/internal/childproc"
	"github.com/storbench/storbench/internal/input"
	"github.com/storbench/storbench/internal/interrupt"
)

// Options say where and how long the profiles run.
type Options struct {
	// Dir is a directory on the storage under test; the test file goes into a new
	// directory inside it, removed at the end.
	Dir string
	// Device is a raw block device instead, overwritten; DestroyDevice must confirm.
	Device        string
	DestroyDevice bool
	// Size of the test file (or of the device region used).
	Size int64
	// Runtime of each point (the most a steady-state point runs).
	Runtime       time.Duration
	AllowMemoryFS bool
	// Progress, when set, is told of each point done.
	Progress func(profile string, done, of int, p *Point)
}

// AddFlags declares the flags of a run's settings, with the command line's defaults.
func (o *Options) AddFlags(fs *pflag.FlagSet) {
	bytesize.Var(fs, &o.Size, "size", DefaultSize, "test file size (KB/MB/GB/TB are powers of 1024)")
	fs.DurationVar(&o.Runtime, "runtime", DefaultRuntime, "runtime of each point (the most a steady-state point runs)")
	fs.BoolVar(&o.AllowMemoryFS, "allow-memory-fs", false, "allow a tmpfs/ramfs/overlay target (direct I/O there measures memory)")
	fs.StringVar(&o.Device, "device", "", "raw block device to test instead of a file: ALL ITS DATA IS OVERWRITTEN")
	fs.BoolVar(&o.DestroyDevice, "i-know-this-destroys-data", false, "confirm --device")
}

// Defaults and bounds of a fio run's settings. The test file's size differs by use,
// on purpose: `storbench fio` measures one storage, and a file larger than most
// controllers' and drives' caches (4GB) measures the device; a study runs every
// profile on every target directory between its TPC-C steps, and there 1GB keeps the
// steps short and fits the small scratch volumes studies are run on.
const (
	DefaultSize      = 4 << 30
	DefaultStudySize = 1 << 30
	// MinSize: a smaller file sits in any cache, fio then measures memory.
	MinSize = 16 << 20
	// DefaultRuntime is each point's longest steady-state run.
	DefaultRuntime = 30 * time.Second
	// MinRuntime: fio logs once a second, a shorter point has no steady state to find.
	MinRuntime = time.Second
)

// CheckSize checks a test file's size.
func CheckSize(bytes int64) error {
	if bytes < MinSize {
		return input.Errorf("size", "{size} is under 16MB, too small for a test file (a smaller file sits in any cache; larger than the device's cache measures the device)")
	}
	return nil
}

// CheckRuntime checks each point's runtime.
func CheckRuntime(d time.Duration) error {
	if d < MinRuntime {
		return input.Errorf("runtime", "{runtime} %v is too short (give at least %v per point: fio logs once a second)", d, MinRuntime)
	}
	return nil
}

// stopDelay is how long fio gets to stop after SIGTERM before it is killed. An
// interrupted point is discarded, so fio has nothing to finish; but a SIGTERM that
// lands while it lays out its file or forks its jobs can go unheeded, and the user's
// Ctrl-C should still end the command within seconds.
const stopDelay = 3 * time.Second

// FindFio locates the fio binary, or says how to install it.
func FindFio() (string, error) {
	path, err := exec.LookPath("fio")
	if err != nil {
		return "", fmt.Errorf("%w: fio is not installed: apt-get install fio (or dnf install fio), or put it on PATH", input.ErrInvalid)
	}
	return path, nil
}

// Run runs the profiles one after another on one target and returns their results.
// The test file is removed whatever happens; on an error or interruption the points
// finished so far are returned with it, and the error says where it stopped and that
// the test file was removed (an interruption's matches context.Canceled without
// ending in its words).
func Run(ctx context.Context, profiles []Profile, opts Options) (results []Result, err error) {
	if err := errors.Join(CheckRuntime(opts.Runtime), CheckSize(opts.Size)); err != nil {
		return nil, err
	}
	bin, err := FindFio()
	if err != nil {
		return nil, err
	}
	file, err := prepareFile(opts)
	if err != nil {
		return nil, err
	}
	defer func() {
		rerr := file.remove()
		switch {
		case rerr != nil && err == nil:
			err = rerr
		case rerr != nil:
			err = fmt.Errorf("%w; %w", err, rerr)
		case err != nil && file.workDir != "":
			err = fmt.Errorf("%w; the test file was removed", err)
		}
	}()
	logs, err := os.MkdirTemp("", "storbench-fio-logs-")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(logs)

	for _, prof := range profiles {
		res := Result{Profile: prof.Name, Description: prof.Description, Source: prof.Source, Target: file.info,
			Started: time.Now()}
		for _, d := range file.stale {
			res.Notes = append(res.Notes, "removed "+d+", left by a storbench fio that was killed")
		}
		for i, spec := range prof.Points {
			p, version, err := runPoint(ctx, bin, prof.Name, spec, file, opts, logs)
			if err != nil {
				if ctx.Err() != nil {
					err = interrupt.Error("interrupted", ctx.Err())
				}
				if len(res.Points) > 0 {
					res.Notes = append(res.Notes, fmt.Sprintf("stopped after %d of %d points: %v", len(res.Points), len(prof.Points), err))
					results = append(results, res)
				}
				return results, fmt.Errorf("fio profile %s, point %s: %w", prof.Name, spec.Name, err)
			}
			res.FioVersion = version
			res.Points = append(res.Points, *p)
			if opts.Progress != nil {
				opts.Progress(prof.Name, i+1, len(prof.Points), p)
			}
		}
		results = append(results, res)
	}
	return results, nil
}

// runPoint runs one point as its own fio process: a point done is a point kept, and
// each has its own report and logs.
func runPoint(ctx context.Context, bin, profile string, spec PointSpec, file *testFile, opts Options, logs string) (*Point, string, error) {
	// fio runs in the logs directory and names its files there relative to it: the
	// temporary directory's path, whatever it holds, never reaches fio's parser.
	prefix := spec.Name
	text := jobText(spec, job{profile: profile, file: file.path, size: opts.Size, runtime: opts.Runtime, logPrefix: prefix})
	jobFile := prefix + ".fio"
	report := filepath.Join(logs, prefix+".json")
	if err := os.WriteFile(filepath.Join(logs, jobFile), []byte(text), 0o644); err != nil {
		return nil, "", err
	}
	// The report goes to a file: fio prints notes on stdout around it.
	// Its own process group, so stopping it stops every job it forked; killed if
	// storbench dies, rather than writing on with nobody to remove the file.
	cmd := childproc.Command(ctx, stopDelay, bin, "--output-format=json+", "--output="+filepath.Base(report), jobFile)
	cmd.Dir = logs
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Run(); err != nil {
		if ctx.Err() != nil {
			return nil, "", ctx.Err()
		}
		return nil, "", fmt.Errorf("fio failed: %v: %s", err, firstLines(out.String(), 3))
	}
	data, err := os.ReadFile(report)
	if err != nil {
		return nil, "", fmt.Errorf("fio wrote no report: %v: %s", err, firstLines(out.String(), 3))
	}
	rep, err := ParseReport(data)
	if err != nil {
		return nil, "", err
	}
	if len(rep.Jobs) != 1 {
		return nil, "", fmt.Errorf("fio reported %d job groups for one point", len(rep.Jobs))
	}
	js := rep.Jobs[0]
	if js.Error != 0 {
		return nil, "", fmt.Errorf("fio's job ended with error %d (%s): %s", js.Error, syscall.Errno(js.Error), firstLines(out.String(), 3))
	}
	// A point too short for every job to log a whole second has no series; its
	// figures from the report stand.
	series, serr := PerSecond(logs, prefix)
	// Another profile may have a point of the same name: its logs must not mix.
	old, _ := filepath.Glob(filepath.Join(logs, prefix+"_*.log"))
	for _, f := range old {
		os.Remove(f)
	}
	p := &Point{Name: spec.Name, Pattern: spec.Pattern, BlockSize: spec.BlockSize, ReadPct: spec.ReadPct,
		Jobs: spec.Jobs, QueueDepth: spec.QueueDepth, Read: js.Read, Write: js.Write,
		IOPS: js.Read.IOPS + js.Write.IOPS, MBps: js.Read.MBps + js.Write.MBps,
		UserCPU: js.UserCPU, SystemCPU: js.SystemCPU, RuntimeSeconds: js.RuntimeSeconds,
		Steady: js.Steady, Series: series, JobText: text}
	if serr != nil {
		p.SeriesNote = serr.Error()
	}
	return p, rep.FioVersion, nil
}

// firstLines keeps an error message to a few lines of fio's output.
func firstLines(s string, n int) string {
	lines := strings.Split(strings.TrimSpace(s), "\n")
	return strings.Join(lines[:min(n, len(lines))], " / ")
}
