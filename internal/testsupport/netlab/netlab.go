// Package netlab gives integration tests a small network of "hosts" on this machine:
// Linux network namespaces joined by a bridge, each host running its own PostgreSQL,
// node_exporter and sshd on its own address, and a controller namespace from which
// the program under test reaches them over the network, as it would reach real hosts.
//
// Addresses come from 198.18.0.0/15 (reserved for network benchmark tests) and exist
// only inside the namespaces a lab creates: this process's namespace gets none, so a
// test passes only if the program really talks through the lab's network. It needs
// root and iproute2; New skips the test without them.
package netlab

import (
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"maps"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/storbench/storbench/internal/childproc"
	"github.com/storbench/storbench/internal/instance/localserver"
	"github.com/storbench/storbench/internal/instance/postgres/pgserver"
)

const (
	// namePrefix starts every namespace a lab creates, followed by the creating
	// process's pid: a later New recognises the namespaces of a killed test by it.
	namePrefix = "sbl"
	netnsDir   = "/run/netns" // where `ip netns add` names namespaces
	subnet     = "198.18.0.0/24"
	// ControllerAddr is the controller namespace's address, on the bridge.
	ControllerAddr = "198.18.0.1"
	// PGUser is the PostgreSQL role (a superuser, with a password) host DSNs log in as.
	PGUser = "storbench"
	// PGDatabase is the empty database host DSNs name.
	PGDatabase = "tpcc"
	// SSHUser is the user the sshd lets in with the lab's key.
	SSHUser = "root"
	// stopGrace is how long a daemon has to stop after SIGTERM before SIGKILL.
	stopGrace = 5 * time.Second
	// leftGrace is how long the teardown waits for what the daemons started to end on
	// its own once they have stopped, before killing it as left running.
	leftGrace = 10 * time.Second
)

// labSeq tells apart the labs one test process creates.
var labSeq atomic.Int64

// Options choose what runs on every host.
type Options struct {
	// PostgreSQL: a server on ADDR:5432 (Host.PG, Host.DSN).
	PostgreSQL bool
	// PGSettings are extra postgresql.conf parameters, over the lab's small defaults.
	PGSettings map[string]string
	// NodeExporter: node_exporter on ADDR:9100 (Host.MetricsURL).
	NodeExporter bool
	// SSH lists the hosts (indexes into Lab.Hosts) that run an sshd on ADDR:22.
	SSH []int
}

// NetNS is a network namespace's name, as `ip netns` knows it.
type NetNS string

// Path is the namespace's file, which setns(2) and nsenter take.
func (n NetNS) Path() string { return filepath.Join(netnsDir, string(n)) }

// Command is childproc.Command for a program run inside the namespace (through `ip
// netns exec`, which execs it: the process is the program): its own process group,
// SIGTERM to the group when ctx ends, SIGKILL to the program 5 s later. Whatever it
// leaves running fails the test at teardown.
func (n NetNS) Command(ctx context.Context, name string, args ...string) *exec.Cmd {
	return childproc.Command(ctx, stopGrace, "ip", append([]string{"netns", "exec", string(n), name}, args...)...)
}

// DialContext opens a connection from inside the namespace; addr must hold an IP
// address. Its signature is net.Dialer.DialContext's: give it to pgx (DialFunc),
// http.Transport or ssh.NewClientConn to talk from the namespace within this process.
func (n NetNS) DialContext(ctx context.Context, network, addr string) (net.Conn, error) {
	return localserver.NetNSDialer(n.Path())(ctx, network, addr)
}

// Node is a namespace of the lab with its address.
type Node struct {
	Name      string // "controller", "host1", "host2"…
	Namespace NetNS
	Addr      string // IPv4 address on the lab's bridge
}

// Host is a node with the services Options asked for (zero values otherwise).
type Host struct {
	Node
	PG         *pgserver.Server // its own admin access (user postgres, from the host)
	DSN        string           // postgres://storbench:PASSWORD@ADDR:5432/tpcc
	MetricsURL string           // http://ADDR:9100/metrics
	SSH        *SSH
}

