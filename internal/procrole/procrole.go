// Package procrole names the rows that I/O, writes and waits are counted under by
// role: the roles of a database server's processes (or threads), as each engine
// tells them apart (internal/engine/postgres, mysql), and the host's rows for the
// I/O no server's task issued (internal/metrics). The names are stored in results
// and compared across runs, so they are spelt here once; which process has which
// role stays the engine's to say. A leaf: engines, the sampler and the report all
// import it.
package procrole

// PostgreSQL's processes, as its process titles and pg_stat_activity's backend_type
// tell them apart, in the order reports show them.
const (
	// Clients is the client backends and the parallel workers they start.
	Clients      = "client_backends"
	Checkpointer = "checkpointer"
	Bgwriter     = "bgwriter"
	WALWriter    = "walwriter"
	// Autovacuum is the launcher and its workers.
	Autovacuum = "autovacuum"
	// WALSender is a WAL sender serving a standby; while it sends a base backup it
	// is Backup.
	WALSender = "walsender"
	Backup    = "backup"
	// AllWAL is, among the database's own counts of writes by role, the WAL every
	// role generated (pg_stat_wal wal_bytes).
	AllWAL = "wal_all_roles"
)

// MariaDB's and MySQL's threads, by the names they give themselves.
const (
	Connections  = "connections"
	PageCleaners = "page_cleaners"
	LogWriter    = "log_writer"
	IOThreads    = "io_threads"
)

// Other is a server's process or thread whose role cannot be told: the last of
// every engine's roles.
const Other = "other"

// The rows of the I/O that no server's task issued, in the order reports show them.
const (
	// KernelWriteback is the kernel's worker threads (kworker), above all the
	// flusher that writes back pages dirtied by any process: a checkpointer's
	// pages written back by it count here, not under the checkpointer.
	KernelWriteback = "kernel_writeback"
	// Journal is a filesystem's journal thread (ext4's jbd2).
	Journal = "filesystem_journal"
	// KernelOther is every other kernel thread.
	KernelOther = "kernel_other"
	// OtherProcesses is the processes of no sampled server.
	OtherProcesses = "other_processes"
)
