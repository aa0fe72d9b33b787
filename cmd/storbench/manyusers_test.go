package main

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
)

// manyUsersMaxRSSKB bounds the driver's max RSS (KB, as Linux reports ru_maxrss) with
// manyUsers users. Measured on the 2-core machine of the README: 34 MB at 500 users
// run alone, up to 58 MB right after other tests (the peak depends on when the
// collector runs against a live heap of ~18 MB: ~26 MB of base, runtime, sampler and
// shard histograms, and 17-24 KB per user, its connection's buffers and goroutine);
// 46 MB at 1000 users (bench/users.sh). The bound catches memory that grows with the
// users by far more than their connections (100 KB a user would pass it), not a few
// KB per user: bench/users.sh measures those.
const (
	manyUsers         = 500
	manyUsersMaxRSSKB = 96 << 10
)

// TestManyUsers: hundreds of users against a managed instance sized for them: the run
// succeeds, its per-second timeline has every second of the ramp and the window, the
// driver's memory stays bounded, and destroy leaves no server behind.
func TestManyUsers(t *testing.T) {
	if testing.Short() {
		t.Skip("builds storbench and drives hundreds of connections to a managed PostgreSQL")
	}
	const ramp, duration = 2, 6
	dir := diskTempDir(t, "manyusers-")
	// By the data directory on the postmaster's command line (its backends exit with
	// it): other tests' servers, orphans of pg_ctl too, are not this one. Registered
	// first, so it runs after the instance's destroy.
	t.Cleanup(func() {
		if left := leftovers(dir, nil); len(left) > 0 {
			t.Errorf("processes left after destroy: %q", left)
		}
	})
	// The run's own connections (counters, metrics) need a few slots beyond the users.
	dsn := managedInstance(t, filepath.Join(dir, "pg"), "manyusers", "--max-connections", fmt.Sprint(manyUsers+20))
	if code, out, errOut := storbench(t, "build", "--dsn", dsn, "--warehouses", "1", "--workers", "2"); code != 0 {
		t.Fatalf("build: exit %d\n%s%s", code, out, errOut)
	}

	// The real binary, so its memory is its own; no bpftrace, whose RSS the kernel
	// would report as the driver's (ru_maxrss covers reaped children).
	jsonPath := filepath.Join(dir, "run.json")
	cmd := binaryIn{env: []string{"STORBENCH_DSN=" + dsn}}.command(t, "run", "--users", fmt.Sprint(manyUsers),
		"--ramp", fmt.Sprintf("%ds", ramp), "--duration", fmt.Sprintf("%ds", duration), "--io-latency", "off", "--json", jsonPath)
	var stdout, stderr strings.Builder
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("run with %d users: %v\n%s%s", manyUsers, err, stdout.String(), stderr.String())
	}
	maxRSS := cmd.ProcessState.SysUsage().(*syscall.Rusage).Maxrss
	t.Logf("%d users: max RSS %d MB", manyUsers, maxRSS>>10)
	if maxRSS > manyUsersMaxRSSKB {
		t.Errorf("max RSS %d KB with %d users, over the bound of %d KB", maxRSS, manyUsers, manyUsersMaxRSSKB)
	}

	b, err := os.ReadFile(jsonPath)
	if err != nil {
		t.Fatal(err)
	}
	var res struct {
		Timeline []struct {
			T      int   `json:"t"`
			Errors int64 `json:"errors"`
		} `json:"timeline"`
		NOPM         float64          `json:"nopm_client"`
		ErrorsByKind map[string]int64 `json:"errors_by_kind"`
	}
	if err := json.Unmarshal(b, &res); err != nil {
		t.Fatal(err)
	}
	// Second t covers (t-1, t] from the window's start: the ramp is -ramp+1..0.
	var got []int
	for _, s := range res.Timeline {
		got = append(got, s.T)
	}
	var want []int
	for s := -ramp + 1; s <= duration; s++ {
		want = append(want, s)
	}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("timeline seconds %v, want %v", got, want)
	}
	if len(res.ErrorsByKind) > 0 {
		t.Errorf("errors with %d users: %v", manyUsers, res.ErrorsByKind)
	}
	if res.NOPM <= 0 {
		t.Errorf("no New-Order completed: NOPM %v", res.NOPM)
	}
	if lines := strings.Count(stdout.String(), " NOPM "); lines < ramp+duration {
		t.Errorf("%d progress lines for %d seconds:\n%s", lines, ramp+duration, stdout.String())
	}
}
