package main

import (
	"os"
	osexec "os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"
)

// liteResults runs a study of two one-second steps on an embedded SQLite database,
// the cheapest real study, in a directory of the test's, and returns the directory,
// the study file and its results store.
func liteResults(t *testing.T) (dir, file, results string) {
	t.Helper()
	if testing.Short() {
		t.Skip("builds storbench and runs a study on SQLite")
	}
	dir = t.TempDir()
	file = filepath.Join(dir, "lite.yaml")
	must(t, os.WriteFile(file, []byte("name: lite\ntargets:\n  - name: lite\n    kind: external\n    dsn: sqlite://"+filepath.Join(dir, "tpcc.db")+
		"\nworkload:\n  warehouses: 1\nexperiments:\n  - name: sweep\n    kind: user-sweep\n    users: [1, 2]\n    ramp: 0s\n    duration: 1s\n"+
		"metrics:\n  io_latency: \"off\"\n"), 0o644))
	results = filepath.Join(dir, "results")
	runLite(t, file, results)
	return dir, file, results
}

// runLite runs the study of liteResults into results with the built binary.
func runLite(t *testing.T, f, results string, args ...string) string {
	t.Helper()
	code, out, errOut := runBinary(t, append([]string{"study", "run", f, "--results", results}, args...)...)
	if code != 0 {
		t.Fatalf("study run %v: exit %d\n%s%s", args, code, out, errOut)
	}
	return out
}

// A store a crash left torn (an empty marker, a step file cut short: what ext4 leaves
// of files not yet synced) is read step by step: results list, show and the report name
// the torn step in one line and go on with the others; the study resumes, runs that
// step again with the torn file kept aside, and repairs the marker.
func TestTornStoreReadStepByStep(t *testing.T) {
	t.Parallel()
	dir, f, results := liteResults(t)
	step1 := filepath.Join(results, "steps", "0001.json")
	whole, err := os.ReadFile(step1)
	if err != nil {
		t.Fatal(err)
	}
	torn := whole[:len(whole)/2]
	must(t, os.WriteFile(step1, torn, 0o644))
	must(t, os.WriteFile(filepath.Join(results, ".storbench-study"), nil, 0o644))

	code, out, errOut := runBinary(t, "results", "list", results)
	if code != 0 || !regexp.MustCompile(`(?m)^1/2\s+lite/sweep/users=1/rep=1\s+UNREADABLE\s+steps/0001.json is torn`).MatchString(out) ||
		!regexp.MustCompile(`(?m)^2/2\s+lite/sweep/users=2/rep=1\s+stored `).MatchString(out) || !strings.Contains(out, "1 of 2 steps stored") {
		t.Errorf("results list of a torn store: exit %d, want 0, step 1 UNREADABLE naming its file, step 2 stored\n%s%s", code, out, errOut)
	}
	if code, out, errOut := runBinary(t, "results", "show", results, "2"); code != 0 || !strings.Contains(out, "step 2 lite/sweep/users=2/rep=1") {
		t.Errorf("results show of the step that is whole: exit %d\n%s%s", code, out, errOut)
	}
	code, out, errOut = runBinary(t, "results", "show", results, "1")
	if code != 2 || !strings.Contains(errOut, filepath.Join("steps", "0001.json")+" is torn") || strings.Count(strings.TrimSpace(errOut), "\n") != 0 {
		t.Errorf("results show of the torn step: exit %d, stderr %q; want 2 and one line naming its file\n%s", code, errOut, out)
	}
	html := filepath.Join(dir, "report.html")
	if code, out, errOut := runBinary(t, "report", results, "-o", html); code != 0 {
		t.Errorf("report of a torn store: exit %d\n%s%s", code, out, errOut)
	} else if b, _ := os.ReadFile(html); !strings.Contains(string(b), "steps/0001.json is torn") {
		t.Errorf("the report does not name the torn step")
	}

	out = runLite(t, f, results)
	for _, want := range []string{"resuming: 1 of 2 steps", "the store's marker .storbench-study was empty: written again (study lite)",
		"step 1: steps/0001.json is torn", "moved to steps/0001.json.unreadable; the step runs again"} {
		if !strings.Contains(out, want) {
			t.Errorf("the resumed study does not say %q:\n%s", want, out)
		}
	}
	if code, out, _ := runBinary(t, "results", "list", results); code != 0 || !strings.Contains(out, "2 of 2 steps stored") {
		t.Errorf("results list after the resume: exit %d\n%s", code, out)
	}
	if b, err := os.ReadFile(step1 + ".unreadable"); err != nil || string(b) != string(torn) {
		t.Errorf("the torn step file was not kept aside: %v", err)
	}
	if b, _ := os.ReadFile(filepath.Join(results, ".storbench-study")); string(b) != "lite\n" {
		t.Errorf("the marker is %q after the resume, want the study's name", b)
	}
}

