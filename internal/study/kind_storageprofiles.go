package study

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/storbench/storbench/internal/blockdev"
	"github.com/storbench/storbench/internal/bytesize"
	"github.com/storbench/storbench/internal/fio"
)

// StorageProfiles is an experiment kind: fio profiles on each managed target's data
// (and WAL) directory.
const StorageProfiles = "storage-profiles"

type storageProfiles struct{}

func (storageProfiles) name() string    { return StorageProfiles }
func (storageProfiles) knobs() []string { return []string{"profiles", "size", "runtime"} }

func (storageProfiles) runsOn(t *Target) (string, string) {
	if !t.manages() {
		return "it is external, so it has no path here to test", ""
	}
	return "", ""
}

func (storageProfiles) needs() string { return "managed" }

func (storageProfiles) check(c *checker, _ *Study, i int, e *Experiment) {
	p := func(key string) string { return fmt.Sprintf("experiments[%d].%s", i, key) }
	if len(e.Profiles) == 0 {
		c.errf(p("profiles"), "%s has no profiles", "add profiles: e.g. [sql-data-8k]; storbench fio --list names them", label(e))
	}
	distinct(c, p("profiles"), "profile", e.Profiles, func(name string) string { return name }, func(ip, name string) {
		if _, err := fio.Lookup([]string{name}, false); err != nil {
			c.errf(ip, "fio profile %q is unknown", "use one of %s", name, strings.Join(profileNames(), ", "))
		}
	})
	if !c.doc.Has(p("size")) {
		e.Size = Size{DefaultFioSize}
	} else if err := fio.CheckSize(e.Size.Bytes); err != nil {
		c.refuse(p("size"), err)
	}
	if !c.doc.Has(p("runtime")) {
		e.Runtime = Duration{Duration: DefaultFioRuntime}
	} else if err := fio.CheckRuntime(e.Runtime.Duration); err != nil {
		c.refuse(p("runtime"), err)
	}
}

func (storageProfiles) plan(steps []Step, s *Study, e *Experiment) []Step {
	return eachTarget(steps, s, e, func(steps []Step, t *Target) []Step {
		base, id := stepBase(e, t)
		roles := []string{"data"}
		if t.WALPath != "" {
			roles = append(roles, "wal")
		}
		for _, name := range e.Profiles {
			for _, role := range roles {
				b := base
				b.ID = id + "/" + name + "/" + role
				b.Profile, b.PathRole = name, role
				b.Size, b.Runtime = e.Size.Bytes, e.Runtime.Duration
				b.Estimate = time.Duration(profilePoints(name)) * e.Runtime.Duration
				steps = append(steps, b)
			}
		}
		return steps
	})
}

func (storageProfiles) describe(st Step) string {
	points := profilePoints(st.Profile)
	unit := "points"
	if points == 1 {
		unit = "point"
	}
	return fmt.Sprintf("%s on %s  %s  %s × %d %s", st.Profile, st.PathRole, bytesize.Format(st.Size), roughDuration(st.Runtime), points, unit)
}

// preflight finds fio, which the steps run.
func (storageProfiles) preflight() error {
	if _, err := fio.FindFio(); err != nil {
		return fmt.Errorf("%w (the study has storage profiles)", err)
	}
	return nil
}

func (storageProfiles) run(ctx context.Context, r *runner, step Step, res *StepResult) error {
	return r.onTarget(ctx, step, res, r.storageProfile)
}

// storageProfile runs one fio profile on one of a managed target's directories.
func (r *runner) storageProfile(ctx context.Context, t *target, step Step, res *StepResult) error {
	if err := t.ready(ctx, variantOf(t, Step{}), false); err != nil {
		return err
	}
	profiles, err := fio.Lookup([]string{step.Profile}, false)
	if err != nil {
		return err
	}
	dir := t.spec.Path
	if step.PathRole == blockdev.RoleWAL {
		dir = t.spec.WALPath
	}
	results, err := fio.Run(ctx, profiles, fio.Options{Dir: dir, Size: step.Size, Runtime: step.Runtime,
		Progress: func(profile string, done, of int, p *fio.Point) {
			fmt.Fprintf(r.opts.Log, "  %s %d/%d %s: %.0f IOPS, %.1f MB/s\n", profile, done, of, p.Name, p.IOPS, p.MBps)
		}})
	res.Fio = results
	return err
}

func profilePoints(name string) int {
	for _, p := range fio.Profiles {
		if p.Name == name {
			return len(p.Points)
		}
	}
	return 1
}

func profileNames() []string {
	var out []string
	for _, p := range fio.Profiles {
		out = append(out, p.Name)
	}
	return out
}
