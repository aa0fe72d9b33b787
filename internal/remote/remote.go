// Package remote runs the few host-local actions of a multi-host study (finding the
// disk that holds a database's data, running a backup on its host) over SSH, with
// golang.org/x/crypto/ssh rather than the ssh program, so that the checks and the
// error messages are the same on every controller.
//
// The host's key is always checked against an OpenSSH known_hosts file: a study
// never trusts a host on first use, because a benchmark's numbers and its backups
// are only worth something from the machine they claim to come from. Every error
// is one line that names what to do about it.
//
// Commands run through the remote user's login shell, which must be a POSIX shell
// (sh, bash, dash, zsh): ShellQuote quotes for those.
package remote

import (
	"bytes"
	"context"
	"crypto/ed25519"
	"crypto/rand"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/storbench/storbench/internal/input"
	"golang.org/x/crypto/ssh"
	"golang.org/x/crypto/ssh/agent"
	"golang.org/x/crypto/ssh/knownhosts"
)

const (
	// connectTimeout bounds the TCP connection: a host that is down or firewalled
	// would otherwise hold a study for the system's minutes-long SYN retries.
	connectTimeout = 10 * time.Second
	// handshakeTimeout bounds the SSH handshake and authentication once connected:
	// longer than the connect, as a loaded host's sshd or an agent that asks its
	// user to confirm a signature can take a few seconds.
	handshakeTimeout = 20 * time.Second
	// maxStderr is how much of a failed command's stderr an error keeps (its end,
	// where the cause usually is).
	maxStderr = 2000
	// killTimeout bounds killing a cancelled command: waiting for its pid, then
	// running kill.
	killTimeout = 5 * time.Second
)

// Config says how to reach a host.
type Config struct {
	// Target is "user@host" or "user@host:port" (port 22 by default); an IPv6
	// address goes in brackets: "user@[2001:db8::1]:22".
	Target string
	// KeyFile is the private key to log in with (OpenSSH or PEM format, without a
	// passphrase). Empty: the keys of the agent at $SSH_AUTH_SOCK when it is set,
	// else those of ~/.ssh/id_ed25519, id_ecdsa and id_rsa that exist.
	KeyFile string
	// KnownHosts is the OpenSSH known_hosts file that must hold the host's key
	// (default ~/.ssh/known_hosts).
	KnownHosts string
	// Dial opens the TCP connection (default: a net.Dialer); tests give one that
	// dials from inside a network namespace.
	Dial func(ctx context.Context, network, addr string) (net.Conn, error)
}

// Host is an SSH connection to a host; it is safe for concurrent use (each Run is
// its own session, up to the sshd's MaxSessions, 10 by default, at once).
type Host struct {
	client *ssh.Client
	name   string         // user@host:port, for messages
	kills  sync.WaitGroup // the kills of cancelled commands under way
}

// String is user@host:port.
func (h *Host) String() string { return h.name }

// Close closes the connection, after the kills of cancelled commands (5 s at
// most); a Run still going fails.
func (h *Host) Close() error {
	done := make(chan struct{})
	go func() {
		h.kills.Wait()
		close(done)
	}()
	select {
	case <-done:
	case <-time.After(killTimeout):
	}
	return h.client.Close()
}

// target is a parsed Config.Target.
type target struct {
	user, host, port string
}

// addr is host:port, as dialled, and as knownhosts matches it (it writes a port
// other than 22 as [host]:port).
func (t target) addr() string { return net.JoinHostPort(t.host, t.port) }

func (t target) String() string { return t.user + "@" + t.addr() }

// knownName is how known_hosts and ssh-keyscan name the host.
func (t target) knownName() string { return knownhosts.Normalize(t.addr()) }

// keyscan is the command that appends the host's key of type keyType to file.
func (t target) keyscan(keyType, file string) string {
	port := ""
	if t.port != "22" {
		port = "-p " + t.port + " "
	}
	return fmt.Sprintf("ssh-keyscan %s-t %s %s >> %s", port, keyscanType(keyType), ShellQuote(t.host), ShellQuote(file))
}

// keyscanType is ssh-keyscan's -t name of an SSH key type.
func keyscanType(keyType string) string {
	switch {
	case keyType == ssh.KeyAlgoED25519:
		return "ed25519"
	case strings.HasPrefix(keyType, "ecdsa-"):
		return "ecdsa"
	case keyType == ssh.KeyAlgoRSA:
		return "rsa"
	}
	return keyType
}

