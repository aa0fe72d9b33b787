package remote

import (
	"crypto/ecdsa"
	"crypto/ed25519"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/rsa"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/storbench/storbench/internal/input"
	"golang.org/x/crypto/ssh"
	"golang.org/x/crypto/ssh/knownhosts"
)

func TestParseTarget(t *testing.T) {
	good := map[string]target{
		"bench@db1":                {"bench", "db1", "22"},
		"bench@db1:2222":           {"bench", "db1", "2222"},
		"root@198.18.0.11":         {"root", "198.18.0.11", "22"},
		"a.b-c_d@db-1.example.com": {"a.b-c_d", "db-1.example.com", "22"},
		"bench@[2001:db8::1]":      {"bench", "2001:db8::1", "22"},
		"bench@[2001:db8::1]:2200": {"bench", "2001:db8::1", "2200"},
	}
	for in, want := range good {
		got, err := parseTarget(in)
		if err != nil || got != want {
			t.Errorf("parseTarget(%q) = %+v, %v; want %+v", in, got, err, want)
		}
	}
	for _, in := range []string{
		"", "db1", "@db1", "bench@", "bench@:22", "bench@db1:", "bench@db1:0", "bench@db1:65536",
		"bench@db1:022", "bench@db1:ssh", "bench@2001:db8::1", "bench@[2001:db8::1", "bench@[db1]",
		"bench@[2001:db8::1]x", "bench@[198.18.0.1]", "-oProxyCommand=x@db1", "bench@-db1",
		"bench@db 1", "be nch@db1", "bench@db1;rm", "bench@db1\n",
	} {
		_, err := parseTarget(in)
		if !errors.Is(err, input.ErrInvalid) || strings.Contains(err.Error(), "\n") ||
			!strings.Contains(err.Error(), "user@host") {
			t.Errorf("parseTarget(%q): %v; want a one-line input.ErrInvalid saying user@host", in, err)
		}
	}
}

// TestShellQuote has /bin/sh read each hostile string back as one word, unchanged.
func TestShellQuote(t *testing.T) {
	for _, s := range []string{
		"", "plain", "two words", "it's", "'", "''", `'\''`, `"`, `\`, `\'`, "$HOME", "${HOME}", "$(id)",
		"`id`", "a;b", "a&&b", "a|b", "*", "?", "[a]", "~", "#x", "!x", "-n", "--", "a\nb", "\t",
		"é ü 漢字", "/data/pg 16/main'; rm -rf / #",
	} {
		out, err := exec.Command("/bin/sh", "-c", "printf '%s' "+ShellQuote(s)+"; printf '|%s' "+ShellQuote(s)+" extra").Output()
		if err != nil {
			t.Fatalf("sh: %v", err)
		}
		if want := s + "|" + s + "|extra"; string(out) != want {
			t.Errorf("ShellQuote(%q) = %s: sh reads %q; want %q", s, ShellQuote(s), out, want)
		}
	}
}

func TestParsePairs(t *testing.T) {
	got := parsePairs(`SOURCE="/dev/vda1[/@home]" FSTYPE="btrfs" TARGET="/data\x20dir\x22q" EMPTY=""` + "\nSOURCE=\"second line\"\n")
	want := map[string]string{"SOURCE": "/dev/vda1[/@home]", "FSTYPE": "btrfs", "TARGET": `/data dir"q`, "EMPTY": ""}
	if len(got) != len(want) {
		t.Errorf("parsePairs: %q; want %q", got, want)
	}
	for k, v := range want {
		if got[k] != v {
			t.Errorf("parsePairs: %s=%q; want %q", k, got[k], v)
		}
	}
}

// TestKnownAlgorithms checks that the host key types offered are those known_hosts
// holds for the host, so that a host with several keys presents a known one.
func TestKnownAlgorithms(t *testing.T) {
	_, edKey, _ := ed25519.GenerateKey(rand.Reader)
	ecKey, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	rsaKey, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		t.Fatal(err)
	}
	pub := func(k any) ssh.PublicKey {
		s, err := ssh.NewSignerFromKey(k)
		if err != nil {
			t.Fatal(err)
		}
		return s.PublicKey()
	}
	file := filepath.Join(t.TempDir(), "known_hosts")
	lines := []string{
		knownhosts.Line([]string{"db1"}, pub(ecKey)),
		knownhosts.Line([]string{"db1", "db2"}, pub(rsaKey)),
		knownhosts.Line([]string{"[db2]:2222"}, pub(edKey)),
	}
	if err := os.WriteFile(file, []byte(strings.Join(lines, "\n")+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	k, err := loadKnownHosts(file)
	if err != nil {
		t.Fatal(err)
	}
	for target, want := range map[string][]string{
		"u@db1":      {ssh.KeyAlgoECDSA256, ssh.KeyAlgoRSASHA512, ssh.KeyAlgoRSASHA256, ssh.KeyAlgoRSA},
		"u@db2":      {ssh.KeyAlgoRSASHA512, ssh.KeyAlgoRSASHA256, ssh.KeyAlgoRSA},
		"u@db2:2222": {ssh.KeyAlgoED25519},
		"u@db3":      nil,
	} {
		tg, err := parseTarget(target)
		if err != nil {
			t.Fatal(err)
		}
		if got := k.algorithms(tg); !slices.Equal(got, want) {
			t.Errorf("%s: host key algorithms %q; want %q", target, got, want)
		}
	}
}

func TestKnownHostsMissing(t *testing.T) {
	file := filepath.Join(t.TempDir(), "known_hosts")
	_, err := loadKnownHosts(file)
	if err == nil || !strings.Contains(err.Error(), file+" does not exist") || !strings.Contains(err.Error(), "ssh-keyscan") {
		t.Errorf("%v; want an error saying %s does not exist and how to fill it", err, file)
	}
	if err := os.WriteFile(file, []byte("db1 ssh-ed25519 notbase64!\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := loadKnownHosts(file); err == nil || !strings.Contains(err.Error(), file+":1") {
		t.Errorf("%v; want an error naming %s line 1", err, file)
	}
}

func TestStderrSuffix(t *testing.T) {
	if got := stderrSuffix([]byte("  \n")); got != "" {
		t.Errorf("empty stderr: %q", got)
	}
	if got := stderrSuffix([]byte("line one\n  line two  \n")); got != ": line one | line two" {
		t.Errorf("two lines: %q", got)
	}
	long := stderrSuffix([]byte(strings.Repeat("x", 3*maxStderr) + " the cause"))
	if !strings.HasSuffix(long, "the cause") || len(long) > maxStderr+10 {
		t.Errorf("long stderr: %d bytes, ends %q", len(long), long[len(long)-20:])
	}
}
