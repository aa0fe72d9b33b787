package netlab

import (
	"context"
	"crypto/ed25519"
	"crypto/rand"
	"encoding/pem"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"

	"golang.org/x/crypto/ssh"
	"golang.org/x/crypto/ssh/knownhosts"
)

// sshKeys are the files the lab's sshds read.
type sshKeys struct {
	authorizedKeys string
	hostKeys       map[int]string // host index → its private host key file
}

// hostKeyFile is host i's private host key file, "" when it runs no sshd.
func (k *sshKeys) hostKeyFile(i int) string {
	if k == nil {
		return ""
	}
	return k.hostKeys[i]
}

// writeSSHKeys generates the user's key (Lab.UserKeyFile, and the authorized_keys
// naming it) and a host key for each of hosts, and writes the known_hosts file
// (Lab.KnownHostsFile) naming each of those hosts' address with its key.
func (l *Lab) writeSSHKeys(hosts []int) (*sshKeys, error) {
	dir := filepath.Join(l.dir, "ssh")
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, err
	}
	userKey, err := writeKey(filepath.Join(dir, "id_ed25519"))
	if err != nil {
		return nil, err
	}
	keys := &sshKeys{authorizedKeys: filepath.Join(dir, "authorized_keys"), hostKeys: map[int]string{}}
	if err := os.WriteFile(keys.authorizedKeys, ssh.MarshalAuthorizedKey(userKey), 0o600); err != nil {
		return nil, err
	}
	var known strings.Builder
	for _, i := range hosts {
		if i < 0 || i >= len(l.Hosts) {
			return nil, fmt.Errorf("Options.SSH names host %d: the lab has hosts 0 to %d", i, len(l.Hosts)-1)
		}
		file := filepath.Join(dir, l.Hosts[i].Name+"_host_ed25519_key")
		hostKey, err := writeKey(file)
		if err != nil {
			return nil, err
		}
		keys.hostKeys[i] = file
		known.WriteString(knownhosts.Line([]string{l.Hosts[i].Addr}, hostKey) + "\n")
	}
	l.UserKeyFile = filepath.Join(dir, "id_ed25519")
	l.KnownHostsFile = filepath.Join(dir, "known_hosts")
	return keys, os.WriteFile(l.KnownHostsFile, []byte(known.String()), 0o600)
}

// writeKey writes a new ed25519 private key in OpenSSH's format (what ssh-keygen
// writes: sshd, ssh and ssh.ParsePrivateKey read it) and returns its public key.
func writeKey(file string) (ssh.PublicKey, error) {
	pub, priv, err := ed25519.GenerateKey(rand.Reader)
	if err != nil {
		return nil, err
	}
	block, err := ssh.MarshalPrivateKey(priv, "")
	if err != nil {
		return nil, err
	}
	// 0600: sshd refuses a host key others can read.
	if err := os.WriteFile(file, pem.EncodeToMemory(block), 0o600); err != nil {
		return nil, err
	}
	return ssh.NewPublicKey(pub)
}

// startSSHD runs an sshd of its own configuration on ADDR:22 in the host's namespace,
// letting SSHUser in with the lab's user key only.
func (l *Lab) startSSHD(ctx context.Context, h *Host, dir, hostKey string, keys *sshKeys) error {
	bin, err := exec.LookPath("sshd")
	if err != nil {
		bin = "/usr/sbin/sshd" // often off a test's PATH
		if _, err := os.Stat(bin); err != nil {
			return errors.New("sshd not found: install openssh-server")
		}
	}
	// sshd will not start without its privilege separation directory, which the
	// package's service creates when it starts; the lab never starts that service.
	if err := os.MkdirAll("/run/sshd", 0o755); err != nil {
		return err
	}
	addr := net.JoinHostPort(h.Addr, "22")
	// StrictModes no: the key files sit in the test's temp dir, whose parents sshd
	// would otherwise want owned by the user. UsePAM no: PAM would want a login
	// session set up; key authentication needs none of it.
	conf := fmt.Sprintf(`ListenAddress %s
HostKey %s
AuthorizedKeysFile %s
PermitRootLogin prohibit-password
PasswordAuthentication no
KbdInteractiveAuthentication no
UsePAM no
StrictModes no
PidFile %s
Subsystem sftp internal-sftp
`, addr, hostKey, keys.authorizedKeys, filepath.Join(dir, "sshd.pid"))
	confFile := filepath.Join(dir, "sshd_config")
	if err := os.WriteFile(confFile, []byte(conf), 0o600); err != nil {
		return err
	}
	// -D: stays in the foreground, so the lab owns its process group; -e: logs to the
	// log file rather than syslog.
	if err := l.startDaemon(ctx, h, dir, "sshd", addr, bin, "-D", "-e", "-f", confFile); err != nil {
		return err
	}
	h.SSH = &SSH{Addr: addr, User: SSHUser, KeyFile: l.UserKeyFile, KnownHostsFile: l.KnownHostsFile}
	return nil
}
