package main

import (
	"encoding/json"
	"os"
	osexec "os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/storbench/storbench/internal/instance/localserver"
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
			runServerPausedAtWindowEnd(t, mode)
		})
	}
}

func runServerPausedAtWindowEnd(t *testing.T, mode string) {
	srv := pgtest.Start(t)
	dsn := srv.DSN("tpcc")
	if code, out, errOut := storbench(t, "build", "--dsn", dsn, "--warehouses", "1"); code != 0 {
		t.Fatalf("build: exit %d\n%s%s", code, out, errOut)
	}
	jsonPath := filepath.Join(t.TempDir(), "run.json")
	const duration = 5 * time.Second
	cmd := osexec.Command(binary(t), "run", "--dsn", dsn, "--users", "2", "--mode", mode, "--ramp", "1s", "--duration", duration.String(), "--json", jsonPath)
	var out, errOut localserver.SyncBuffer
	cmd.Stdout, cmd.Stderr = &out, &errOut
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	for !strings.Contains(out.String(), "timed") {
		select {
		case err := <-done:
			t.Fatalf("run ended before its window: %v\n%s%s", err, out.String(), errOut.String())
		case <-time.After(50 * time.Millisecond):
		}
	}
	windowEnd := time.Now().Add(duration - time.Second)
	time.Sleep(2 * time.Second)
	paused := serverProcesses(t, srv.PID())
	signalAll(t, paused, syscall.SIGSTOP)
	defer signalAll(t, paused, syscall.SIGCONT)
	select {
	case <-done:
	case <-time.After(time.Until(windowEnd.Add(90 * time.Second))):
		cmd.Process.Kill()
		<-done
		t.Fatalf("run still going 90 s after its window's end\n%s%s", out.String(), errOut.String())
	}
	late := time.Since(windowEnd)
	stderr := errOut.String()
	t.Logf("exit %d, %v after the window's end: %s", cmd.ProcessState.ExitCode(), late.Round(100*time.Millisecond), strings.TrimSpace(stderr))
	if late > 40*time.Second {
		t.Errorf("run ended %v after its window's end, want within the documented 30 s wait and a few seconds", late)
	}
	if code := cmd.ProcessState.ExitCode(); code != 1 || strings.Count(strings.TrimRight(stderr, "\n"), "\n") != 0 ||
		!strings.Contains(stderr, "stopped answering") || !strings.Contains(stderr, jsonPath) {
		t.Errorf("exit %d, want 1 with one line saying the server stopped answering and where the result is:\n%s%s", code, out.String(), stderr)
	}
	var res struct {
		TPMClient   float64 `json:"tpm_client"`
		Unavailable bool    `json:"db_unavailable"`
	}
	b, err := os.ReadFile(jsonPath)
	if err != nil || json.Unmarshal(b, &res) != nil {
		t.Fatalf("no result written: %v\n%s%s", err, out.String(), stderr)
	}
	if res.TPMClient <= 0 || !res.Unavailable {
		t.Errorf("the result should have the client's TPM and the database's figures unavailable: TPM %.0f, unavailable %v", res.TPMClient, res.Unavailable)
	}
}

// serverProcesses are the postmaster pid and its children, from /proc.
func serverProcesses(t *testing.T, pid int) []int {
	t.Helper()
	pids := []int{pid}
	entries, err := os.ReadDir("/proc")
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		child, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		b, err := os.ReadFile(filepath.Join("/proc", e.Name(), "stat"))
		if err != nil {
			continue
		}
		// The fields after the command (which may hold blanks) start with state, ppid.
		fields := strings.Fields(string(b[strings.LastIndexByte(string(b), ')')+1:]))
		if len(fields) > 1 && fields[1] == strconv.Itoa(pid) {
			pids = append(pids, child)
		}
	}
	return pids
}

func signalAll(t *testing.T, pids []int, sig syscall.Signal) {
	t.Helper()
	for _, p := range pids {
		if err := syscall.Kill(p, sig); err != nil {
			t.Errorf("signal %d: %v", p, err)
		}
	}
}