var (
	userRE = regexp.MustCompile(`^[A-Za-z0-9_][A-Za-z0-9._-]*$`)
	hostRE = regexp.MustCompile(`^[A-Za-z0-9]([A-Za-z0-9.-]*[A-Za-z0-9])?$`)
)

// parseTarget checks and splits "user@host[:port]".
func parseTarget(s string) (target, error) {
	bad := func(why string) (target, error) {
		return target{}, fmt.Errorf("%w: SSH target %q %s: write user@host or user@host:port, e.g. bench@db1:2222", input.ErrInvalid, s, why)
	}
	user, hostport, ok := strings.Cut(s, "@")
	if !ok {
		return bad("names no user")
	}
	if !userRE.MatchString(user) {
		return bad("has no valid user before the @")
	}
	t := target{user: user, host: hostport, port: "22"}
	switch {
	case strings.HasPrefix(hostport, "["):
		// [IPv6] or [IPv6]:port
		end := strings.Index(hostport, "]")
		if end < 0 {
			return bad("has no ] after the IPv6 address")
		}
		t.host = hostport[1:end]
		if rest := hostport[end+1:]; rest != "" {
			port, ok := strings.CutPrefix(rest, ":")
			if !ok {
				return bad("has text after the ]")
			}
			t.port = port
		}
		if ip := net.ParseIP(t.host); ip == nil || ip.To4() != nil {
			return bad("has no IPv6 address in brackets")
		}
	case strings.Count(hostport, ":") > 1:
		return bad("has an IPv6 address outside brackets")
	default:
		if h, p, ok := strings.Cut(hostport, ":"); ok {
			t.host, t.port = h, p
		}
		if !hostRE.MatchString(t.host) {
			return bad("has no valid host name or address after the @")
		}
	}
	if n, err := strconv.Atoi(t.port); err != nil || n < 1 || n > 65535 || t.port != strconv.Itoa(n) {
		return bad("has a port that is not 1 to 65535")
	}
	return t, nil
}

// Dial connects to cfg.Target, checks its key against the known_hosts file, and
// logs in. ctx bounds the connection (with a 10 s connect and a 20 s handshake
// timeout of its own), not the Host's life.
func Dial(ctx context.Context, cfg Config) (*Host, error) {
	t, err := parseTarget(cfg.Target)
	if err != nil {
		return nil, err
	}
	known, err := loadKnownHosts(cfg.KnownHosts)
	if err != nil {
		return nil, err
	}
	auth, err := authFor(t, cfg.KeyFile)
	if err != nil {
		return nil, err
	}
	defer auth.close()

	// The callback's error comes back wrapped in the handshake's ("ssh: handshake
	// failed: …"); keeping it here lets Dial return the one-line message alone.
	var hostKeyErr error
	config := &ssh.ClientConfig{
		User: t.user,
		Auth: auth.methods,
		HostKeyCallback: func(hostname string, remote net.Addr, key ssh.PublicKey) error {
			hostKeyErr = known.explain(t, known.check(hostname, remote, key), key)
			return hostKeyErr
		},
		// Offer only the key types known_hosts holds for the host: a host with
		// several keys would otherwise present its preferred type, which may not be
		// the one recorded, and fail as a mismatch.
		HostKeyAlgorithms: known.algorithms(t),
	}

	dial := cfg.Dial
	if dial == nil {
		dial = (&net.Dialer{}).DialContext
	}
	dctx, cancel := context.WithTimeout(ctx, connectTimeout)
	conn, err := dial(dctx, "tcp", t.addr())
	cancel()
	if err != nil {
		return nil, fmt.Errorf("cannot reach %s over SSH: %w", t.addr(), err)
	}
	hctx, cancel := context.WithTimeout(ctx, handshakeTimeout)
	defer cancel()
	// ssh.NewClientConn takes no context: closing the connection is what stops it.
	stop := context.AfterFunc(hctx, func() { conn.Close() })
	c, chans, reqs, err := ssh.NewClientConn(conn, t.addr(), config)
	if !stop() {
		if c != nil {
			c.Close()
		}
		return nil, fmt.Errorf("cannot reach %s over SSH: no SSH handshake: %w", t.addr(), context.Cause(hctx))
	}
	if err != nil {
		conn.Close()
		var negErr *ssh.AlgorithmNegotiationError
		switch {
		case hostKeyErr != nil:
			return nil, hostKeyErr
		case errors.As(err, &negErr) && negErr.What == "host key" && config.HostKeyAlgorithms != nil && len(negErr.RequestedAlgorithms) > 0:
			return nil, fmt.Errorf("the host key of %s does not match %s: it offers keys of type %s, the file holds %s for it; possible man-in-the-middle, or the host was reinstalled: check its new key's fingerprint with its administrator, then replace the host's lines (ssh-keygen -R %s -f %s, then %s)",
				t.knownName(), known.file, strings.Join(negErr.RequestedAlgorithms, ", "), strings.Join(config.HostKeyAlgorithms, ", "),
				ShellQuote(t.knownName()), ShellQuote(known.file), t.keyscan(negErr.RequestedAlgorithms[0], known.file))
		// The package reports a refused login only as this text (no error type).
		case strings.Contains(err.Error(), "ssh: unable to authenticate"):
			return nil, fmt.Errorf("SSH as %s refused %s: add the public key to the host's authorized_keys (~%s/.ssh/authorized_keys)",
				t, auth.desc, t.user)
		}
		return nil, fmt.Errorf("SSH handshake with %s failed: %w", t.addr(), err)
	}
	return &Host{client: ssh.NewClient(c, chans, reqs), name: t.String()}, nil
}

