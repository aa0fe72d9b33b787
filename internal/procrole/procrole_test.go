package procrole

import "testing"

// The names are stored in results (process_io, waits, writes by role) and a report
// compares runs by them: a respelt name would split an old run's row from a new
// one's. Each is spelt as stored; no two rows share a name (keys of one map literal,
// they would not compile).
func TestNamesAsStored(t *testing.T) {
	stored := map[string]string{
		Clients: "client_backends", Checkpointer: "checkpointer", Bgwriter: "bgwriter", WALWriter: "walwriter",
		Autovacuum: "autovacuum", WALSender: "walsender", Backup: "backup", AllWAL: "wal_all_roles",
		Connections: "connections", PageCleaners: "page_cleaners", LogWriter: "log_writer", IOThreads: "io_threads",
		Other: "other", KernelWriteback: "kernel_writeback", Journal: "filesystem_journal",
		KernelOther: "kernel_other", OtherProcesses: "other_processes",
	}
	for name, want := range stored {
		if name != want {
			t.Errorf("role %q is stored as %q", name, want)
		}
	}
}
