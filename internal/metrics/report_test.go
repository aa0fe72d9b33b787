package metrics

import (
	"strings"
	"testing"

	"github.com/storbench/storbench/internal/procrole"
)

// A role's writes are shown only where they come from the block layer, as a share
// of the disks' writes: /proc/PID/io write_bytes, which counted a role for up to 9x
// what the disks wrote ("10980.1 MB written (335% of what the disks wrote)"), is never
// a role's writes.
func TestWriteTextRoleWrites(t *testing.T) {
	read, write, written := 92.0, 59.0, 20.0
	r := &Report{Source: "local", IntervalSeconds: 1, Summary: Summary{Samples: 3, ProcessIO: []RoleTotal{
		{Role: procrole.Clients, Source: sourceBlock, ReadMB: 10, WriteMB: &written, ReadPctOfDisks: &read, WritePctOfDisks: &write},
		{Server: "b", Role: procrole.Clients, Source: sourceProc, ReadMB: 7, ReadPctOfDisks: &read},
	}}}
	var out strings.Builder
	WriteText(&out, r, "timed window")
	for _, want := range []string{
		"I/O of client_backends: 10.0 MB read (92% of the disks' reads), 20.0 MB written (59% of the disks' writes) (block layer, by issuing task)",
		"I/O of b client_backends: 7.0 MB read (92% of the disks' reads) (/proc/PID/io; writes by role: the database's own counts)\n",
	} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("summary lacks %q:\n%s", want, out.String())
		}
	}
}
