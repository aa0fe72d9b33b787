package netlab

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"golang.org/x/crypto/ssh"
	"golang.org/x/crypto/ssh/knownhosts"

	"github.com/storbench/storbench/internal/instance/postgres/pgserver"
)

// TestLab builds 3 hosts with every service, reaches each from the controller the
// ways the multi-host study does (PostgreSQL's protocol, node_exporter over HTTP, SSH
// with known_hosts checking), then checks teardown leaves nothing behind.
func TestLab(t *testing.T) {
	var namespaces []NetNS
	var pids []int
	t.Run("lab", func(t *testing.T) {
		start := time.Now()
		lab := New(t, 3, Options{PostgreSQL: true, NodeExporter: true, SSH: []int{1}})
		t.Logf("3 hosts up in %v", time.Since(start).Round(time.Millisecond))
		namespaces = append(namespaces, lab.Controller.Namespace)
		for _, h := range lab.Hosts {
			namespaces = append(namespaces, h.Namespace)
		}
		t.Cleanup(func() {
			// Registered after New's: runs before the teardown, while all still runs.
			for _, ns := range namespaces {
				pids = append(pids, pidsIn(ns)...)
			}
		})
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()

		t.Run("no lab address outside the lab", func(t *testing.T) {
			out, err := exec.Command("ip", "-o", "addr").CombinedOutput()
			if err != nil {
				t.Fatalf("ip -o addr: %v: %s", err, out)
			}
			if strings.Contains(string(out), "198.18.") {
				t.Errorf("this process's namespace has a lab address:\n%s", out)
			}
		})
		t.Run("psql in the controller", func(t *testing.T) {
			bin, err := pgserver.BinDir()
			if err != nil {
				t.Fatal(err)
			}
			for _, h := range lab.Hosts {
				out, err := lab.Controller.Namespace.Command(ctx, filepath.Join(bin, "psql"),
					"-X", "-A", "-t", "-c", "SELECT inet_server_addr()", h.DSN).CombinedOutput()
				if got := strings.TrimSpace(string(out)); err != nil || got != h.Addr {
					t.Errorf("%s: psql: %v: %q; want %s", h.Name, err, got, h.Addr)
				}
			}
		})
		t.Run("pgx dialled from the controller", func(t *testing.T) {
			for _, h := range lab.Hosts {
				cfg, err := pgx.ParseConfig(h.DSN)
				if err != nil {
					t.Fatal(err)
				}
				cfg.DialFunc = lab.Controller.Namespace.DialContext
				conn, err := pgx.ConnectConfig(ctx, cfg)
				if err != nil {
					t.Fatalf("%s: %v", h.Name, err)
				}
				var client, db string
				err = conn.QueryRow(ctx, "SELECT host(inet_client_addr()), current_database()").Scan(&client, &db)
				conn.Close(ctx)
				if err != nil || client != ControllerAddr || db != PGDatabase {
					t.Errorf("%s: client %q, database %q, %v; want %s, %s", h.Name, client, db, err, ControllerAddr, PGDatabase)
				}
			}
		})
		t.Run("node_exporter", func(t *testing.T) {
			client := &http.Client{Transport: &http.Transport{DialContext: lab.Controller.Namespace.DialContext}}
			defer client.CloseIdleConnections()
			for _, h := range lab.Hosts {
				resp, err := client.Get(h.MetricsURL)
				if err != nil {
					t.Fatalf("%s: %v", h.Name, err)
				}
				body, err := io.ReadAll(resp.Body)
				resp.Body.Close()
				if err != nil || resp.StatusCode != http.StatusOK || !strings.Contains(string(body), "node_cpu_seconds_total") {
					t.Errorf("%s: GET %s: %s, %v, %d bytes without node_cpu_seconds_total", h.Name, h.MetricsURL, resp.Status, err, len(body))
				}
			}
		})
		t.Run("ssh", func(t *testing.T) {
			for i, h := range lab.Hosts {
				if (h.SSH != nil) != (i == 1) {
					t.Fatalf("%s: SSH %+v; want an sshd on host2 only", h.Name, h.SSH)
				}
			}
			h := lab.Hosts[1]
			client, err := dialSSH(ctx, lab, h.SSH, h.SSH.KnownHostsFile)
			if err != nil {
				t.Fatal(err)
			}
			defer client.Close()
			session, err := client.NewSession()
			if err != nil {
				t.Fatal(err)
			}
			defer session.Close()
			out, err := session.Output("readlink /proc/self/ns/net")
			if want := netNSID(t, h.Namespace); err != nil || strings.TrimSpace(string(out)) != want {
				t.Errorf("the command's network namespace: %q, %v; want host2's, %s", out, err, want)
			}
		})
		t.Run("OpenSSH client reads the files", func(t *testing.T) {
			if _, err := exec.LookPath("ssh"); err != nil {
				t.Skip("no ssh client (openssh-client)")
			}
			h := lab.Hosts[1]
			out, err := lab.Controller.Namespace.Command(ctx, "ssh", "-F", "none", "-i", h.SSH.KeyFile,
				"-o", "UserKnownHostsFile="+h.SSH.KnownHostsFile, "-o", "StrictHostKeyChecking=yes",
				"-o", "BatchMode=yes", h.SSH.User+"@"+h.Addr, "readlink /proc/self/ns/net").CombinedOutput()
			if want := netNSID(t, h.Namespace); err != nil || strings.TrimSpace(string(out)) != want {
				t.Errorf("ssh: %v: %q; want %s", err, out, want)
			}
		})
		t.Run("another host key is refused", func(t *testing.T) {
			h := lab.Hosts[1]
			other := filepath.Join(t.TempDir(), "known_hosts")
			key, err := writeKey(filepath.Join(t.TempDir(), "key"))
			if err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(other, []byte(knownhosts.Line([]string{h.Addr}, key)+"\n"), 0o600); err != nil {
				t.Fatal(err)
			}
			client, err := dialSSH(ctx, lab, h.SSH, other)
			if err == nil {
				client.Close()
				t.Fatal("connected to an sshd whose key known_hosts does not hold")
			}
			if keyErr := (*knownhosts.KeyError)(nil); !errors.As(err, &keyErr) || len(keyErr.Want) == 0 {
				t.Errorf("%v; want a knownhosts.KeyError for a mismatched key", err)
			}
		})
	})
	for _, ns := range namespaces {
		if _, err := os.Stat(ns.Path()); err == nil {
			t.Errorf("namespace %s is left", ns)
		}
	}
	for _, pid := range pids {
		if running(pid) {
			t.Errorf("process %d of the lab is left", pid)
		}
	}
}

