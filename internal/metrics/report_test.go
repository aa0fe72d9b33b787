package metrics

import (
	"strings"
	"testing"
)

// A role's writes are compared with the disks' as what they are, bytes dirtied over
// bytes written back, not as a share: a quick study's client backends showed "159% of
// the disks'".
func TestWriteTextRoleWrites(t *testing.T) {
	read, write := 92.0, 159.0
	r := &Report{Source: "local", IntervalSeconds: 1, Summary: Summary{Samples: 3, ProcessIO: []RoleTotal{
		{Role: "client_backends", ReadMB: 10, WriteMB: 20, ReadPctOfDisks: &read, WritePctOfDisks: &write},
	}}}
	var out strings.Builder
	WriteText(&out, r, "timed window")
	for _, want := range []string{"10.0 MB read (92% of the disks' reads)", "20.0 MB written (159% of what the disks wrote: counted when dirtied, written back later)"} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("summary lacks %q:\n%s", want, out.String())
		}
	}
}
