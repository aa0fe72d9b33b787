package main

import (
	"context"
	"fmt"
	"net/url"
	"os"
	osexec "os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/storbench/storbench/internal/study"
	"github.com/storbench/storbench/internal/testsupport/netlab"
)

// hostsStudy writes a study over the lab's hosts, each an external target with its
// password in an environment variable (returned, for the controller's process), its
// node_exporter and, where the host runs sshd, SSH; metrics is added to the study's metrics:.
func hostsStudy(t *testing.T, lab *netlab.Lab, dir, experiments, metrics string) (string, []string) {
	t.Helper()
	var b strings.Builder
	b.WriteString("name: hosts\ntargets:\n")
	var env []string
	for i, h := range lab.Hosts {
		u, err := url.Parse(h.DSN)
		if err != nil {
			t.Fatal(err)
		}
		pw, _ := u.User.Password()
		u.User = url.User(u.User.Username())
		q := u.Query()
		q.Set("connect_timeout", "5")
		u.RawQuery = q.Encode()
		env = append(env, fmt.Sprintf("DB%d_PASSWORD=%s", i+1, pw))
		fmt.Fprintf(&b, "  - name: db%d\n    kind: external\n    dsn: %s\n    password_env: DB%d_PASSWORD\n    host_metrics: %s\n",
			i+1, u, i+1, h.MetricsURL)
		if h.SSH != nil {
			fmt.Fprintf(&b, "    ssh: %s@%s\n    ssh_key: %s\n    known_hosts: %s\n", h.SSH.User, h.SSH.Addr, h.SSH.KeyFile, h.SSH.KnownHostsFile)
		}
	}
	b.WriteString("workload:\n  warehouses: 1\nexperiments:\n" + experiments + "metrics:\n  io_latency: off\n" + metrics)
	file := filepath.Join(dir, "study.yaml")
	must(t, os.WriteFile(file, []byte(b.String()), 0o644))
	return file, env
}

// inController runs the storbench binary in the lab's controller namespace, as a
// controller machine: every database, exporter and sshd is across the network.
func inController(t *testing.T, lab *netlab.Lab, env []string, args ...string) (int, string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	cmd := lab.Controller.Namespace.Command(ctx, binary(t), args...)
	cmd.Env = append(os.Environ(), env...)
	out, err := cmd.CombinedOutput()
	code := cmd.ProcessState.ExitCode()
	if err != nil && code <= 0 {
		t.Fatalf("storbench %v: %v\n%s", args, err, out)
	}
	return code, string(out)
}

