package dburl

import (
	"errors"
	"strings"
	"testing"

	"github.com/storbench/storbench/internal/input"
)

func TestRedacted(t *testing.T) {
	for in, want := range map[string]string{
		"postgres://u:secret@127.0.0.1:5432/tpcc":     "postgres://u:xxxxx@127.0.0.1:5432/tpcc",
		"postgres://u@127.0.0.1/tpcc?password=secret": "postgres://u@127.0.0.1/tpcc?password=xxxxx",
		"mysql://u@127.0.0.1:3306/tpcc":               "mysql://u@127.0.0.1:3306/tpcc",
		"sqlite:///tmp/t.db":                          "sqlite:///tmp/t.db",
	} {
		u, err := Parse(in)
		if err != nil {
			t.Fatalf("Parse(%q): %v", in, err)
		}
		if got := u.Redacted(); got != want || Redact(in) != want {
			t.Errorf("%q redacted: %q and %q, want %q", in, got, Redact(in), want)
		}
		if u.String() != in {
			t.Errorf("String() = %q, want it as given %q", u.String(), in)
		}
	}
	if got := Redact("::u:secret@host"); strings.Contains(got, "secret") {
		t.Errorf("Redact of a non-URL kept the password: %q", got)
	}
}

func TestParseRefusesNonURL(t *testing.T) {
	_, err := Parse("//u:secret@127.0.0.1/tpcc")
	if !errors.Is(err, input.ErrInvalid) || strings.Contains(err.Error(), "secret") {
		t.Errorf("Parse of a URL without a scheme: %v, want an input error without the password", err)
	}
}

func TestLocal(t *testing.T) {
	for in, want := range map[string]bool{
		"postgres://u@127.0.0.1:5432/tpcc":          true,
		"postgres://u@localhost/tpcc":               true,
		"postgres://u@[::1]:5432/tpcc":              true,
		"postgres:///tpcc?host=/var/run/postgresql": true,
		"postgres://u@10.1.2.3:5432/tpcc":           false,
		"postgres://u@db.example:5432/tpcc?host=/s": true,
		"mysql://u@db.example:3306/tpcc":            false,
		"sqlite:///tmp/t.db":                        true,
	} {
		u, err := Parse(in)
		if err != nil {
			t.Fatal(err)
		}
		if _, local := u.Local(); local != want {
			t.Errorf("%q local = %v, want %v", in, local, want)
		}
	}
}

func TestPasswordAndParts(t *testing.T) {
	u, _ := Parse("postgres://u@127.0.0.1:5432/tpcc")
	if u.HasPassword() {
		t.Error("no password, HasPassword true")
	}
	w := u.WithPassword("p w")
	if !w.HasPassword() || u.HasPassword() {
		t.Errorf("WithPassword: %v / original %v", w.HasPassword(), u.HasPassword())
	}
	if pw, _ := w.Parts().User.Password(); pw != "p w" {
		t.Errorf("password %q", pw)
	}
	p := w.Parts()
	p.User = nil
	if !w.HasPassword() {
		t.Error("changing Parts() changed the URL")
	}
	if q, _ := Parse("postgres://u@h/t?password=x"); !q.HasPassword() {
		t.Error("password parameter not seen")
	}
}