// running tells whether process pid runs. A zombie has ended: a daemonised server's
// parent is init, which reaps it when it gets round to it.
func running(pid int) bool {
	stat, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return false
	}
	_, rest, _ := bytes.Cut(stat, []byte(") ")) // the state follows "pid (comm) "
	return len(rest) > 0 && rest[0] != 'Z'
}

// dialSSH connects from the controller to target, checking its key against the
// known_hosts file knownHostsFile.
func dialSSH(ctx context.Context, lab *Lab, target *SSH, knownHostsFile string) (*ssh.Client, error) {
	pemKey, err := os.ReadFile(target.KeyFile)
	if err != nil {
		return nil, err
	}
	signer, err := ssh.ParsePrivateKey(pemKey)
	if err != nil {
		return nil, err
	}
	hostKeys, err := knownhosts.New(knownHostsFile)
	if err != nil {
		return nil, err
	}
	conn, err := lab.Controller.Namespace.DialContext(ctx, "tcp", target.Addr)
	if err != nil {
		return nil, err
	}
	c, chans, reqs, err := ssh.NewClientConn(conn, target.Addr, &ssh.ClientConfig{
		User:            target.User,
		Auth:            []ssh.AuthMethod{ssh.PublicKeys(signer)},
		HostKeyCallback: hostKeys,
	})
	if err != nil {
		conn.Close()
		return nil, err
	}
	return ssh.NewClient(c, chans, reqs), nil
}

