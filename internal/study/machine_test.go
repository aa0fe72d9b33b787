package study

import (
	"errors"
	"fmt"
	"runtime"
	"slices"
	"strings"
	"testing"

	"github.com/storbench/storbench/internal/input"
)

func parseStudy(t *testing.T, body string) (*Study, error) {
	t.Helper()
	withMemTotal(t, 64<<30)
	return Parse("m.yaml", []byte(body))
}

// What a plan accepts, its run can do: a target directory whose parent is missing
// (a disk not mounted) and CPUs the machine does not have are refused up front.
func TestCheckMachine(t *testing.T) {
	dir := t.TempDir()
	study := func(path, targetCPUs, sweepCPUs string) *Study {
		body := "name: m\ntargets:\n  - name: a\n    path: " + path + "\n"
		if targetCPUs != "" {
			body += "    cpus: " + targetCPUs + "\n"
		}
		body += "workload:\n  warehouses: 1\nexperiments:\n  - kind: cpu-sweep\n    users: [1]\n    cpus: [" + sweepCPUs + "]\n"
		s, err := parseStudy(t, body)
		if err != nil {
			t.Fatal(err)
		}
		return s
	}
	if refusals := CheckMachine(study(dir+"/pg", "0", "0"), dir+"/results"); len(refusals) != 0 {
		t.Errorf("a study this machine can run: %v", refusals)
	}
	beyond := fmt.Sprintf("0-%d", runtime.NumCPU())
	for _, c := range []struct {
		name string
		s    *Study
		want string
	}{
		// Placed and worded as the file's own checks: "FILE:LINE: path: what (hint)".
		{"parent missing", study(dir+"/not-mounted/pg", "", "0"), "m.yaml:4: targets[0].path: " + dir + "/not-mounted does not exist (create the mount point"},
		{"target cpus", study(dir+"/pg", beyond, "0"), fmt.Sprintf("m.yaml:5: targets[0].cpus: cpuset %q: CPU %d not online", beyond, runtime.NumCPU())},
		{"sweep cpus", study(dir+"/pg", "", "0, "+beyond), "m.yaml:10: experiments[0].cpus[1]: cpuset"},
	} {
		refusals := CheckMachine(c.s, dir+"/results")
		if len(refusals) != 1 || !errors.Is(refusals[0], input.ErrInvalid) || !strings.HasPrefix(refusals[0].Error(), c.want) {
			t.Errorf("%s: %v, want one input error with %q", c.name, refusals, c.want)
		}
	}
}

// A limit the instance runs without fails its step, unless the study allows it;
// then every such step says so in its notes.
func TestLimitsApplied(t *testing.T) {
	tg := &target{spec: Target{Name: "a", Kind: "managed"}, limits: []string{"memory 640MB by cgroup storbench/a", "CPU LIMIT NOT APPLIED: CPU 3 not online"}}
	r := &runner{study: &Study{}}
	res := &StepResult{}
	if err := r.limitsApplied(tg, res); !errors.Is(err, input.ErrInvalid) || !strings.Contains(err.Error(), "CPU LIMIT NOT APPLIED") ||
		!strings.Contains(err.Error(), "allow_unapplied_limits: true") {
		t.Errorf("an unapplied limit: %v, want the step failed naming it and allow_unapplied_limits", err)
	}
	r.study.AllowUnappliedLimits = true
	res = &StepResult{}
	if err := r.limitsApplied(tg, res); err != nil || !strings.Contains(strings.Join(res.Notes, "\n"), "LIMITS NOT APPLIED, allowed by allow_unapplied_limits: CPU LIMIT NOT APPLIED") {
		t.Errorf("allowed: %v, notes %q", err, res.Notes)
	}
	tg.limits = tg.limits[:1]
	r.study.AllowUnappliedLimits = false
	if err := r.limitsApplied(tg, &StepResult{}); err != nil {
		t.Errorf("limits applied: %v", err)
	}
}

func TestAllowUnappliedLimitsKey(t *testing.T) {
	base := "name: m\ntargets:\n  - name: a\n    path: /srv/a\nworkload:\n  warehouses: 1\nexperiments:\n  - kind: user-sweep\n    users: [1]\n"
	s, err := parseStudy(t, base+"allow_unapplied_limits: true\n")
	if err != nil || !s.AllowUnappliedLimits {
		t.Errorf("allow_unapplied_limits: true: %v, %v", s, err)
	}
	if _, err := parseStudy(t, base+"allow_unapplied_limits: maybe\n"); err == nil || !strings.Contains(err.Error(), "m.yaml:10:") {
		t.Errorf("allow_unapplied_limits: maybe: %v, want refused at line 10", err)
	}
}

// A step on a managed target records the memory and CPUs its instance ran with, the
// target's own as well as a variant's, and the CSV export gives them.
func TestStepRecordsInstanceLimits(t *testing.T) {
	t.Parallel()
	tg := &target{spec: Target{Name: "disk", Kind: "managed", Memory: Size{1 << 30}}, current: variant{memory: 1 << 30, cpus: "0"},
		limits: []string{"memory 1GiB by cgroup storbench/disk"}}
	r := &runner{study: &Study{}}
	res := &StepResult{Step: Step{Seq: 1, ID: "disk/sweep/users=1/rep=1", Target: "disk", Kind: UserSweep, Users: 1, Repeat: 1}}
	if err := r.limitsApplied(tg, res); err != nil {
		t.Fatal(err)
	}
	rows := csvRows(res)
	col := func(name string) string { return rows[0][slices.Index(csvColumns, name)] }
	if res.Memory != 1<<30 || col("memory_bytes") != "1073741824" || col("cpus") != "0" {
		t.Errorf("a step on a 1 GiB target: recorded memory %d, CSV memory_bytes %q cpus %q, want 1073741824 and 0", res.Memory, col("memory_bytes"), col("cpus"))
	}
}
