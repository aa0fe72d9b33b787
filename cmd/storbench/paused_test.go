package main

import (
	"syscall"
	"testing"
	"time"

	"github.com/storbench/storbench/internal/testsupport/pgtest"
)

// TestRunServerPausedAtWindowEnd pauses every process of the server (SIGSTOP, as a
// hung storage or a frozen VM would) before the timed window's end and resumes it
// only after the run: the run waits for the server as long as docs/reliability.md
// says (30 s), then writes what it measured and exits 1 with one line saying that the
// server stopped answering (it waited ~61 s and said "timeout: context deadline
// exceeded").
func TestRunServerPausedAtWindowEnd(t *testing.T) {
	if testing.Short() {
		t.Skip("builds storbench and runs it against PostgreSQL")
	}
	t.Parallel() // its own servers and files; its bound (30 s + 10 s) is loose enough for the package's load
	// Both modes: a procedures-mode call ends by closing its socket, a sql-mode one
	// through pgx's cancellation.
	for _, mode := range []string{"procedures", "sql"} {
		t.Run(mode, func(t *testing.T) {
			t.Parallel()
			srv := pgtest.Start(t)
			run := startTimedRun(t, srv.DSN("tpcc"), 5*time.Second, "--mode", mode)
			time.Sleep(2 * time.Second)
			paused := []int{srv.PID()}
			for pid := range processes() {
				if parent(pid) == srv.PID() {
					paused = append(paused, pid)
				}
			}
			signalAll(t, paused, syscall.SIGSTOP)
			defer signalAll(t, paused, syscall.SIGCONT)
			if late := run.wait(t, 90*time.Second); late > 40*time.Second {
				t.Errorf("run ended %v after its window's end, want within the documented 30 s wait and a few seconds", late)
			}
			run.result(t, "stopped answering")
		})
	}
}

func signalAll(t *testing.T, pids []int, sig syscall.Signal) {
	t.Helper()
	for _, p := range pids {
		if err := syscall.Kill(p, sig); err != nil {
			t.Errorf("signal %d: %v", p, err)
		}
	}
}
