package instance

import (
	"fmt"
	"os"
	"os/exec"
	"strings"
	"testing"

	"github.com/storbench/storbench/internal/instance/cgroup"
)

// TestApplyIOLimitRecordsThrottle: an I/O limit put in force records the disk, the
// cgroup version and what that version throttles, in the state and its limit lines.
func TestApplyIOLimitRecordsThrottle(t *testing.T) {
	v, err := cgroup.Support()
	if err != nil {
		t.Skipf("no cgroups here: %v", err)
	}
	dir := t.TempDir()
	disk, err := diskOf(dir)
	if err != nil {
		t.Skipf("the temp dir is on no disk: %v", err)
	}
	sleep := exec.Command("sleep", "60")
	if err := sleep.Start(); err != nil {
		t.Fatal(err)
	}
	st := &State{Spec: Spec{Name: "iothrottle", Path: dir, IOLimit: IOLimit{ReadIOPS: 500, WriteIOPS: 400}}}
	lines, group := applyLimits(st, sleep.Process.Pid, fmt.Sprintf("iothrottle-test-%d", os.Getpid()))
	st.Cgroup = group
	t.Cleanup(func() {
		_ = sleep.Process.Kill()
		_ = sleep.Wait()
		if err := releaseLimits(st); err != nil {
			t.Errorf("release: %v", err)
		}
	})
	want := IOThrottle{Limit: st.IOLimit, Device: disk, Cgroup: int(v)}
	if st.IOThrottle == nil || *st.IOThrottle != want {
		t.Fatalf("IOThrottle = %+v, want %+v (limits %q)", st.IOThrottle, want, lines)
	}
	text := strings.Join(lines, "; ")
	if v == cgroup.V1 && !strings.Contains(text, "buffered writeback NOT throttled (partial emulation)") ||
		v == cgroup.V2 && !strings.Contains(text, "buffered writeback included") {
		t.Errorf("limits %q do not say what %v throttles", text, v)
	}
}
