package report

// The report's longer sentences, each in one place: section introductions and the
// notes under tables, named by what they say.

const (
	// auditIntro: what the input audit and consistency section says it checks.
	auditIntro = "Each run audits its own input: the shares the specification requires (rollbacks, " +
		"remote lines and payments, by-name lookups), counted by storbench. A verdict is " +
		"SKIP when the run had too few transactions to tell. The consistency conditions " +
		"are queries that must find no violating rows, run on the database after each " +
		"TPROC-C step of a study (user, memory, CPU and replication sweeps)."

	// ioLimitsV1Note: why series under cgroup v1 I/O limits may be faster than the volume they name.
	ioLimitsV1Note = "I/O limits under cgroup v1 are a PARTIAL EMULATION of slower storage: the kernel " +
		"throttles reads and direct or synchronous writes (WAL flushes, O_DIRECT), not " +
		"the buffered writes it writes back later (checkpoints, data file flushes), so " +
		"those series may be faster than the volume they name would be. cgroup v2 io.max " +
		"throttles writeback too."

	// unsteadyNote: what the unsteady mark means.
	unsteadyNote = " a run of this point had a timed window judged unsteady (its throughput drifted " +
		"or swung past the limits of docs/steadiness.md): the figure is a mean over a " +
		"changing rate, from which the findings name no winner; each run's chart under " +
		"Second by second says why."

	// timelineIntro: what the second-by-second charts show.
	timelineIntro = "Pick a run. Throughput is storbench's client count per second (× 60 for a " +
		"per-minute rate); disk figures are /proc/diskstats per sampling interval (IOPS, " +
		"MB/s = 10^6 bytes, average ms per I/O); p99 is the per-I/O block-layer " +
		"percentile of each interval where it was traced (bpftrace). T = 0 is the start " +
		"of the timed window; each throughput chart says whether its window was steady " +
		"(docs/steadiness.md)."

	// profilesIntro: what the storage profiles' figures are.
	profilesIntro = "fio's own figures per point: IOPS and MB/s (10^6 bytes) over the point's " +
		"runtime, and completion latency per I/O (mean, and fio's 99th percentile of " +
		"reads and writes, the higher of the two). B as % of A compares each " +
		"configuration with the first; for latency, below 100% is better."

	// backupIntro: what a backup/restore cycle's figures are.
	backupIntro = "Each cycle backs the database up and restores it. Seconds and MB/s (10^6 bytes) " +
		"are storbench's timing of the whole transfer and the bytes it produced; " +
		"throughput over time is the growth of the destination each second; disk figures " +
		"are /proc/diskstats."

	// consolidationIntro: what a consolidation's figures are.
	consolidationIntro = "Several instances share the target's storage. NOPM is each OLTP instance's " +
		"database counter over the common timed window; the shared disk is " +
		"/proc/diskstats (average per I/O each interval); shaded spans are the noisy " +
		"instances' backups."

	// openLoopIntro: why an open-loop run's response times differ from closed-loop users'.
	openLoopIntro = "Runs with a rate offer transactions whether or not the database keeps up, so " +
		"their response times include the wait of a transaction that arrived while the " +
		"users were busy (closed-loop users would have waited before asking, and hidden " +
		"it)."

	// sweepIntro: what a sweep's table and charts show; %s is where its throughput figures come from.
	sweepIntro = "NOPM and TPM over each step's timed window (%s; the database's counters are " +
		"HammerDB's view); the table also gives storbench's own client count. New-Order " +
		"response time as the client measured it; the data disk's average time per I/O " +
		"(/proc/diskstats: I/O time ÷ I/Os, an average, not a percentile), and the " +
		"per-I/O 99th percentile where storbench traced the block layer (bpftrace); CPU " +
		"shares of all CPUs from /proc/stat on the database's host."

	// shortWindowNote: what the short-window mark (%s) means, for windows under %s.
	shortWindowNote = "%s timed window under %s: databases publish their transaction counters late (a " +
		"PostgreSQL backend at most once a second), so a database TPM over so short a " +
		"window can be tens of per cent off; TPM (client) is exact, and NOPM (database) " +
		"is read from the data (sum of d_next_o_id), not from a counter."
)
