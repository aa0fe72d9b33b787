package metrics

import (
	"bytes"
	"strings"

	"github.com/storbench/storbench/internal/procrole"
)

// Block I/O by issuing task: what iolatency.bt counts at block:block_bio_queue when
// asked (StartIOLatency with byTask), for the process collector to sum by role.
//
// /proc/PID/io write_bytes cannot be used for that: on Linux 6.18 with ext4 it counts
// a whole page-cache folio each time a clean one is dirtied, so a backend rewriting
// the current WAL page at every commit was credited 266 MB/s while the disk wrote
// 46 MB/s. The block layer counts what reaches the disk, once, in the context of the
// task that submits it. Measured on this kernel: a direct write and an fsync's
// writeback count under the writing process; background writeback under the flusher
// kworker (kworker/uN:M), whoever dirtied the pages; the journal under jbd2; and the
// sums equal /proc/diskstats to the byte.

// taskIOKey is one task's I/O of one kind on one device, as the tracer prints it.
type taskIOKey struct {
	dev            uint32
	tid, pid, ppid int
	comm           string
	write          bool // else a read (discards and flushes are not counted)
}

// blockTaskIO is what each task asked of the sampled disks since the previous one
// delivered, over seconds (the tracer's own span: an interval whose chunk came late
// counts in the next one).
type blockTaskIO struct {
	bytes   map[taskIOKey]uint64
	seconds float64
}

// Operations as iolatency.bt numbers them.
const (
	opRead  = 1
	opWrite = 2
)

// parseTaskLine parses an entry of @b as bpftrace prints it,
// "@b[7340033, 4604, 4604, 4590, dd, 2]: 4096" (device, thread, process, parent,
// name, operation; cumulative sectors). A name may hold ", ": the operation is after
// the last.
func parseTaskLine(line []byte) (key taskIOKey, sectors uint64, ok bool) {
	rest, ok := bytes.CutPrefix(line, []byte("@b["))
	if !ok {
		return key, 0, false
	}
	var ids [4]uint64
	for i := range ids {
		if ids[i], rest, ok = cutUint(rest); !ok {
			return key, 0, false
		}
		if rest, ok = bytes.CutPrefix(rest, []byte(", ")); !ok {
			return key, 0, false
		}
	}
	end := bytes.LastIndex(rest, []byte("]: "))
	if end < 0 || ids[0] > 1<<32-1 {
		return key, 0, false
	}
	sectors, tail, ok := cutUint(rest[end+3:])
	sep := bytes.LastIndex(rest[:end], []byte(", "))
	if !ok || len(bytes.TrimSpace(tail)) != 0 || sep < 0 {
		return key, 0, false
	}
	op, tail, ok := cutUint(rest[sep+2 : end])
	if !ok || len(tail) != 0 || op != opRead && op != opWrite {
		return key, 0, false
	}
	key = taskIOKey{dev: uint32(ids[0]), tid: int(ids[1]), pid: int(ids[2]), ppid: int(ids[3]), comm: string(rest[:sep]), write: op == opWrite}
	return key, sectors, true
}

// hostRoles are the rows of the I/O that no server's task issued, in the order
// reports show them.
var hostRoles = []string{procrole.KernelWriteback, procrole.Journal, procrole.KernelOther, procrole.OtherProcesses}

// kthreadd is the parent of every kernel thread (and a kernel thread itself).
const kthreadd = 2

// hostRole is the row a task of no server counts under.
func hostRole(k taskIOKey) string {
	switch {
	case k.ppid != kthreadd && k.pid != kthreadd:
		return procrole.OtherProcesses
	case strings.HasPrefix(k.comm, "kworker/"):
		return procrole.KernelWriteback
	case strings.HasPrefix(k.comm, "jbd2/"):
		return procrole.Journal
	}
	return procrole.KernelOther
}
