package main

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"
)

// TestStudyKilledDuringConsolidation: kill -9 of study run once a consolidation's
// instances run leaves their servers; destroy --name of one says it is the study's
// and names study clean; the next run takes its instances over (destroys and makes
// them again) and goes on; killed again in the noisy step, study clean stops and
// removes every instance, and no server is left.
func TestStudyKilledDuringConsolidation(t *testing.T) {
	t.Parallel() // its own home, servers, directories and names: see docs/architecture.md#tests
	if testing.Short() {
		t.Skip("builds storbench and runs a study on PostgreSQL")
	}
	dir := diskTempDir(t, "study-killed-")
	in := binaryIn{env: []string{"STORBENCH_HOME=" + t.TempDir()}}
	file, results := filepath.Join(dir, "study.yaml"), filepath.Join(dir, "results")
	must(t, os.WriteFile(file, []byte(`name: killed
targets:
  - name: shared
    path: `+filepath.Join(dir, "shared")+`
workload:
  warehouses: 1
experiments:
  - name: consol
    kind: consolidation
    instances: 2
    instance_memory: 256MB
    users: 1
    ramp: 1s
    duration: 5s
    baseline: true
    noisy:
      instances: 1
      interval: 2s
      cycles: 2
metrics:
  io_latency: "off"
`), 0o644))
	t.Cleanup(func() { in.run(t, "study", "clean", results) })
	before := processes()
	consolidated := func(n int) func(string) bool {
		return func(out string) bool { return strings.Count(out, " instances of 256 MiB on ") >= n }
	}
	s := in.stopAfter(t, syscall.SIGKILL, consolidated(1), 10*time.Second, "study", "run", file, "--results", results)
	servers := mentioning(filepath.Join(dir, "shared-c"), before)
	if len(servers) == 0 {
		t.Fatalf("no consolidated instance's server runs after the kill: the test checks nothing\n%s%s", s.stdout, s.stderr)
	}
	code, out, _ := in.run(t, "instance", "list")
	c1 := regexp.MustCompile(`(?m)^(shared-[0-9a-f]{8}-c1)\s+killed\s`).FindStringSubmatch(out)
	if code != 0 || c1 == nil {
		t.Fatalf("instance list does not show the study's consolidated instance: exit %d\n%s", code, out)
	}
	code, _, errOut := in.run(t, "instance", "destroy", "--name", c1[1])
	if code != 2 || !oneLine(errOut) || !strings.Contains(errOut, "belongs to study killed") || !strings.Contains(errOut, "storbench study clean "+results) {
		t.Errorf("destroy --name %s: exit %d, %q; want 2 and one line naming study clean %s", c1[1], code, errOut, results)
	}

	// The next run goes through the step it was killed in, to the noisy one.
	s = in.stopAfter(t, syscall.SIGKILL, consolidated(2), 10*time.Second, "study", "run", file, "--results", results)
	if !strings.Contains(s.stdout, "step 2/2") {
		t.Fatalf("the resumed study did not reach its noisy step:\n%s%s", s.stdout, s.stderr)
	}
	if len(mentioning(filepath.Join(dir, "shared-c"), before)) == 0 {
		t.Fatalf("no consolidated instance's server runs after the second kill\n%s%s", s.stdout, s.stderr)
	}
	if code, out, errOut := in.run(t, "study", "clean", results); code != 0 {
		t.Fatalf("study clean: exit %d\n%s%s", code, out, errOut)
	}
	if left := leftovers(dir, before); len(left) > 0 {
		t.Errorf("servers left after study clean: %q", left)
	}
	for _, d := range []string{"shared", "shared-c1", "shared-c2"} {
		if _, err := os.Stat(filepath.Join(dir, d)); !os.IsNotExist(err) {
			t.Errorf("%s left after study clean: %v", d, err)
		}
	}
}
