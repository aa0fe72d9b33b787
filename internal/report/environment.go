package report

import (
	"cmp"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/storbench/storbench/internal/blockdev"
	"github.com/storbench/storbench/internal/driver"
	"github.com/storbench/storbench/internal/engine"
	"github.com/storbench/storbench/internal/study"
	"github.com/storbench/storbench/internal/tpcc"
)

// environmentSection is what a reader needs to reproduce the results: the machine,
// each target's storage and database, storbench's version and the study file.
func environmentSection(srcs []*Source) *Section {
	sec := &Section{ID: "environment", Title: "Environment",
		Intro: []string{"As recorded when each target was prepared (studies) or in the run's own result (single runs)."}}
	machines := &Table{Title: "Machines", Columns: []string{"source", "host", "CPU", "cores", "memory", "kernel", "storbench", "Go", "recorded"}}
	targets := &Table{Title: "Targets", Columns: []string{"source", "target", "kind", "database", "storage", "devices", "limits"}}
	runs := &Table{Title: "Single runs", Columns: []string{"source", "engine", "database", "DSN (no password)", "warehouses", "users", "ramp s", "duration s", "mode", "inputs", "schema", "storbench"}}
	settingNames := []string{}
	type targetSettings struct {
		name     string
		settings map[string]string
	}
	var withSettings []targetSettings
	// External targets each have a host: the targets then say whose, one host's
	// together; a study of managed targets only keeps its table as it was.
	withHosts := slices.ContainsFunc(srcs, func(src *Source) bool {
		return src.Env != nil && slices.ContainsFunc(src.Env.Targets, func(t study.TargetEnv) bool { return t.Host != "" })
	})
	if withHosts {
		targets.Columns = slices.Insert(targets.Columns, 2, "host")
	}
	for _, src := range srcs {
		if e := src.Env; e != nil {
			machines.Rows = append(machines.Rows, []string{src.Label, e.Host, e.CPUModel, fmt.Sprint(e.Cores), gib(e.MemoryBytes), e.Kernel,
				e.StorbenchVersion, e.GoVersion, e.Recorded.Format(time.RFC3339)})
			// A managed target is on this machine, named as the machines table does.
			hostOf := func(t study.TargetEnv) string { return cmp.Or(t.Host, e.Host+" (this machine)") }
			var hosts []string
			for _, t := range e.Targets {
				if !slices.Contains(hosts, hostOf(t)) {
					hosts = append(hosts, hostOf(t))
				}
			}
			ts := slices.Clone(e.Targets)
			slices.SortStableFunc(ts, func(a, b study.TargetEnv) int { return slices.Index(hosts, hostOf(a)) - slices.Index(hosts, hostOf(b)) })
			for _, t := range ts {
				var storage, devices []string
				for _, p := range t.Placements {
					storage = append(storage, fmt.Sprintf("%s %s: %s%s on %s", p.Role, p.Path, p.FSType, parenthesised(p.MountOptions), p.Mount))
					devices = append(devices, p.Chain)
				}
				for _, m := range t.Models {
					// "vda: " is a disk whose model the kernel does not know.
					if name, model, _ := strings.Cut(m, ":"); strings.TrimSpace(model) != "" {
						devices = append(devices, name+" "+strings.TrimSpace(model))
					}
				}
				if t.HostMetrics != "" {
					// Its host's node_exporter was read for these disks; none named: all of them.
					sampled := cmp.Or(strings.Join(t.HostDevices, ", "), "every whole disk")
					devices = append(devices, "sampled on the host: "+sampled)
				}
				row := []string{src.Label, t.Name, t.Kind, dash(t.ServerVersion), dash(strings.Join(storage, "; ")),
					dash(strings.Join(devices, "; ")), dash(strings.Join(t.Limits, "; "))}
				if withHosts {
					row = slices.Insert(row, 2, hostOf(t))
				}
				targets.Rows = append(targets.Rows, row)
				if len(t.Settings) > 0 {
					withSettings = append(withSettings, targetSettings{qualified(srcs, src, t.Name), t.Settings})
					for k := range t.Settings {
						if !slices.Contains(settingNames, k) {
							settingNames = append(settingNames, k)
						}
					}
				}
			}
		}
		for i := range src.Steps {
			r := src.Steps[i].Run
			if src.Steps[i].Step.Kind != kindRun || r == nil {
				continue
			}
			c := r.Config
			runs.Rows = append(runs.Rows, []string{src.Label, c.Engine, dash(c.ServerVersion), c.DSN, fmt.Sprint(c.Warehouses), fmt.Sprint(c.Users),
				num(c.RampSeconds, 0), num(c.DurationSeconds, 0), c.Mode, inputsOf(c), schemaOf(c), c.Version})
		}
	}
	io, blocks := ioLimitsTable(srcs), blockDevicesTable(srcs)
	if io != nil && slices.ContainsFunc(io.Rows, func(row []string) bool { return strings.Contains(row[len(row)-1], "partial emulation") }) {
		sec.Intro = append(sec.Intro, ioLimitsV1Note)
	}
	for _, t := range []*Table{machines, targets, blocks, io, runs} {
		if t != nil && len(t.Rows) > 0 {
			sec.Blocks = append(sec.Blocks, Block{Table: t})
		}
	}
	if len(withSettings) > 0 {
		slices.Sort(settingNames)
		settings := &Table{Title: "Database settings", Columns: []string{"setting"}}
		for _, t := range withSettings {
			settings.Columns = append(settings.Columns, t.name)
		}
		for _, k := range settingNames {
			row := []string{k}
			for _, t := range withSettings {
				row = append(row, dash(t.settings[k]))
			}
			settings.Rows = append(settings.Rows, row)
		}
		sec.Blocks = append(sec.Blocks, Block{Table: settings})
	}
	for _, src := range srcs {
		if len(src.StudyFile) > 0 {
			sec.Blocks = append(sec.Blocks, Block{Pre: fmt.Sprintf("# study file of %s (%s)\n%s", src.Label, src.Path, src.StudyFile)})
		}
	}
	return sec
}