// TestConsolidationAcrossHosts: one storbench process drives three PostgreSQL
// servers on three "hosts" (network namespaces, each with its own node_exporter,
// two with sshd): a consolidation with a baseline, then with the third host's
// database backed up, from the controller and then on its host over SSH; per-host
// results, metrics of every host on the controller's timeline, the backup records,
// and the clear errors of an unreachable host, a refused scrape, a wrong host key
// and a skewed clock. netlab tears it all down and checks nothing is left.
func TestConsolidationAcrossHosts(t *testing.T) {
	t.Parallel() // its own servers, directories and names: see docs/architecture.md#tests
	if testing.Short() {
		t.Skip("builds a network of namespaces with three PostgreSQL servers")
	}
	binary(t)
	lab := netlab.New(t, 3, netlab.Options{PostgreSQL: true, NodeExporter: true, SSH: []int{0, 2}})
	dir := diskTempDir(t, "hosts-")
	onHost := filepath.Join(dir, "backups-on-host") // the hosts share this machine's files
	must(t, os.Mkdir(onHost, 0o755))
	// The first with an idle baseline (db3 connected to, given nothing), the second
	// with db3 on TPC-C in its baseline.
	consolidation := func(name, baseline, runOn string) string {
		s := fmt.Sprintf("  - name: %s\n    kind: consolidation\n    targets: [db1, db2, db3]\n    users: 2\n    ramp: 1s\n    duration: 6s\n    baseline: %s\n"+
			"    noisy:\n      instances: 1\n      interval: 2s\n      cycles: 2\n      run_on: %s\n", name, baseline, runOn)
		if runOn == "host" {
			s += "      path: " + onHost + "\n"
		}
		return s
	}
	// A user sweep on one external target, as on one machine, with its host's metrics.
	sweep := "  - name: sweep\n    kind: user-sweep\n    targets: [db2]\n    users: [1]\n    ramp: 0s\n    duration: 2s\n"
	file, env := hostsStudy(t, lab, dir, consolidation("pull", "idle", "controller")+consolidation("onhost", "oltp", "host")+sweep, "")
	results := filepath.Join(dir, "results")
	code, out := inController(t, lab, env, "study", "run", file, "--results", results)
	if code != 0 {
		t.Fatalf("study run: exit %d\n%s", code, out)
	}
	// The OLTP baseline's noisy step says its changes are not the noise's alone.
	if n := strings.Count(out, "the baseline ran 3 OLTP instances, this run 2: the changes mix the noise"); n != 1 {
		t.Errorf("the mismatched baseline is said %d times, want once (onhost's noisy step):\n%s", n, out)
	}
	// Kept when asked, e.g. as the report's fixture of a study across hosts.
	if keep := os.Getenv("STORBENCH_ARTIFACTS"); keep != "" {
		if out, err := osexec.Command("cp", "-a", results, filepath.Join(keep, "hosts-results")).CombinedOutput(); err != nil {
			t.Errorf("keeping the results: %v: %s", err, out)
		}
	}
	st, err := study.ReadStore(results)
	if err != nil {
		t.Fatal(err)
	}
	steps, err := st.Steps()
	if err != nil || len(steps) != 5 {
		t.Fatalf("%d steps stored, want 5 (%v)", len(steps), err)
	}
	if run := steps[4].Run; run == nil || run.NOPMDB <= 0 || run.System == nil || run.System.Summary.CPU == nil || !strings.Contains(run.System.Source, lab.Hosts[1].Addr) {
		t.Errorf("the user sweep on db2 has no result with its host's metrics: %+v", run)
	}
	for _, s := range steps[:4] {
		c := s.Consolidation
		if c == nil || len(c.Instances) != 3 {
			t.Fatalf("step %s: no consolidation of 3 instances", s.Step.ID)
		}
		if c.Controller == nil || c.Controller.Transactions == 0 || c.Controller.MicrosPerTransaction <= 0 {
			t.Errorf("step %s: no controller CPU per transaction: %+v", s.Step.ID, c.Controller)
		}
		for i, in := range c.Instances {
			if in.Host != lab.Hosts[i].Addr {
				t.Errorf("step %s: instance %s on host %q, want %s", s.Step.ID, in.Name, in.Host, lab.Hosts[i].Addr)
			}
			// Every host's metrics, from its own exporter, on the window's timeline.
			if in.System == nil || len(in.System.Samples) < 5 || in.System.Summary.CPU == nil || len(in.System.Samples[len(in.System.Samples)-1].Disks) == 0 {
				t.Errorf("step %s: host %s has no CPU and disk samples", s.Step.ID, in.Host)
			} else if first, last := in.System.Samples[0].T, in.System.Samples[len(in.System.Samples)-1].T; first > 2 || last < 5 {
				// Placed on the window's timeline from its start, and covering it to its
				// end (6 s). Sampling goes on until every worker is done: with the noisy
				// neighbour's backups and their cleanup over SSH, seconds past the window
				// on a loaded machine, so the last sample has no upper bound here.
				t.Errorf("step %s: host %s's samples from T=%.1f s to %.1f s, not over the window (0 to 6 s)", s.Step.ID, in.Host, first, last)
			}
			noisy := s.Step.Noisy && i == 2
			switch {
			case i == 2 && s.Step.Baseline == study.BaselineIdle:
				if in.Role != study.RoleIdle || in.Run != nil || len(in.Backups) > 0 {
					t.Errorf("step %s: db3 should have been idle: role %s, run %v, %d backups", s.Step.ID, in.Role, in.Run != nil, len(in.Backups))
				}
			case noisy && (in.Role != "noisy" || len(in.Backups) != 2):
				t.Errorf("step %s: db3 should have made 2 backups: role %s, %d backups", s.Step.ID, in.Role, len(in.Backups))
			case noisy:
				for _, b := range in.Backups {
					if b.Bytes < 10<<20 || b.Seconds <= 0 || b.MBps <= 0 || b.StartT < -0.5 {
						t.Errorf("step %s: backup %d of db3: %+v", s.Step.ID, b.Cycle, b.Transfer)
					}
				}
			case in.Run == nil || in.Run.NOPMDB <= 0 || in.Run.Transactions.NewOrder.Errors > 0:
				t.Errorf("step %s: %s should have run TPC-C without errors", s.Step.ID, in.Name)
			}
		}
	}
	envs, err := st.Environment()
	if err != nil {
		t.Fatal(err)
	}
	for _, te := range envs.Targets {
		// db1 and db3 have SSH: their data disk was found there.
		if hasSSH := te.Name != "db2"; hasSSH != (len(te.HostDevices) == 1) || te.Host == "" {
			t.Errorf("target %s: host %q, sampled devices %v", te.Name, te.Host, te.HostDevices)
		}
		// and the devices under its data directory were read there (one SSH command).
		if hasSSH := te.Name != "db2"; hasSSH != (len(te.Placements) == 1) ||
			hasSSH && (te.Placements[0].Role != "data" || te.Placements[0].FSType == "" || len(te.Placements[0].Stack) == 0 || te.Placements[0].Stack[0].Scheduler == "") {
			t.Errorf("target %s: its data directory's devices on its host: %+v", te.Name, te.Placements)
		}
	}
	if left, _ := os.ReadDir(onHost); len(left) > 0 {
		t.Errorf("backups left on the host: %v", left)
	}
	report := filepath.Join(dir, "report.html")
	if code, out, errOut := storbench(t, "report", results, "-o", report); code != 0 {
		t.Fatalf("report: exit %d\n%s%s", code, out, errOut)
	}
	html, _ := os.ReadFile(report)
	for _, h := range lab.Hosts {
		if !strings.Contains(string(html), h.Addr) {
			t.Errorf("the report does not name host %s", h.Addr)
		}
	}

	// What goes wrong between hosts: one line each, naming the host and the fix.
	simple := "  - name: sweep\n    kind: user-sweep\n    targets: [db1]\n    users: [1]\n    ramp: 0s\n    duration: 1s\n"
	h1 := lab.Hosts[0]
	for _, c := range []struct {
		name    string
		metrics string
		edit    func(study, dir string) string
		want    []string
	}{
		{"unreachable host", "", func(s, _ string) string {
			return strings.Replace(s, h1.Addr+":5432", "198.18.0.99:5432", 1)
		}, []string{"198.18.0.99"}},
		{"refused scrape", "", func(s, _ string) string {
			return strings.Replace(s, h1.Addr+":9100", h1.Addr+":9199", 1)
		}, []string{h1.Addr + ":9199"}},
		{"wrong host key", "", func(s, dir string) string {
			// Host 3's key under host 1's address.
			b, _ := os.ReadFile(lab.KnownHostsFile)
			var lines []string
			for _, l := range strings.Split(strings.TrimSpace(string(b)), "\n") {
				if rest, ok := strings.CutPrefix(l, lab.Hosts[2].Addr+" "); ok {
					lines = append(lines, h1.Addr+" "+rest)
				}
			}
			other := filepath.Join(dir, "known_hosts")
			must(t, os.WriteFile(other, []byte(strings.Join(lines, "\n")+"\n"), 0o644))
			return strings.Replace(s, "known_hosts: "+h1.SSH.KnownHostsFile, "known_hosts: "+other, 1)
		}, []string{"does not match"}},
		{"clock skew", "  max_clock_skew: 1ns\n", func(s, _ string) string { return s }, []string{"clock", h1.Addr}},
	} {
		t.Run(c.name, func(t *testing.T) {
			sub := t.TempDir()
			file, env := hostsStudy(t, lab, sub, simple, c.metrics)
			text, _ := os.ReadFile(file)
			must(t, os.WriteFile(file, []byte(c.edit(string(text), sub)), 0o644))
			code, out := inController(t, lab, env, "study", "run", file, "--results", filepath.Join(sub, "results"))
			last := strings.TrimSpace(out[strings.LastIndex(strings.TrimRight(out, "\n"), "\n")+1:])
			t.Logf("exit %d: %s", code, last)
			ok := code == 1 || code == 2
			for _, w := range c.want {
				ok = ok && strings.Contains(last, w)
			}
			if !ok || !strings.HasPrefix(last, "storbench: ") {
				t.Errorf("exit %d, want 1 or 2 and a last line naming %q:\n%s", code, c.want, out)
			}
		})
	}
}