// SSH is how to reach a host's sshd.
type SSH struct {
	Addr           string // ADDR:22
	User           string
	KeyFile        string // the user's private key (OpenSSH format, no passphrase)
	KnownHostsFile string // OpenSSH known_hosts naming every sshd of the lab
}

// Lab is a running network; New's test tears it down when it ends.
type Lab struct {
	Controller Node
	Hosts      []*Host
	// UserKeyFile and KnownHostsFile serve every sshd host ("" without any).
	UserKeyFile    string
	KnownHostsFile string

	t          testing.TB
	dir        string
	prefix     string  // of the lab's namespace names
	namespaces []NetNS // in creation order
	stop       context.CancelFunc

	mu      sync.Mutex // guards what the hosts' setup goroutines add
	servers []*pgserver.Server
	daemons []*daemon
}

// daemon is a long-running program of the lab (node_exporter, sshd).
type daemon struct {
	name string
	log  string
	cmd  *exec.Cmd
	done chan struct{} // closed when it has exited
}

// New builds a lab of hosts hosts for the test: a controller namespace holding a
// bridge at ControllerAddr/24, and host i (0-based) in its own namespace at
// 198.18.0.(11+i)/24, linked to the bridge by a veth pair, with the services opts
// asks for. It first removes what killed tests left (namespaces whose creating
// process is gone). It skips the test when namespaces cannot be created here.
func New(t testing.TB, hosts int, opts Options) *Lab {
	t.Helper()
	if testing.Short() {
		t.Skip("integration test: builds a network of namespaces")
	}
	if os.Geteuid() != 0 {
		t.Skip("netlab needs root to create network namespaces")
	}
	if _, err := exec.LookPath("ip"); err != nil {
		t.Skip("netlab needs iproute2's ip to create network namespaces")
	}
	if hosts < 1 || hosts > 200 {
		t.Fatalf("netlab: %d hosts: want 1 to 200", hosts)
	}
	removeStale(t)

	prefix := fmt.Sprintf("%s%d-%d-", namePrefix, os.Getpid(), labSeq.Add(1))
	ctx, stop := context.WithCancel(context.Background())
	l := &Lab{
		Controller: Node{Name: "controller", Namespace: NetNS(prefix + "ctl"), Addr: ControllerAddr},
		t:          t,
		dir:        t.TempDir(),
		prefix:     prefix,
		stop:       stop,
	}
	// The first namespace is the probe: failing here means this machine does not let
	// us (a container without CAP_SYS_ADMIN…), which is a reason to skip, not a bug.
	if out, err := exec.Command("ip", "netns", "add", string(l.Controller.Namespace)).CombinedOutput(); err != nil {
		stop()
		t.Skipf("netlab: cannot create a network namespace: %v: %s", err, strings.TrimSpace(string(out)))
	}
	l.namespaces = append(l.namespaces, l.Controller.Namespace)
	t.Cleanup(l.teardown)

	if err := l.buildNetwork(hosts); err != nil {
		t.Fatalf("netlab: %v", err)
	}
	if err := l.startServices(ctx, opts); err != nil {
		t.Fatalf("netlab: %v", err)
	}
	return l
}

// buildNetwork creates the bridge in the controller and one namespace per host. Every
// interface is created inside a lab namespace, never in ours, so its name need not
// be unique on the machine and nothing of the lab ever shows up here.
func (l *Lab) buildNetwork(hosts int) error {
	ctl := string(l.Controller.Namespace)
	cmds := [][]string{
		{"-n", ctl, "link", "set", "lo", "up"},
		{"-n", ctl, "link", "add", "br0", "type", "bridge"},
		{"-n", ctl, "addr", "add", ControllerAddr + "/24", "dev", "br0"},
		{"-n", ctl, "link", "set", "br0", "up"},
	}
	if err := ipAll(cmds); err != nil {
		return err
	}
	for i := range hosts {
		h := &Host{Node: Node{
			Name:      fmt.Sprintf("host%d", i+1),
			Namespace: NetNS(fmt.Sprintf("%sh%d", l.prefix, i+1)),
			Addr:      fmt.Sprintf("198.18.0.%d", 11+i),
		}}
		if err := ip("netns", "add", string(h.Namespace)); err != nil {
			return err
		}
		l.namespaces = append(l.namespaces, h.Namespace)
		l.Hosts = append(l.Hosts, h)
		ns, veth := string(h.Namespace), fmt.Sprintf("veth%d", i+1)
		err := ipAll([][]string{
			{"-n", ns, "link", "set", "lo", "up"},
			{"-n", ctl, "link", "add", veth, "type", "veth", "peer", "name", "eth0", "netns", ns},
			{"-n", ctl, "link", "set", veth, "master", "br0", "up"},
			{"-n", ns, "addr", "add", h.Addr + "/24", "dev", "eth0"},
			{"-n", ns, "link", "set", "eth0", "up"},
		})
		if err != nil {
			return err
		}
	}
	return nil
}

