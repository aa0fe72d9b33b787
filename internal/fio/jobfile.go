package fio

import (
	"fmt"
	"strings"
	"time"
	"unicode"
)

// job is what a point's job file needs besides the point itself.
type job struct {
	profile   string
	file      string // the test file, or the raw device; checkFileName accepts it
	size      int64
	runtime   time.Duration
	logPrefix string // per-second logs: PREFIX_iops.N.log …
}

// jobText writes one point as a fio job file. Every point runs direct I/O through
// libaio, time-based, with group reporting over its jobs and per-second logs.
func jobText(p PointSpec, j job) string {
	var b strings.Builder
	line := func(format string, args ...any) { fmt.Fprintf(&b, format+"\n", args...) }
	line("; storbench fio profile %s, point %s", j.profile, p.Name)
	line("[global]")
	line("filename=%s", fioFileName(j.file))
	line("size=%d", j.size)
	line("ioengine=libaio")
	line("direct=1")
	line("time_based=1")
	line("runtime=%dms", j.runtime.Milliseconds())
	line("group_reporting=1")
	// Random offsets over the whole file, different every run, with a generator
	// that covers files beyond fio's default generator's 2^32 blocks.
	line("randrepeat=0")
	line("norandommap=1")
	line("random_generator=tausworthe64")
	line("log_avg_msec=1000")
	line("write_iops_log=%s", j.logPrefix)
	line("write_bw_log=%s", j.logPrefix)
	line("write_lat_log=%s", j.logPrefix)
	line("")
	line("[%s]", p.Name)
	line("rw=%s", p.Pattern)
	if p.Pattern == "randrw" || p.Pattern == "rw" {
		line("rwmixread=%d", p.ReadPct)
	}
	line("bs=%d", p.BlockSize)
	line("iodepth=%d", p.QueueDepth)
	line("numjobs=%d", p.Jobs)
	if p.DSync {
		line("sync=dsync")
	}
	if p.RandomBuffers {
		line("refill_buffers=1")
	}
	if p.Steady != "" {
		// The window fio judges the slope over, and a ramp it ignores, within the
		// runtime, which bounds the point when steady state never comes.
		line("steadystate=%s", p.Steady)
		// fio samples once a second: a slope needs at least two samples.
		line("ss_dur=%dms", min(max(j.runtime/2, 2*time.Second), time.Minute).Milliseconds())
		line("ss_ramp=%dms", min(j.runtime/4, 10*time.Second).Milliseconds())
	}
	return b.String()
}

// fioFileName escapes the colons of a path for fio's filename=, which otherwise
// splits it into several files there (fio's own escape, "\:").
func fioFileName(path string) string {
	return strings.ReplaceAll(path, ":", `\:`)
}

// checkFileName refuses a path fio's job file cannot hold as written: fio cuts a
// value at ";" or "#" (a comment), expands "$" (environment variables, $pagesize …),
// strips trailing blanks and ends the value at a line break; none has an escape, and
// each would aim fio's writes at another file.
func checkFileName(path string) error {
	if i := strings.IndexAny(path, ";#$\n\r"); i >= 0 {
		return fmt.Errorf("contains %q, which fio's job file cannot hold in a file name: choose a path without ; # $ or line breaks", path[i])
	}
	if strings.TrimRightFunc(path, unicode.IsSpace) != path {
		return fmt.Errorf("ends in a blank, which fio's job file drops from a file name: choose a path without it")
	}
	return nil
}