// knownHosts is a known_hosts file loaded for checking.
type knownHosts struct {
	file  string
	check ssh.HostKeyCallback
}

// loadKnownHosts reads file (default ~/.ssh/known_hosts).
func loadKnownHosts(file string) (*knownHosts, error) {
	if file == "" {
		home, err := os.UserHomeDir()
		if err != nil {
			return nil, fmt.Errorf("no known_hosts file given and no home directory to find ~/.ssh/known_hosts in: %w", err)
		}
		file = filepath.Join(home, ".ssh", "known_hosts")
	}
	check, err := knownhosts.New(file)
	switch {
	case errors.Is(err, os.ErrNotExist):
		return nil, fmt.Errorf("known_hosts file %s does not exist: create it with the host's key (ssh-keyscan -t ed25519 HOST >> %s, after checking the key's fingerprint), or name another file", file, file)
	case err != nil:
		return nil, fmt.Errorf("cannot read the known_hosts file %s: %v: fix its permissions or the line named", file, err)
	}
	return &knownHosts{file: file, check: check}, nil
}

// algorithms lists the host key algorithms of the keys known_hosts holds for t,
// nil (the package's defaults) when it holds none. The knownhosts package has no
// lookup: a check with a key no line can hold returns, as a mismatch, every key
// listed for the host.
func (k *knownHosts) algorithms(t target) []string {
	_, priv, err := ed25519.GenerateKey(rand.Reader)
	if err != nil {
		return nil
	}
	signer, err := ssh.NewSignerFromKey(priv)
	if err != nil {
		return nil
	}
	remote := &net.TCPAddr{IP: net.IPv4zero, Port: 22} // unused: the host name is matched
	var keyErr *knownhosts.KeyError
	if !errors.As(k.check(t.addr(), remote, signer.PublicKey()), &keyErr) {
		return nil
	}
	var algos []string
	add := func(names ...string) {
		for _, n := range names {
			if !slices.Contains(algos, n) {
				algos = append(algos, n)
			}
		}
	}
	for _, w := range keyErr.Want {
		if w.Key.Type() == ssh.KeyAlgoRSA {
			// An RSA key signs with any of these; sshd prefers the SHA-2 ones.
			add(ssh.KeyAlgoRSASHA512, ssh.KeyAlgoRSASHA256, ssh.KeyAlgoRSA)
		} else {
			add(w.Key.Type())
		}
	}
	return algos
}