// startServices starts every host's services, the hosts in parallel (initdb is the
// slow part).
func (l *Lab) startServices(ctx context.Context, opts Options) error {
	var sshKeys *sshKeys
	if len(opts.SSH) > 0 {
		var err error
		if sshKeys, err = l.writeSSHKeys(opts.SSH); err != nil {
			return err
		}
	}
	errs := make([]error, len(l.Hosts))
	var wg sync.WaitGroup
	for i, h := range l.Hosts {
		wg.Go(func() {
			dir := filepath.Join(l.dir, h.Name)
			if err := os.MkdirAll(dir, 0o755); err != nil {
				errs[i] = err
				return
			}
			if opts.PostgreSQL {
				if err := l.startPostgreSQL(ctx, h, dir, opts.PGSettings); err != nil {
					errs[i] = fmt.Errorf("%s: PostgreSQL: %w", h.Name, err)
					return
				}
			}
			if opts.NodeExporter {
				if err := l.startNodeExporter(ctx, h, dir); err != nil {
					errs[i] = fmt.Errorf("%s: node_exporter: %w", h.Name, err)
					return
				}
			}
			if hostKey := sshKeys.hostKeyFile(i); hostKey != "" {
				if err := l.startSSHD(ctx, h, dir, hostKey, sshKeys); err != nil {
					errs[i] = fmt.Errorf("%s: sshd: %w", h.Name, err)
				}
			}
		})
	}
	wg.Wait()
	return errors.Join(errs...)
}

// startPostgreSQL initialises and starts the host's server on ADDR:5432 as the postgres
// user inside the host's namespace, reachable from the lab's subnet with PGUser's
// password (scram), and creates PGDatabase.
func (l *Lab) startPostgreSQL(ctx context.Context, h *Host, dir string, extra map[string]string) error {
	// Small and quick to start; durability stays on (fsync) as in a real run.
	settings := map[string]string{"shared_buffers": "32MB", "max_connections": "50"}
	maps.Copy(settings, extra)
	s, err := pgserver.Init(ctx, pgserver.Options{
		Dir: filepath.Join(dir, "pgdata"), Port: 5432, Listen: h.Addr, NetNS: h.Namespace.Path(), Settings: settings,
	})
	if err != nil {
		return err
	}
	// The admin session pgserver opens comes from the host's own address; everyone
	// else on the lab's subnet logs in with a password.
	hba := fmt.Sprintf("\n# netlab\nhost all postgres %s/32 trust\nhost all all %s scram-sha-256\nhost replication all %s scram-sha-256\n",
		h.Addr, subnet, subnet)
	if err := localserver.AppendFile(filepath.Join(s.Dir, "pg_hba.conf"), hba); err != nil {
		return err
	}
	if err := s.Start(ctx); err != nil {
		return err
	}
	l.mu.Lock()
	l.servers = append(l.servers, s)
	l.mu.Unlock()
	h.PG = s
	password := rand.Text()
	conn, err := s.Connect(ctx, "postgres")
	if err != nil {
		return fmt.Errorf("%w\n%s", err, s.Log())
	}
	defer conn.Close(ctx)
	// Utility statements take no parameters; the password is base32, safe to quote.
	for _, stmt := range []string{
		fmt.Sprintf("CREATE ROLE %s LOGIN SUPERUSER PASSWORD '%s'", PGUser, password),
		fmt.Sprintf("CREATE DATABASE %s OWNER %s", PGDatabase, PGUser),
	} {
		if _, err := conn.Exec(ctx, stmt); err != nil {
			return fmt.Errorf("%s: %w", stmt, err)
		}
	}
	h.DSN = fmt.Sprintf("postgres://%s:%s@%s/%s?sslmode=disable", PGUser, password, net.JoinHostPort(h.Addr, "5432"), PGDatabase)
	return nil
}