// blockDevicesTable lists every block device under each target's directories (and
// each single run's), from the filesystem's down to the disks, as a storage engineer
// asks about them; nil when no result recorded them (results before the stack was).
func blockDevicesTable(srcs []*Source) *Table {
	t := &Table{Title: "Block devices", Columns: []string{"source", "target", "holds", "device", "kind", "model", "rotational", "scheduler", "nr_requests",
		"block size logical/physical", "write cache", "discard", "made of"},
		Notes: []string{"from /sys/class/block of the host holding the directories (over SSH for an external target's host), when the target was prepared: " +
			"the device's own entry, from the filesystem's device down to the disks; a partition's queue is its disk's; made of: a partition's disk, a device-mapper's or md array's members, a loop device's backing file"}}
	add := func(src *Source, target string, ps []blockdev.Placement) {
		type row struct {
			holds []string
			d     blockdev.DeviceInfo
		}
		var rows []*row
		for _, p := range ps {
			for _, d := range p.Stack {
				k := slices.IndexFunc(rows, func(r *row) bool { return r.d.Name == d.Name })
				if k < 0 {
					rows = append(rows, &row{d: d})
					k = len(rows) - 1
				}
				if !slices.Contains(rows[k].holds, p.Role) {
					rows[k].holds = append(rows[k].holds, p.Role)
				}
			}
		}
		for _, r := range rows {
			d := r.d
			t.Rows = append(t.Rows, []string{src.Label, target, strings.Join(r.holds, ", "), d.Name, d.Kind, dash(strings.TrimSpace(d.Vendor + " " + d.Model)),
				yesNo(d.Rotational), dash(d.Scheduler), count(d.NrRequests), blockSizes(d), dash(d.WriteCache), yesNo(d.Discard), dash(madeOf(d))})
		}
	}
	for _, src := range srcs {
		if src.Env != nil {
			for _, te := range src.Env.Targets {
				add(src, te.Name, te.Placements)
			}
		}
		for i := range src.Steps {
			if r := src.Steps[i].Run; src.Steps[i].Step.Kind == kindRun && r != nil && r.System != nil {
				add(src, "run", r.System.Placements)
			}
		}
	}
	if len(t.Rows) == 0 {
		return nil
	}
	return t
}

// madeOf is what a device is built on: "partition of sda", "vg-data over sda2, sdb1",
// "raid1 over sdc1, sdd1", "backing file /var/img/disk.img".
func madeOf(d blockdev.DeviceInfo) string {
	over := strings.Join(d.Slaves, ", ")
	switch d.Kind {
	case "partition":
		return "partition of " + d.Parent
	case "dm":
		return d.DMName + " over " + over
	case "md":
		return d.MDLevel + " over " + over
	case "loop":
		if d.BackingFile == "" {
			return "no backing file"
		}
		return "backing file " + d.BackingFile
	}
	return ""
}

func blockSizes(d blockdev.DeviceInfo) string {
	if d.LogicalBlock == 0 && d.PhysicalBlock == 0 {
		return "-"
	}
	return fmt.Sprintf("%d/%d", d.LogicalBlock, d.PhysicalBlock)
}

func yesNo(b *bool) string {
	switch {
	case b == nil:
		return "-"
	case *b:
		return "yes"
	}
	return "no"
}

func count(n int) string {
	if n == 0 {
		return "-"
	}
	return strconv.Itoa(n)
}

// parenthesised is " (s)", or nothing for an empty s.
func parenthesised(s string) string {
	if s == "" {
		return ""
	}
	return " (" + s + ")"
}

// ioLimitsTable lists the I/O limits the steps ran under, one row per series and
// throttle, with the disk and what the cgroup version throttles; nil when none did.
func ioLimitsTable(srcs []*Source) *Table {
	t := &Table{Title: "I/O limits", Columns: []string{"source", "steps", "limit", "disk", "throttled by"}}
	seen := map[string]bool{}
	for _, src := range srcs {
		for i := range src.Steps {
			r := &src.Steps[i]
			th := r.IOThrottle
			if th == nil {
				continue
			}
			row := []string{src.Label, repeatPart.ReplaceAllString(r.Step.ID, ""), th.Limit.String(), th.Device, th.Throttles()}
			if key := strings.Join(row, "\x00"); !seen[key] {
				seen[key] = true
				t.Rows = append(t.Rows, row)
			}
		}
	}
	if len(t.Rows) == 0 {
		return nil
	}
	return t
}

// inputsOf names a run's input rules; a result from before they had names ran the
// spec's.
func inputsOf(c driver.RunConfig) string { return cmp.Or(c.Inputs, tpcc.SpecInputs) }

// schemaOf names the schema a run ran on and, when not storbench, the tool that built
// it; "-" when neither was recorded.
func schemaOf(c driver.RunConfig) string {
	s := cmp.Or(c.Schema, "-")
	if c.BuiltBy != "" && c.BuiltBy != engine.BuiltByStorbench {
		s += " (built by " + c.BuiltBy + ")"
	}
	return s
}

func dash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

func gib(b uint64) string {
	if b == 0 {
		return "-"
	}
	return fmt.Sprintf("%.1f GiB", float64(b)/(1<<30))
}
