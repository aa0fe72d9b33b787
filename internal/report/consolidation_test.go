package report

import (
	"testing"

	"github.com/storbench/storbench/internal/study"
)

// TestConsolidatedInstanceLabels: the tables of I/O by role say which instance ran
// no TPC-C, the noisy one and, in an idle baseline, the idle one.
func TestConsolidatedInstanceLabels(t *testing.T) {
	for _, role := range []string{study.RoleNoisy, study.RoleIdle} {
		run := &study.ConsolidationRun{Instances: []study.InstanceResult{{Name: "t-c1", Role: study.RoleOLTP}, {Name: "t-c2", Role: role}}}
		if got, want := consolidatedInstance(run, "t-c1")+", "+consolidatedInstance(run, "t-c2"), "c1, c2 ("+role+")"; got != want {
			t.Errorf("%s: %q, want %q", role, got, want)
		}
	}
}
