package metrics

import (
	"os/exec"
	"testing"
	"time"

	"github.com/storbench/storbench/internal/blockdev"
	"github.com/storbench/storbench/internal/procrole"
)

// The task lines as bpftrace 0.17 prints @b; a name may hold ", " and "]: ".
func TestParseTaskLine(t *testing.T) {
	for line, want := range map[string]*struct {
		key     taskIOKey
		sectors uint64
	}{
		"@b[7340033, 4604, 4604, 4590, dd, 2]: 4096":       {taskIOKey{7340033, 4604, 4604, 4590, "dd", true}, 4096},
		"@b[7340033, 58, 58, 2, kworker/u8:2, 2]: 8":       {taskIOKey{7340033, 58, 58, 2, "kworker/u8:2", true}, 8},
		"@b[7340033, 7001, 6990, 1, odd, name]: x, 1]: 16": {taskIOKey{7340033, 7001, 6990, 1, "odd, name]: x", false}, 16},
		"@b[266338304, 4368, 4368, 2, jbd2/vda1-8, 2]: 96": {taskIOKey{266338304, 4368, 4368, 2, "jbd2/vda1-8", true}, 96},
		"@b[7340033, 4604, 4604, 4590, dd, 3]: 4096":       nil, // not an operation the script counts
		"@b[7340033, 4604, 4604, dd, 2]: 4096":             nil, // a field missing
		"@b[7340033, 4604, 4604, 4590, dd, 2]: 4096 x":     nil,
		"@b[99999999999, 4604, 4604, 4590, dd, 2]: 4096":   nil, // no dev_t
		"@h[7340033, 251]: 1":                              nil,
		"@b[7340033, 4604, 4604, 4590, dd, 2]:":            nil,
		"Attaching 4 probes...":                            nil,
	} {
		key, sectors, ok := parseTaskLine([]byte(line))
		switch {
		case want == nil && ok:
			t.Errorf("parseTaskLine(%q) = %+v, %d: want no entry", line, key, sectors)
		case want != nil && (!ok || key != want.key || sectors != want.sectors):
			t.Errorf("parseTaskLine(%q) = %+v, %d, %v: want %+v, %d", line, key, sectors, ok, want.key, want.sectors)
		}
	}
}

// Rows of no server: kernel threads (children of kthreadd) by their names, the rest
// other processes, whatever they call themselves.
func TestHostRole(t *testing.T) {
	for _, c := range []struct {
		key  taskIOKey
		want string
	}{
		{taskIOKey{comm: "kworker/u8:2", pid: 5694, ppid: kthreadd}, procrole.KernelWriteback},
		{taskIOKey{comm: "jbd2/loop1-8", pid: 4368, ppid: kthreadd}, procrole.Journal},
		{taskIOKey{comm: "xfsaild/sda1", pid: 900, ppid: kthreadd}, procrole.KernelOther},
		{taskIOKey{comm: "kworker/u8:2", pid: 7000, ppid: 1}, procrole.OtherProcesses},
		{taskIOKey{comm: "fio", pid: 8858, ppid: 8844}, procrole.OtherProcesses},
	} {
		if got := hostRole(c.key); got != c.want {
			t.Errorf("hostRole(%+v) = %s, want %s", c.key, got, c.want)
		}
	}
}