// explain turns a known_hosts check's error into a message that says what to do.
func (k *knownHosts) explain(t target, err error, key ssh.PublicKey) error {
	if err == nil {
		return nil
	}
	fp := ssh.FingerprintSHA256(key)
	var keyErr *knownhosts.KeyError
	var revoked *knownhosts.RevokedError
	switch {
	case errors.As(err, &keyErr) && len(keyErr.Want) == 0:
		return &hostKeyError{err: err, msg: fmt.Sprintf(
			"%s is not in %s: check its key's fingerprint %s (%s) and add it (%s)",
			t.knownName(), k.file, fp, key.Type(), t.keyscan(key.Type(), k.file))}
	case errors.As(err, &keyErr):
		w := keyErr.Want[0]
		return &hostKeyError{err: err, msg: fmt.Sprintf(
			"the host key of %s does not match %s line %d: it presents %s %s, the file holds %s %s; possible man-in-the-middle, or the host was reinstalled: check the new fingerprint with its administrator, then replace the line (ssh-keygen -R %s -f %s, then %s)",
			t.knownName(), w.Filename, w.Line, key.Type(), fp, w.Key.Type(), ssh.FingerprintSHA256(w.Key),
			ShellQuote(t.knownName()), ShellQuote(w.Filename), t.keyscan(key.Type(), w.Filename))}
	case errors.As(err, &revoked):
		return &hostKeyError{err: err, msg: fmt.Sprintf(
			"the host key of %s (%s %s) is revoked in %s line %d: do not connect; ask the host's administrator for its new key",
			t.knownName(), key.Type(), fp, revoked.Revoked.Filename, revoked.Revoked.Line)}
	}
	return &hostKeyError{err: err, msg: fmt.Sprintf("the host key of %s (%s %s) is refused by %s: %v", t.knownName(), key.Type(), fp, k.file, err)}
}

// hostKeyError is a refused host key: its message says what to do, and it unwraps
// to the knownhosts error (*knownhosts.KeyError, *knownhosts.RevokedError).
type hostKeyError struct {
	msg string
	err error
}

func (e *hostKeyError) Error() string { return e.msg }
func (e *hostKeyError) Unwrap() error { return e.err }

// auth is how Dial logs in.
type auth struct {
	methods []ssh.AuthMethod
	desc    string    // the keys offered, for the refusal message
	agent   io.Closer // the agent's connection, needed until authenticated
}

func (a *auth) close() {
	if a.agent != nil {
		a.agent.Close()
	}
}

// authFor picks the keys: keyFile, else the agent at $SSH_AUTH_SOCK, else the
// default key files, as ssh(1) would (but a key file given is the only one used).
func authFor(t target, keyFile string) (*auth, error) {
	if keyFile != "" {
		signer, err := readKey(keyFile)
		if err != nil {
			if errors.Is(err, os.ErrNotExist) {
				return nil, fmt.Errorf("%w: SSH key file %s does not exist: give the path of the private key for %s", input.ErrInvalid, keyFile, t)
			}
			return nil, err
		}
		return &auth{methods: []ssh.AuthMethod{ssh.PublicKeys(signer)}, desc: describeKeys(keyFile, signer)}, nil
	}
	if sock := os.Getenv("SSH_AUTH_SOCK"); sock != "" {
		return agentAuth(sock)
	}
	home, err := os.UserHomeDir()
	if err != nil {
		return nil, fmt.Errorf("no SSH key for %s: no key file given, no agent (SSH_AUTH_SOCK), and no home directory: %v", t, err)
	}
	var signers []ssh.Signer
	var used, locked []string
	for _, name := range []string{"id_ed25519", "id_ecdsa", "id_rsa"} {
		file := filepath.Join(home, ".ssh", name)
		signer, err := readKey(file)
		var missing *ssh.PassphraseMissingError
		switch {
		case errors.Is(err, os.ErrNotExist):
		case errors.As(err, &missing):
			locked = append(locked, file)
		case err != nil:
			return nil, err
		default:
			signers = append(signers, signer)
			used = append(used, describeKeys(file, signer))
		}
	}
	switch {
	case len(signers) > 0:
		return &auth{methods: []ssh.AuthMethod{ssh.PublicKeys(signers...)}, desc: strings.Join(used, ", ")}, nil
	case len(locked) > 0:
		return nil, fmt.Errorf("no usable SSH key for %s: %s is protected by a passphrase: load it into an ssh-agent (ssh-add) and set SSH_AUTH_SOCK, or give a key file without a passphrase", t, strings.Join(locked, ", "))
	}
	return nil, fmt.Errorf("no SSH key for %s: give a key file (ssh_key), or run an ssh-agent holding the key (SSH_AUTH_SOCK), or create %s", t, filepath.Join(home, ".ssh", "id_ed25519"))
}