// startNodeExporter runs node_exporter on ADDR:9100 with the collectors storbench
// reads (Debian's binary name first, then upstream's).
func (l *Lab) startNodeExporter(ctx context.Context, h *Host, dir string) error {
	bin, err := exec.LookPath("prometheus-node-exporter")
	if err != nil {
		if bin, err = exec.LookPath("node_exporter"); err != nil {
			return errors.New("neither prometheus-node-exporter nor node_exporter is installed")
		}
	}
	addr := net.JoinHostPort(h.Addr, "9100")
	if err := l.startDaemon(ctx, h, dir, "node_exporter", addr, bin, "--web.listen-address="+addr,
		"--collector.disable-defaults", "--collector.cpu", "--collector.diskstats",
		"--collector.meminfo", "--collector.filesystem", "--collector.stat", "--collector.time"); err != nil {
		return err
	}
	h.MetricsURL = "http://" + addr + "/metrics"
	return nil
}

// startDaemon runs a long-running program in the host's namespace, its output in
// DIR/NAME.log, and waits until it accepts connections on listenAddr.
func (l *Lab) startDaemon(ctx context.Context, h *Host, dir, name, listenAddr, bin string, args ...string) error {
	d := &daemon{name: h.Name + " " + name, log: filepath.Join(dir, name+".log"), done: make(chan struct{})}
	out, err := os.Create(d.log)
	if err != nil {
		return err
	}
	defer out.Close() // the child has its own copy
	d.cmd = h.Namespace.Command(ctx, bin, args...)
	d.cmd.Stdout, d.cmd.Stderr = out, out
	if err := d.cmd.Start(); err != nil {
		return err
	}
	go func() {
		d.cmd.Wait()
		close(d.done)
	}()
	l.mu.Lock()
	l.daemons = append(l.daemons, d)
	l.mu.Unlock()
	return l.waitListening(ctx, d, listenAddr)
}

// waitListening waits until addr accepts a connection from the controller (so the
// lab's network is checked too), or d exits (its log then tells why), or 15 s pass.
func (l *Lab) waitListening(ctx context.Context, d *daemon, addr string) error {
	deadline := time.Now().Add(15 * time.Second)
	for {
		dctx, cancel := context.WithTimeout(ctx, time.Second)
		conn, err := l.Controller.Namespace.DialContext(dctx, "tcp", addr)
		cancel()
		if err == nil {
			return conn.Close()
		}
		select {
		case <-d.done:
			log, _ := os.ReadFile(d.log)
			return fmt.Errorf("%s exited: %v\n%s", d.name, d.cmd.ProcessState, log)
		case <-time.After(20 * time.Millisecond):
		}
		if time.Now().After(deadline) {
			log, _ := os.ReadFile(d.log)
			return fmt.Errorf("%s does not accept connections on %s: %w\n%s", d.name, addr, err, log)
		}
	}
}

