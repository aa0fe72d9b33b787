package postgres_test

import (
	"context"
	"errors"
	"net"
	"strconv"
	"strings"
	"testing"

	"github.com/storbench/storbench/internal/input"
	"github.com/storbench/storbench/internal/instance"
)

// TestCreateRefusalsNameSettings: the settings create refuses are named by key, so a
// study's managed target shows its own places for them (no --flag) and points at the
// one to fix, while the command line still reads --engine, --name, --port.
func TestCreateRefusalsNameSettings(t *testing.T) {
	reg := registry(t)
	busy, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer busy.Close()
	port := strconv.Itoa(busy.Addr().(*net.TCPAddr).Port)
	study := func(key string) string { return "targets[0]." + key }
	ok := instance.Spec{Engine: "postgres", Name: "a", MaxConnections: 10}
	with := func(change func(*instance.Spec)) instance.Spec { s := ok; change(&s); return s }
	for _, c := range []struct {
		spec            instance.Spec
		setting         string
		cli, studyWords string
	}{
		{with(func(s *instance.Spec) { s.Engine = "oracle" }), "engine",
			`--engine "oracle" is not supported`, `targets[0].engine "oracle" is not supported`},
		{with(func(s *instance.Spec) { s.Name = "Pg 1" }), "name",
			`--name "Pg 1": use lower-case letters`, `targets[0].name "Pg 1": use lower-case letters`},
		{with(func(s *instance.Spec) { s.MaxConnections = 0 }), "max_connections",
			"--max-connections must be at least 1", "targets[0].max_connections must be at least 1"},
		{with(func(s *instance.Spec) { s.Port, _ = strconv.Atoi(port) }), "port",
			"--port " + port + " is in use on 127.0.0.1", "targets[0].port " + port + " is in use on 127.0.0.1"},
	} {
		_, _, err := reg.Create(context.Background(), c.spec)
		var ie *input.Error
		if !errors.As(err, &ie) || ie.Setting != c.setting {
			t.Errorf("%+v: %v, want an input.Error of setting %s", c.spec, err, c.setting)
			continue
		}
		if !strings.Contains(err.Error(), c.cli) {
			t.Errorf("%+v on the command line: %q, want %q", c.spec, err, c.cli)
		}
		if got := input.Render(err, study); !strings.Contains(got, c.studyWords) || strings.Contains(got, "--") {
			t.Errorf("%+v in a study: %q, want %q and no --flag", c.spec, got, c.studyWords)
		}
	}
}