// --restart removes only the step files storbench wrote; a user's file or directory
// under steps/ stays, and is named; so do the unreadable step files an earlier run set
// aside, named as such (before, as "not step files of storbench's").
func TestRestartKeepsOthersFiles(t *testing.T) {
	t.Parallel()
	_, f, results := liteResults(t)
	steps := filepath.Join(results, "steps")
	// As study run sets torn step files aside (TestTornStoreReadStepByStep).
	for _, name := range []string{"0001.json.unreadable", "0001.json.unreadable.2"} {
		must(t, os.WriteFile(filepath.Join(steps, name), []byte(`{"step": `), 0o644))
	}
	must(t, os.WriteFile(filepath.Join(steps, "notes.txt"), []byte("mine\n"), 0o644))
	must(t, os.MkdirAll(filepath.Join(steps, "old", "deep"), 0o755))
	must(t, os.WriteFile(filepath.Join(steps, "old", "deep", "0001.json"), []byte("mine\n"), 0o644))
	before, err := os.Stat(filepath.Join(steps, "0002.json"))
	if err != nil {
		t.Fatal(err)
	}
	time.Sleep(10 * time.Millisecond)

	out := runLite(t, f, results, "--restart")
	if !strings.Contains(out, "kept in "+steps+": notes.txt, old (not step files of storbench's)") || strings.Contains(out, "resuming") {
		t.Errorf("study run --restart does not name the files it kept, or resumed:\n%s", out)
	}
	if !strings.Contains(out, "kept in "+steps+": 0001.json.unreadable, 0001.json.unreadable.2 (step files that did not read, which a study run set aside") {
		t.Errorf("study run --restart does not name the step files set aside as such:\n%s", out)
	}
	for p, was := range map[string]string{"notes.txt": "mine\n", filepath.Join("old", "deep", "0001.json"): "mine\n",
		"0001.json.unreadable": `{"step": `, "0001.json.unreadable.2": `{"step": `} {
		if b, err := os.ReadFile(filepath.Join(steps, p)); err != nil || string(b) != was {
			t.Errorf("--restart removed or changed steps/%s: %v", p, err)
		}
	}
	if after, err := os.Stat(filepath.Join(steps, "0002.json")); err != nil || !after.ModTime().After(before.ModTime()) {
		t.Errorf("--restart did not run step 2 again: %v", err)
	}
}

// A results store is read without trusting it: a symbolic link is not followed, a FIFO
// does not block its readers, a huge sparse step file is refused by its size; each is
// named in one line and the other steps are read.
func TestResultsStoreReadUntrusting(t *testing.T) {
	t.Parallel()
	dir, _, results := liteResults(t)
	env := filepath.Join(results, "environment.json")
	b, err := os.ReadFile(env)
	if err != nil {
		t.Fatal(err)
	}
	outside := filepath.Join(dir, "elsewhere.json")
	must(t, os.WriteFile(outside, []byte(strings.Replace(string(b), `"host": "`, `"host": "FOLLOWED-`, 1)), 0o644))
	must(t, os.Remove(env))
	must(t, os.Symlink(outside, env))
	step1 := filepath.Join(results, "steps", "0001.json")
	must(t, os.Remove(step1))
	must(t, syscall.Mkfifo(step1, 0o644))
	// A file of storbench's name beyond the bound, sparse: refused by its size, unread.
	huge := filepath.Join(results, "steps", "0003.json")
	must(t, os.WriteFile(huge, nil, 0o644))
	must(t, os.Truncate(huge, 2<<30))

	code, out, errOut := runWithin(t, 20*time.Second, "results", "list", results)
	if code != 0 || !regexp.MustCompile(`(?m)^1/2\s+lite/sweep/users=1/rep=1\s+UNREADABLE\s+steps/0001.json is not a regular file \(a FIFO\)`).MatchString(out) ||
		!regexp.MustCompile(`(?m)^2/2\s+lite/sweep/users=2/rep=1\s+stored `).MatchString(out) ||
		!strings.Contains(out, "steps/0003.json is 2GB, more than the 1GB a step file may hold") {
		t.Errorf("results list: exit %d, want 0, the FIFO and the huge file named, step 2 stored\n%s%s", code, out, errOut)
	}
	html := filepath.Join(dir, "r.html")
	code, out, errOut = runWithin(t, 20*time.Second, "report", results, "-o", html)
	b, _ = os.ReadFile(html)
	if code != 0 || strings.Contains(string(b), "FOLLOWED-") || !strings.Contains(string(b), "environment.json is a symbolic link") {
		t.Errorf("report: exit %d, want 0, the link named and not followed\n%s%s", code, out, errOut)
	}
}

// runWithin runs the built storbench with at most 2 GiB of address space (a reader
// that grows without bound fails there, not on the machine) and fails the test if it
// has not exited within limit (then it is killed).
func runWithin(t *testing.T, limit time.Duration, args ...string) (int, string, string) {
	t.Helper()
	cmd := osexec.Command("prlimit", append([]string{"--as=2147483648", "--", binary(t)}, args...)...)
	var out, errOut strings.Builder
	cmd.Stdout, cmd.Stderr = &out, &errOut
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	done := make(chan struct{})
	go func() { cmd.Wait(); close(done) }()
	select {
	case <-done:
	case <-time.After(limit):
		cmd.Process.Kill()
		<-done
		t.Errorf("storbench %v still running after %v: killed\n%s%s", args, limit, out.String(), errOut.String())
	}
	return cmd.ProcessState.ExitCode(), out.String(), errOut.String()
}