// readKey reads an unencrypted private key file; an encrypted one gives an error
// that wraps *ssh.PassphraseMissingError.
func readKey(file string) (ssh.Signer, error) {
	pem, err := os.ReadFile(file)
	if err != nil {
		return nil, fmt.Errorf("cannot read the SSH key file %s: %w", file, err)
	}
	signer, err := ssh.ParsePrivateKey(pem)
	var missing *ssh.PassphraseMissingError
	switch {
	case errors.As(err, &missing):
		// Asking for the passphrase would stop an unattended study; the agent asks
		// once, before it.
		return nil, fmt.Errorf("SSH key file %s is protected by a passphrase: load it into an ssh-agent (ssh-add %s), set SSH_AUTH_SOCK and give no key file: %w",
			file, ShellQuote(file), err)
	case err != nil:
		return nil, fmt.Errorf("SSH key file %s is not a private key: %v: give the private key (id_*, not id_*.pub)", file, err)
	}
	return signer, nil
}

func describeKeys(file string, s ssh.Signer) string {
	return fmt.Sprintf("the key %s (%s %s)", file, s.PublicKey().Type(), ssh.FingerprintSHA256(s.PublicKey()))
}

// agentAuth logs in with the keys of the agent listening on sock.
func agentAuth(sock string) (*auth, error) {
	conn, err := net.DialTimeout("unix", sock, connectTimeout)
	if err != nil {
		return nil, fmt.Errorf("cannot reach the ssh-agent at SSH_AUTH_SOCK=%s: %v: start the agent, or unset SSH_AUTH_SOCK and give a key file", sock, err)
	}
	client := agent.NewClient(conn)
	keys, err := client.List()
	if err != nil {
		conn.Close()
		return nil, fmt.Errorf("cannot list the keys of the ssh-agent at SSH_AUTH_SOCK=%s: %v", sock, err)
	}
	if len(keys) == 0 {
		conn.Close()
		return nil, fmt.Errorf("the ssh-agent at SSH_AUTH_SOCK=%s holds no key: add one (ssh-add KEYFILE), or give a key file", sock)
	}
	fps := make([]string, len(keys))
	for i, k := range keys {
		fps[i] = k.Type() + " " + ssh.FingerprintSHA256(k)
	}
	return &auth{
		methods: []ssh.AuthMethod{ssh.PublicKeysCallback(client.Signers)},
		desc:    fmt.Sprintf("the keys of the ssh-agent at %s (%s)", sock, strings.Join(fps, ", ")),
		agent:   conn,
	}, nil
}

// Run runs cmd through the remote user's shell, with stdin (nil: none) as its
// input, and returns its stdout. A command that fails returns its stdout too, and
// an error holding its exit status and its stderr (trimmed, on one line). When ctx
// ends, Run returns at once; in the background the command's process group (its
// shell and what that started, unless they made groups of their own) is killed
// and the session closed.
func (h *Host) Run(ctx context.Context, cmd string, stdin io.Reader) (string, error) {
	name := commandName(cmd)
	if err := ctx.Err(); err != nil {
		return "", fmt.Errorf("%s on %s: %w", name, h, err)
	}
	type result struct {
		stdout, stderr []byte
		err            error
	}
	done := make(chan result, 1)
	// All of the session lives in this goroutine, so that Run can return when ctx
	// ends even if the session is stuck: on a dead connection, or reading a stdin
	// that blocks (Wait waits for the stdin copy).
	go func() {
		s, err := h.client.NewSession()
		if err != nil {
			done <- result{err: fmt.Errorf("%w on %s: %w", ErrNoSession, h, err)}
			return
		}
		var stdout bytes.Buffer
		stderr := &stderrBuffer{ready: make(chan struct{})}
		s.Stdin, s.Stdout, s.Stderr = stdin, &stdout, stderr
		// sshd makes the shell a session leader, so its pid is the process group's
		// id; it tells it first, for killing the group if ctx ends. Closing the
		// session would not end the command, and sshd refuses the SSH signal request
		// in some setups (a root login: "session signalling requires privilege
		// separation").
		if err := s.Start(`echo "` + pidPrefix + `$$" >&2; ` + cmd); err != nil {
			s.Close()
			done <- result{err: fmt.Errorf("cannot start %s on %s: %w", name, h, err)}
			return
		}
		exited := make(chan struct{})
		h.kills.Add(1)
		// Runs at once if ctx ended while the session opened.
		stop := context.AfterFunc(ctx, func() {
			defer h.kills.Done()
			h.kill(s, stderr, exited)
		})
		err = s.Wait()
		close(exited)
		if stop() {
			h.kills.Done()
			s.Close()
		}
		_, rest := stderr.split()
		done <- result{stdout: stdout.Bytes(), stderr: rest, err: err}
	}()
	select {
	case <-ctx.Done():
		return "", fmt.Errorf("%s on %s: %w", name, h, context.Cause(ctx))
	case r := <-done:
		if r.err == nil {
			return string(r.stdout), nil
		}
		var exit *ssh.ExitError
		switch {
		case errors.As(r.err, &exit) && exit.Signal() != "":
			return string(r.stdout), fmt.Errorf("%s on %s was killed by SIG%s%s", name, h, exit.Signal(), stderrSuffix(r.stderr))
		case errors.As(r.err, &exit):
			return string(r.stdout), fmt.Errorf("%s on %s exited with status %d%s", name, h, exit.ExitStatus(), stderrSuffix(r.stderr))
		}
		return string(r.stdout), fmt.Errorf("%s on %s: %w%s", name, h, r.err, stderrSuffix(r.stderr))
	}
}

