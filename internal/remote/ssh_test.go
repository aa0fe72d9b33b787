package remote

import (
	"context"
	"crypto/ecdsa"
	"crypto/ed25519"
	"crypto/elliptic"
	"crypto/rand"
	"encoding/pem"
	"errors"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"strconv"
	"strings"
	"testing"
	"time"

	"golang.org/x/crypto/ssh"
	"golang.org/x/crypto/ssh/agent"
	"golang.org/x/crypto/ssh/knownhosts"

	"github.com/storbench/storbench/internal/blockdev"
	"github.com/storbench/storbench/internal/testsupport/looptest"
	"github.com/storbench/storbench/internal/testsupport/netlab"
)

// TestSSH reaches a netlab host's real sshd from the lab's controller namespace.
func TestSSH(t *testing.T) {
	lab := netlab.New(t, 1, netlab.Options{SSH: []int{0}})
	h := lab.Hosts[0]
	base := Config{
		Target:     h.SSH.User + "@" + h.Addr,
		KeyFile:    h.SSH.KeyFile,
		KnownHosts: h.SSH.KnownHostsFile,
		Dial:       lab.Controller.Namespace.DialContext,
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	host, err := Dial(ctx, base)
	if err != nil {
		t.Fatal(err)
	}
	defer host.Close()

	t.Run("run", func(t *testing.T) {
		if out, err := host.Run(ctx, "echo hi", nil); out != "hi\n" || err != nil {
			t.Errorf("echo hi: %q, %v", out, err)
		}
		in := "line 1\nline 'two' $HOME\n\x00\xff binary\n"
		if out, err := host.Run(ctx, "cat", strings.NewReader(in)); out != in || err != nil {
			t.Errorf("cat: %q, %v; want stdin back, %q", out, err, in)
		}
		// The command runs in the host's namespace, not ours.
		if out, err := host.Run(ctx, "hostname -I", nil); !strings.Contains(out, h.Addr) || err != nil {
			t.Errorf("hostname -I: %q, %v; want %s", out, err, h.Addr)
		}
	})
	t.Run("failure", func(t *testing.T) {
		out, err := host.Run(ctx, "echo partial; echo oops >&2; echo again >&2; exit 3", nil)
		if out != "partial\n" || err == nil || !strings.Contains(err.Error(), "exited with status 3: oops | again") {
			t.Errorf("%q, %v; want stdout and an error with the status and stderr", out, err)
		}
	})
	t.Run("quoting", func(t *testing.T) {
		for _, s := range []string{"it's", `"$(id)" ` + "`id`" + ` ;|&`, "a\nb", "x' ; touch /tmp/pwned; '"} {
			out, err := host.Run(ctx, "printf %s "+ShellQuote(s), nil)
			if out != s || err != nil {
				t.Errorf("printf %s: %q, %v; want it back", ShellQuote(s), out, err)
			}
		}
	})
	t.Run("data device", func(t *testing.T) {
		diskstats, err := os.ReadFile("/proc/diskstats")
		if err != nil {
			t.Fatal(err)
		}
		var names []string
		for _, line := range strings.Split(string(diskstats), "\n") {
			if f := strings.Fields(line); len(f) > 3 {
				names = append(names, f[2])
			}
		}
		// A directory with a name the shell must not read.
		hostile := filepath.Join(t.TempDir(), "pg data 'x'; $(false)")
		if err := os.Mkdir(hostile, 0o700); err != nil {
			t.Fatal(err)
		}
		for _, dir := range []string{"/", t.TempDir(), hostile} {
			disk, err := host.DataDevice(ctx, dir)
			if err != nil {
				t.Errorf("DataDevice(%q): %v", dir, err)
				continue
			}
			found := false
			for _, n := range names {
				found = found || n == disk
			}
			if !found {
				t.Errorf("DataDevice(%q) = %q, not in /proc/diskstats (%s)", dir, disk, strings.Join(names, " "))
			}
			t.Logf("DataDevice(%q) = %s", dir, disk)
		}
		if _, err := host.DataDevice(ctx, "/dev/shm"); err == nil || !strings.Contains(err.Error(), "not on a block device") ||
			!strings.Contains(err.Error(), "tmpfs") || !strings.Contains(err.Error(), "metrics_devices") {
			t.Errorf("DataDevice(/dev/shm): %v; want an error saying tmpfs is no block device, name metrics_devices", err)
		}
		if _, err := host.DataDevice(ctx, "relative/dir"); err == nil || !strings.Contains(err.Error(), "not an absolute path") {
			t.Errorf("DataDevice(relative/dir): %v", err)
		}
	})
	// The host's block devices as a study records them (blockdev.HostScript, one
	// command): a loop device of the test's own, mounted in the host's mount namespace
	// (the lab's hosts see this machine's files and /sys, not the mounts made here
	// after they started), reads there as its /sys says here.
	t.Run("provenance", func(t *testing.T) {
		d := looptest.Attach(t, 32<<20)
		looptest.Format(t, d)
		dir := t.TempDir()
		if _, err := host.Run(ctx, "mount "+ShellQuote(d.Dev)+" "+ShellQuote(dir), nil); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() {
			if _, err := host.Run(context.Background(), "umount "+ShellQuote(dir), nil); err != nil {
				t.Error(err)
			}
		})
		out, err := host.Run(ctx, blockdev.HostScript, strings.NewReader(blockdev.HostInput(dir)))
		if err != nil {
			t.Fatal(err)
		}
		sys, err := blockdev.ReadHost(out)
		if err != nil {
			t.Fatal(err)
		}
		defer sys.Close()
		got, err := sys.Resolve(dir, "data")
		if err != nil {
			t.Fatal(err)
		}
		t.Logf("%s on the host: %s %s (%s), %s", dir, got.FSType, got.Source, got.MountOptions, got.Chain)
		if got.FSType != "ext4" || got.Source != d.Dev || !strings.Contains(","+got.MountOptions+",", ",rw,") {
			t.Errorf("%s on the host: %s on %s (%s), want ext4 on %s, rw", dir, got.FSType, got.Source, got.MountOptions, d.Dev)
		}
		if len(got.Stack) == 0 || got.Stack[0].Name != d.Name || got.Stack[0].Kind != "loop" || got.Stack[0].BackingFile != d.Backing {
			t.Fatalf("stack %+v, want %s over %s first", got.Stack, d.Name, d.Backing)
		}
		queue := func(file string) string {
			b, _ := os.ReadFile(filepath.Join("/sys/block", d.Name, "queue", file))
			return strings.TrimSpace(string(b))
		}
		loop := got.Stack[0]
		if !strings.Contains(queue("scheduler"), "["+loop.Scheduler+"]") || strconv.Itoa(loop.LogicalBlock) != queue("logical_block_size") ||
			strconv.Itoa(loop.PhysicalBlock) != queue("physical_block_size") || loop.Rotational == nil || *loop.Rotational != (queue("rotational") == "1") {
			t.Errorf("%s on the host %+v, /sys/block here: scheduler %q, blocks %s/%s, rotational %s", d.Name, loop,
				queue("scheduler"), queue("logical_block_size"), queue("physical_block_size"), queue("rotational"))
		}
		// Under the loop device: the disks of the filesystem holding its backing file.
		backing, err := blockdev.NewResolver().Resolve(filepath.Dir(d.Backing), "backing")
		if err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(got.Stack[1:], backing.Stack) {
			t.Errorf("under %s on the host %+v, here %+v", d.Name, got.Stack[1:], backing.Stack)
		}
	})
	t.Run("cancel", func(t *testing.T) {
		// An unusual duration, to find this very sleep among the machine's processes.
		const cmd = "sleep 30.0417"
		cctx, ccancel := context.WithCancel(ctx)
		time.AfterFunc(500*time.Millisecond, ccancel)
		start := time.Now()
		_, err := host.Run(cctx, cmd, nil)
		if took := time.Since(start); err == nil || !errors.Is(err, context.Canceled) || took > 2*time.Second {
			t.Errorf("Run(%s) cancelled after 0.5 s: %v after %v; want context.Canceled within 2 s", cmd, err, took)
		}
		// The remote command is killed, not left running on the host.
		deadline := time.Now().Add(5 * time.Second)
		for exec.Command("pgrep", "-f", "^"+cmd+"$").Run() == nil {
			if time.Now().After(deadline) {
				t.Fatalf("%s still runs on the host 5 s after Run was cancelled", cmd)
			}
			time.Sleep(50 * time.Millisecond)
		}
		// The connection still serves.
		if out, err := host.Run(ctx, "echo still", nil); out != "still\n" || err != nil {
			t.Errorf("after a cancelled Run: %q, %v", out, err)
		}
	})
	t.Run("concurrent", func(t *testing.T) {
		errs := make(chan error, 5)
		for range 5 {
			go func() {
				_, err := host.Run(ctx, "sleep 0.2", nil)
				errs <- err
			}()
		}
		for range 5 {
			if err := <-errs; err != nil {
				t.Error(err)
			}
		}
	})

	dialErr := func(t *testing.T, cfg Config) error {
		t.Helper()
		hst, err := Dial(ctx, cfg)
		if err == nil {
			hst.Close()
			t.Fatalf("Dial(%+v) connected", cfg)
		}
		if strings.Contains(err.Error(), "\n") {
			t.Errorf("error of more than one line: %q", err)
		}
		return err
	}
	writeKnownHosts := func(t *testing.T, lines ...string) string {
		file := filepath.Join(t.TempDir(), "known_hosts")
		if err := os.WriteFile(file, []byte(strings.Join(lines, "")), 0o600); err != nil {
			t.Fatal(err)
		}
		return file
	}
	t.Run("host key mismatch", func(t *testing.T) {
		_, other, _ := ed25519.GenerateKey(rand.Reader)
		signer, _ := ssh.NewSignerFromKey(other)
		cfg := base
		cfg.KnownHosts = writeKnownHosts(t, "# other hosts\n", knownhosts.Line([]string{h.Addr}, signer.PublicKey())+"\n")
		err := dialErr(t, cfg)
		var keyErr *knownhosts.KeyError
		if !strings.Contains(err.Error(), "does not match "+cfg.KnownHosts+" line 2") ||
			!strings.Contains(err.Error(), "man-in-the-middle") || !errors.As(err, &keyErr) {
			t.Errorf("%v; want a mismatch naming %s line 2", err, cfg.KnownHosts)
		}
		t.Log(err)
	})
	t.Run("host key of another type", func(t *testing.T) {
		// The host has an ed25519 key only; known_hosts holds an ECDSA one.
		ec, _ := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
		signer, _ := ssh.NewSignerFromKey(ec)
		cfg := base
		cfg.KnownHosts = writeKnownHosts(t, knownhosts.Line([]string{h.Addr}, signer.PublicKey())+"\n")
		err := dialErr(t, cfg)
		if !strings.Contains(err.Error(), "does not match "+cfg.KnownHosts) || !strings.Contains(err.Error(), "ssh-ed25519") {
			t.Errorf("%v; want a mismatch naming the host's key type", err)
		}
		t.Log(err)
	})
	t.Run("unknown host", func(t *testing.T) {
		cfg := base
		cfg.KnownHosts = writeKnownHosts(t)
		err := dialErr(t, cfg)
		if !strings.Contains(err.Error(), h.Addr+" is not in "+cfg.KnownHosts) || !strings.Contains(err.Error(), "SHA256:") ||
			!strings.Contains(err.Error(), "ssh-keyscan -t ed25519 '"+h.Addr+"' >> ") {
			t.Errorf("%v; want an error naming the file, the fingerprint and ssh-keyscan", err)
		}
		t.Log(err)
	})
	t.Run("revoked host key", func(t *testing.T) {
		// The host's own line, marked revoked.
		known, err := os.ReadFile(h.SSH.KnownHostsFile)
		if err != nil {
			t.Fatal(err)
		}
		cfg := base
		cfg.KnownHosts = writeKnownHosts(t, "@revoked "+string(known))
		if err := dialErr(t, cfg); !strings.Contains(err.Error(), "is revoked in "+cfg.KnownHosts+" line 1") {
			t.Errorf("%v; want a revoked key error", err)
		}
	})
	t.Run("wrong user key", func(t *testing.T) {
		cfg := base
		cfg.KeyFile = writeKey(t, "")
		err := dialErr(t, cfg)
		if !strings.Contains(err.Error(), "SSH as "+h.SSH.User+"@"+h.Addr+":22 refused the key "+cfg.KeyFile) ||
			!strings.Contains(err.Error(), "authorized_keys") {
			t.Errorf("%v; want a refusal naming the key and authorized_keys", err)
		}
		t.Log(err)
	})
	t.Run("passphrase key", func(t *testing.T) {
		cfg := base
		cfg.KeyFile = writeKey(t, "secret")
		var missing *ssh.PassphraseMissingError
		if err := dialErr(t, cfg); !strings.Contains(err.Error(), "passphrase") || !strings.Contains(err.Error(), "ssh-agent") ||
			!errors.As(err, &missing) {
			t.Errorf("%v; want an error saying to use the agent", err)
		}
	})
	t.Run("agent", func(t *testing.T) {
		pemKey, err := os.ReadFile(h.SSH.KeyFile)
		if err != nil {
			t.Fatal(err)
		}
		priv, err := ssh.ParseRawPrivateKey(pemKey)
		if err != nil {
			t.Fatal(err)
		}
		keyring := agent.NewKeyring()
		if err := keyring.Add(agent.AddedKey{PrivateKey: priv}); err != nil {
			t.Fatal(err)
		}
		sock := filepath.Join(t.TempDir(), "agent.sock")
		l, err := net.Listen("unix", sock)
		if err != nil {
			t.Fatal(err)
		}
		defer l.Close()
		go func() {
			for {
				c, err := l.Accept()
				if err != nil {
					return
				}
				go func() {
					defer c.Close()
					agent.ServeAgent(keyring, c)
				}()
			}
		}()
		t.Setenv("SSH_AUTH_SOCK", sock)
		t.Setenv("HOME", t.TempDir()) // no default key to fall back on
		cfg := base
		cfg.KeyFile = ""
		hst, err := Dial(ctx, cfg)
		if err != nil {
			t.Fatal(err)
		}
		defer hst.Close()
		if out, err := hst.Run(ctx, "echo agent", nil); out != "agent\n" || err != nil {
			t.Errorf("%q, %v", out, err)
		}
		keyring.RemoveAll()
		if err := dialErr(t, cfg); !strings.Contains(err.Error(), "holds no key") {
			t.Errorf("%v; want an error saying the agent holds no key", err)
		}
	})
	t.Run("default key files", func(t *testing.T) {
		home := t.TempDir()
		t.Setenv("HOME", home)
		t.Setenv("SSH_AUTH_SOCK", "")
		cfg := base
		cfg.KeyFile = ""
		if err := dialErr(t, cfg); !strings.Contains(err.Error(), "no SSH key for") {
			t.Errorf("%v; want an error saying there is no key", err)
		}
		if err := os.Mkdir(filepath.Join(home, ".ssh"), 0o700); err != nil {
			t.Fatal(err)
		}
		pemKey, err := os.ReadFile(h.SSH.KeyFile)
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(home, ".ssh", "id_ed25519"), pemKey, 0o600); err != nil {
			t.Fatal(err)
		}
		// And the default known_hosts.
		known, err := os.ReadFile(h.SSH.KnownHostsFile)
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(home, ".ssh", "known_hosts"), known, 0o600); err != nil {
			t.Fatal(err)
		}
		cfg.KnownHosts = ""
		hst, err := Dial(ctx, cfg)
		if err != nil {
			t.Fatal(err)
		}
		hst.Close()
	})
	t.Run("unreachable", func(t *testing.T) {
		// On the lab's subnet, where no host answers: the connection times out
		// without a packet leaving the lab.
		cfg := base
		cfg.Target = "root@198.18.0.99"
		dctx, dcancel := context.WithTimeout(ctx, time.Second)
		defer dcancel()
		start := time.Now()
		_, err := Dial(dctx, cfg)
		if took := time.Since(start); err == nil || !strings.Contains(err.Error(), "cannot reach 198.18.0.99:22 over SSH") || took > 3*time.Second {
			t.Errorf("%v after %v; want cannot reach, within the context's second", err, took)
		}
	})
	t.Run("bad target", func(t *testing.T) {
		cfg := base
		cfg.Target = h.Addr
		if err := dialErr(t, cfg); !strings.Contains(err.Error(), "names no user") {
			t.Errorf("%v", err)
		}
	})
}

// writeKey writes a new ed25519 private key, encrypted when passphrase is given.
func writeKey(t *testing.T, passphrase string) string {
	_, priv, _ := ed25519.GenerateKey(rand.Reader)
	var block *pem.Block
	var err error
	if passphrase == "" {
		block, err = ssh.MarshalPrivateKey(priv, "")
	} else {
		block, err = ssh.MarshalPrivateKeyWithPassphrase(priv, "", []byte(passphrase))
	}
	if err != nil {
		t.Fatal(err)
	}
	file := filepath.Join(t.TempDir(), "id_ed25519")
	if err := os.WriteFile(file, pem.EncodeToMemory(block), 0o600); err != nil {
		t.Fatal(err)
	}
	return file
}