// The tracer's task counts are cumulative: Collect hands the process collector each
// task's bytes since its previous delivery, over its own span; a chunk that is
// late delivers nothing, and the next one the bytes of both intervals.
func TestTracerTaskDeltas(t *testing.T) {
	l := newIOLatency([]blockdev.BlockDevice{{Name: "loop1", Major: 7, Minor: 1}}, 0)
	l.tasks, l.baseTasks, l.pendingTasks, l.keysMax = map[taskIOKey]uint64{}, map[taskIOKey]uint64{}, map[taskIOKey]uint64{}, 3
	// No bpftrace: the chunks are fed by hand, and a process that ignores SIGCONT
	// takes the requests for them; Collect does not wait for one.
	l.cmd = exec.Command("sleep", "60")
	if err := l.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = l.cmd.Process.Kill(); _ = l.cmd.Wait() })
	close(l.exited)
	now := time.Unix(1000, 0)
	l.clock = clock{func() time.Time { return now }}
	chunk := func(lines ...string) {
		for _, line := range append(lines, "-- 1") {
			l.stdoutLine([]byte(line))
		}
	}
	dd := taskIOKey{7340033, 4604, 4604, 4590, "dd", true}
	chunk("@b[7340033, 4604, 4604, 4590, dd, 2]: 8", "@b[266338304, 9, 9, 2, other disk, 2]: 8")
	if err := l.Collect(t.Context(), &Sample{}); err != nil {
		t.Fatal(err)
	}
	chunk("@b[7340033, 4604, 4604, 4590, dd, 2]: 24", "@b[7340033, 58, 58, 2, kworker/u8:2, 2]: 16")
	now = now.Add(time.Second)
	var s Sample
	if err := l.Collect(t.Context(), &s); err != nil {
		t.Fatal(err)
	}
	if s.blockIO == nil || s.blockIO.seconds != 1 || s.blockIO.bytes[dd] != 16*SectorBytes || len(s.blockIO.bytes) != 2 {
		t.Fatalf("second interval: %+v, want dd's 16 sectors and the kworker's over 1 s", s.blockIO)
	}
	now = now.Add(time.Second)
	s = Sample{}
	if err := l.Collect(t.Context(), &s); err != nil || s.blockIO != nil {
		t.Fatalf("an interval without a chunk delivered %+v (%v)", s.blockIO, err)
	}
	if full := l.TasksFull(); full != "" {
		t.Errorf("2 of 3 keys: %s", full)
	}
	chunk("@b[7340033, 4604, 4604, 4590, dd, 2]: 40", "@b[7340033, 58, 58, 2, kworker/u8:2, 2]: 16", "@b[7340033, 70, 70, 1, fio, 1]: 8")
	now = now.Add(time.Second)
	s = Sample{}
	if err := l.Collect(t.Context(), &s); err != nil {
		t.Fatal(err)
	}
	if s.blockIO == nil || s.blockIO.seconds != 2 || s.blockIO.bytes[dd] != 16*SectorBytes || len(s.blockIO.bytes) != 2 {
		t.Errorf("after a late chunk: %+v, want dd's 16 sectors and fio's over 2 s", s.blockIO)
	}
	if l.TasksFull() == "" {
		t.Error("3 of 3 keys taken, and TasksFull says nothing")
	}
}

// The tracer's bytes by task go to the role of the server's task that issued them
// (seen now, or a child of the server's that came and went unseen: the clients'),
// and the rest to the rows of no server, so that all rows add up to what was traced.
func TestProcessesByBlock(t *testing.T) {
	root := delayAccountingOff(t)
	writeProc(t, root, 100, 1, "main", 0, "101 102 ")
	writeProc(t, root, 101, 100, "a backend", 0, "")
	writeProc(t, root, 102, 100, "b writer", 0, "")
	c, _, err := NewProcesses(root, []Server{{Roles: twoRoles{}, Main: 100}}, true)
	if err != nil {
		t.Fatal(err)
	}
	if err := c.Collect(t.Context(), &Sample{}); err != nil {
		t.Fatal(err)
	}
	s := Sample{blockIO: &blockTaskIO{seconds: 1, bytes: map[taskIOKey]uint64{
		{tid: 101, pid: 101, ppid: 100, comm: "postgres", write: true}:     1000,
		{tid: 101, pid: 101, ppid: 100, comm: "postgres"}:                  300,
		{tid: 102, pid: 102, ppid: 100, comm: "postgres", write: true}:     2000,
		{tid: 150, pid: 150, ppid: 100, comm: "postgres", write: true}:     40, // a child never seen
		{tid: 5694, pid: 5694, ppid: 2, comm: "kworker/u8:2", write: true}: 500,
		{tid: 4368, pid: 4368, ppid: 2, comm: "jbd2/loop1-8", write: true}: 60,
		{tid: 7000, pid: 7000, ppid: 1, comm: "fio", write: true}:          7,
	}}}
	if err := c.Collect(t.Context(), &s); err != nil {
		t.Fatal(err)
	}
	want := map[string]roleCounters{"a": {read: 300, write: 1040}, "b": {write: 2000}, procrole.KernelWriteback: {write: 500},
		procrole.Journal: {write: 60}, procrole.KernelOther: {}, procrole.OtherProcesses: {write: 7}}
	if len(s.ProcessIO) != len(want) {
		t.Fatalf("rows %+v, want %d", s.ProcessIO, len(want))
	}
	for _, r := range s.ProcessIO {
		if w, ok := want[r.Role]; !ok || r.delta != w || r.Source != sourceBlock || r.WriteMBps == nil {
			t.Errorf("%s: %+v (source %s), want %+v from the block layer", r.Role, r.delta, r.Source, w)
		}
	}
}