// teardown stops the servers cleanly, then every daemon's process group, waits for
// what they started to end, kills what is still inside a lab namespace after that
// (failing the test: it was left running), and deletes the namespaces, their
// interfaces with them.
func (l *Lab) teardown() {
	t := l.t
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	for _, s := range l.servers {
		if err := s.Stop(ctx); err != nil {
			t.Errorf("netlab: stop PostgreSQL in %s: %v", s.Dir, err)
		}
	}
	l.stop()
	for _, d := range l.daemons {
		<-d.done
	}
	// What a daemon started can outlive it: an sshd's session runs in a session of its
	// own, which the signal to the daemon's group does not reach, and ends once it has
	// read its client's disconnection, on a busy machine a while after the test closed
	// the connection. Wait for it; only what is still there after leftGrace was left.
	deadline := time.Now().Add(leftGrace)
	for _, ns := range l.namespaces {
		for len(pidsIn(ns)) > 0 && time.Now().Before(deadline) {
			time.Sleep(20 * time.Millisecond)
		}
	}
	for _, ns := range l.namespaces {
		if left := killAll(ns); len(left) > 0 {
			t.Errorf("netlab: still running in namespace %s at teardown (killed): %s", ns, strings.Join(left, "; "))
		}
		if err := ip("netns", "delete", string(ns)); err != nil {
			t.Errorf("netlab: %v", err)
		}
	}
	entries, _ := os.ReadDir(netnsDir)
	for _, e := range entries {
		if strings.HasPrefix(e.Name(), l.prefix) {
			t.Errorf("netlab: namespace %s is left after teardown", e.Name())
		}
	}
}

// removeStale deletes the namespaces of labs whose creating process has ended (a
// killed test never ran its cleanup), killing what still runs in them.
func removeStale(t testing.TB) {
	entries, err := os.ReadDir(netnsDir)
	if err != nil {
		return // no namespace was ever named on this machine
	}
	for _, e := range entries {
		pid, ok := creatorPID(e.Name())
		if !ok || pid == os.Getpid() || !errors.Is(syscall.Kill(pid, 0), syscall.ESRCH) {
			continue
		}
		ns := NetNS(e.Name())
		killAll(ns)
		if err := ip("netns", "delete", string(ns)); err != nil {
			t.Errorf("netlab: remove a killed test's namespace: %v", err)
			continue
		}
		t.Logf("netlab: removed namespace %s: its test (pid %d) is gone", ns, pid)
	}
}

// creatorPID reads the pid out of a lab namespace's name (sbl<pid>-<seq>-…).
func creatorPID(name string) (int, bool) {
	rest, ok := strings.CutPrefix(name, namePrefix)
	if !ok {
		return 0, false
	}
	digits, _, ok := strings.Cut(rest, "-")
	if !ok {
		return 0, false
	}
	pid, err := strconv.Atoi(digits)
	return pid, err == nil && pid > 0
}

// killAll SIGKILLs every process in the namespace, waits (up to 10 s) until they are
// gone, and describes them ("pid: command line"): none if the namespace was empty.
func killAll(ns NetNS) []string {
	pids := pidsIn(ns)
	var left []string
	for _, pid := range pids {
		cmdline, _ := os.ReadFile(fmt.Sprintf("/proc/%d/cmdline", pid))
		left = append(left, fmt.Sprintf("%d: %s", pid, strings.TrimSpace(strings.ReplaceAll(string(cmdline), "\x00", " "))))
		syscall.Kill(pid, syscall.SIGKILL)
	}
	for deadline := time.Now().Add(10 * time.Second); len(pids) > 0 && time.Now().Before(deadline); {
		time.Sleep(20 * time.Millisecond)
		pids = pidsIn(ns)
	}
	return left
}

// pidsIn lists the processes whose network namespace is ns (`ip netns pids`), but
// this one: while one of its threads works in ns (InNetNS), the kernel can show the
// whole process there.
func pidsIn(ns NetNS) []int {
	out, _ := exec.Command("ip", "netns", "pids", string(ns)).Output()
	var pids []int
	for _, f := range strings.Fields(string(out)) {
		if pid, err := strconv.Atoi(f); err == nil && pid != os.Getpid() {
			pids = append(pids, pid)
		}
	}
	return pids
}

// ip runs one iproute2 command; the error carries its output.
func ip(args ...string) error {
	if out, err := exec.Command("ip", args...).CombinedOutput(); err != nil {
		return fmt.Errorf("ip %s: %w: %s", strings.Join(args, " "), err, strings.TrimSpace(string(out)))
	}
	return nil
}

func ipAll(cmds [][]string) error {
	for _, args := range cmds {
		if err := ip(args...); err != nil {
			return err
		}
	}
	return nil
}