// netNSID is how /proc/PID/ns/net reads for a process in ns.
func netNSID(t *testing.T, ns NetNS) string {
	st, err := os.Stat(ns.Path())
	if err != nil {
		t.Fatal(err)
	}
	return fmt.Sprintf("net:[%d]", st.Sys().(*syscall.Stat_t).Ino)
}

// TestNewRemovesKilledTestsLab leaves a namespace as a killed test would (named for a
// process that has ended, a process still inside) and checks New removes both.
func TestNewRemovesKilledTestsLab(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("netlab needs root to create network namespaces")
	}
	ended := exec.Command("true")
	if err := ended.Run(); err != nil {
		t.Fatal(err)
	}
	stale := NetNS(fmt.Sprintf("%s%d-1-ctl", namePrefix, ended.Process.Pid))
	if out, err := exec.Command("ip", "netns", "add", string(stale)).CombinedOutput(); err != nil {
		t.Skipf("cannot create a network namespace: %v: %s", err, out)
	}
	t.Cleanup(func() {
		if _, err := os.Stat(stale.Path()); err == nil {
			killAll(stale)
			ip("netns", "delete", string(stale))
		}
	})
	left := stale.Command(context.Background(), "sleep", "600")
	if err := left.Start(); err != nil {
		t.Fatal(err)
	}
	exited := make(chan error, 1)
	go func() { exited <- left.Wait() }()
	// ip enters the namespace after it starts: wait until sleep is inside.
	for !slices.Contains(pidsIn(stale), left.Process.Pid) {
		select {
		case err := <-exited:
			t.Fatalf("sleep in %s: %v", stale, err)
		case <-time.After(10 * time.Millisecond):
		}
	}

	New(t, 1, Options{})
	if _, err := os.Stat(stale.Path()); err == nil {
		t.Errorf("namespace %s of an ended process is still there", stale)
	}
	select {
	case <-exited:
	case <-time.After(10 * time.Second):
		t.Errorf("the process left in %s still runs", stale)
	}
}

func TestCreatorPID(t *testing.T) {
	for name, want := range map[string]int{
		"sbl1234-2-ctl": 1234,
		"sbl99-10-h3":   99,
		"sbl-1-ctl":     0,
		"sblx-1-ctl":    0,
		"sbl1234":       0,
		"other12-1-ctl": 0,
	} {
		if got, ok := creatorPID(name); got != want || ok != (want != 0) {
			t.Errorf("creatorPID(%q) = %d, %v; want %d", name, got, ok, want)
		}
	}
}

// TestTeardownWaitsForSSHSession: an sshd's session process ends on its own once its
// client has gone, on a busy machine some time after the client's Close returned.
// The teardown waits for it instead of finding it still running. The session is held
// stopped for 2 s after the Close here, as a busy machine may hold it.
func TestTeardownWaitsForSSHSession(t *testing.T) {
	lab := New(t, 1, Options{SSH: []int{0}})
	h := lab.Hosts[0]
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	client, err := dialSSH(ctx, lab, h.SSH, h.SSH.KnownHostsFile)
	if err != nil {
		t.Fatal(err)
	}
	session, err := client.NewSession()
	if err != nil {
		t.Fatal(err)
	}
	if err := session.Run("true"); err != nil {
		t.Fatal(err)
	}
	// Everything in the host's namespace but the listening sshd serves this connection.
	listener := lab.daemons[0].cmd.Process.Pid
	var served []int
	for _, pid := range pidsIn(h.Namespace) {
		if pid != listener {
			served = append(served, pid)
		}
	}
	if len(served) == 0 {
		t.Fatal("no sshd process serves the connection")
	}
	for _, pid := range served {
		if err := syscall.Kill(pid, syscall.SIGSTOP); err != nil {
			t.Fatal(err)
		}
	}
	client.Close()
	time.AfterFunc(2*time.Second, func() {
		for _, pid := range served {
			syscall.Kill(pid, syscall.SIGCONT)
		}
	})
}