// ErrNoSession is a connection that no longer opens sessions (dropped by a firewall's
// idle timeout, a restarted sshd): dial again.
var ErrNoSession = errors.New("cannot open an SSH session")

// commandName names a command in an error on one line: a script by its first line.
func commandName(cmd string) string {
	first, rest, multi := strings.Cut(strings.TrimSpace(cmd), "\n")
	if multi && strings.TrimSpace(rest) != "" {
		return "the script starting " + strconv.Quote(first)
	}
	return first
}

// pidPrefix starts the first line a command's shell writes to stderr: its pid.
const pidPrefix = "storbench-remote-pid "

// kill kills the process group of the command running in s, once its shell has
// told its pid, from a session of its own, then closes s.
func (h *Host) kill(s *ssh.Session, stderr *stderrBuffer, exited <-chan struct{}) {
	defer s.Close()
	select {
	case <-stderr.ready:
	case <-exited:
		return
	case <-time.After(killTimeout):
		return
	}
	select {
	case <-exited: // gone already: its pid may name another group by now
		return
	default:
	}
	pid, _ := stderr.split()
	if pid <= 1 {
		return
	}
	ks, err := h.client.NewSession()
	if err != nil {
		return
	}
	defer ks.Close()
	// A dead connection would block Run: Close ends it (ks.Close cannot).
	timer := time.AfterFunc(killTimeout, func() { h.client.Close() })
	defer timer.Stop()
	// TERM first, so that a command's traps clean up what it made (a backup's
	// directory, a password file); KILL what is still there 2 s later. Best effort:
	// the group may be gone.
	ks.Run(fmt.Sprintf("kill -TERM -- -%[1]d 2>/dev/null || exit 0; for i in 1 2 3 4 5 6 7 8 9 10; do sleep 0.2; kill -0 -- -%[1]d 2>/dev/null || exit 0; done; kill -KILL -- -%[1]d", pid))
}

// stderrBuffer collects a command's stderr, the pid line first.
type stderrBuffer struct {
	mu    sync.Mutex
	b     bytes.Buffer
	ready chan struct{} // closed once the pid line is in
}

func (w *stderrBuffer) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	had := bytes.IndexByte(w.b.Bytes(), '\n') >= 0
	w.b.Write(p)
	if !had && bytes.IndexByte(w.b.Bytes(), '\n') >= 0 {
		close(w.ready)
	}
	return len(p), nil
}

// split returns the shell's pid (0 when not told) and the command's own stderr.
func (w *stderrBuffer) split() (int, []byte) {
	w.mu.Lock()
	defer w.mu.Unlock()
	first, rest, ok := bytes.Cut(w.b.Bytes(), []byte("\n"))
	digits, isPid := bytes.CutPrefix(first, []byte(pidPrefix))
	if !ok || !isPid {
		return 0, w.b.Bytes()
	}
	pid, err := strconv.Atoi(string(digits))
	if err != nil {
		return 0, w.b.Bytes()
	}
	return pid, rest
}

// stderrSuffix is ": STDERR" on one line, its end when long; "" when empty.
func stderrSuffix(stderr []byte) string {
	s := strings.Join(strings.Fields(strings.ReplaceAll(strings.TrimSpace(string(stderr)), "\n", " | ")), " ")
	if s == "" {
		return ""
	}
	if len(s) > maxStderr {
		s = "…" + s[len(s)-maxStderr:]
	}
	return ": " + s
}

// ShellQuote quotes s as one word for a POSIX shell: in single quotes, where
// nothing is special but the single quote itself, written by closing the quotes,
// adding a backslash-escaped quote, and opening them again.
func ShellQuote(s string) string {
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}
