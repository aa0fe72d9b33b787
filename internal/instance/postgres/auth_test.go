package postgres_test

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"

	"github.com/storbench/storbench/internal/input"
	"github.com/storbench/storbench/internal/instance"
	"github.com/storbench/storbench/internal/testsupport/pgtest"
)

// TestOtherUsersRefused: another user of the host (nobody) cannot connect to a
// managed instance without its password, whether the instance was created now, was
// created by an earlier storbench (trust for every local user; it gets a password at
// its next start), or holds a physical backup of another instance (whose roles the
// backup brought). With the password the same user connects: the refusals are the
// server's authentication, not that user's inability to run psql.
func TestOtherUsersRefused(t *testing.T) {
	if testing.Short() {
		t.Skip("starts PostgreSQL servers")
	}
	if os.Geteuid() != 0 {
		t.Skip("runs psql as the user nobody: needs root")
	}
	ctx := context.Background()
	reg := registry(t)
	base := t.TempDir()
	create := func(name string) *instance.State {
		t.Helper()
		if _, _, err := reg.Create(ctx, instance.Spec{Name: name, Engine: "postgres", Path: filepath.Join(base, name), MaxConnections: 10}); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = reg.Destroy(context.Background(), name) })
		st, err := reg.Start(ctx, name)
		if err != nil {
			t.Fatal(err)
		}
		return st
	}
	// refused checks that nobody cannot connect without the password, nor with each
	// of wrong, and can with the instance's own.
	refused := func(what string, st *instance.State, wrong ...string) {
		t.Helper()
		for _, pw := range append([]string{""}, wrong...) {
			if out, err := psqlAsNobody(t, st, pw); err == nil {
				t.Errorf("%s: nobody connected to instance %s with password %q:\n%s", what, st.Name, pw, out)
			} else if !strings.Contains(out, "password") {
				t.Errorf("%s: psql as nobody failed, but not for a password: %v\n%s", what, err, out)
			}
		}
		if st.Password == "" {
			t.Fatalf("%s: instance %s has no password", what, st.Name)
		}
		if out, err := psqlAsNobody(t, st, st.Password); err != nil {
			t.Errorf("%s: nobody with instance %s's password: %v\n%s", what, st.Name, err, out)
		}
	}

	a := create("auth-a")
	refused("a new instance", a, "wrong")

	// An instance of an earlier storbench: no password in its state, pg_hba.conf as
	// initdb --auth=trust wrote it.
	if _, err := reg.Stop(ctx, "auth-a"); err != nil {
		t.Fatal(err)
	}
	forgetPassword(t, reg, "auth-a")
	trust := "local all all trust\nhost all all 127.0.0.1/32 trust\nhost replication all 127.0.0.1/32 trust\n"
	if err := os.WriteFile(filepath.Join(a.Path, "data", "pg_hba.conf"), []byte(trust), 0o600); err != nil {
		t.Fatal(err)
	}
	old := a.Password
	var err error
	if a, err = reg.Start(ctx, "auth-a"); err != nil {
		t.Fatal(err)
	}
	if a.Password == old {
		t.Errorf("the earlier instance kept the password it had before it was made a legacy one")
	}
	if st, err := reg.Load("auth-a"); err != nil || st.Password != a.Password {
		t.Errorf("the new password is not recorded in the state: %v", err)
	}
	refused("an instance created by an earlier storbench, started again", a, old)

	// A physical backup of one instance restored into another: the other keeps its
	// own password; the backed-up one's does not open it.
	backup := filepath.Join(base, "backup")
	if _, err := reg.Backup(ctx, "auth-a", backup, instance.BackupMethod{Jobs: 1}); err != nil {
		t.Fatal(err)
	}
	b2 := create("auth-b")
	if _, err := reg.RestoreWith(ctx, "auth-b", backup, instance.RestoreOptions{OtherInstance: true}); err != nil {
		t.Fatal(err)
	}
	pgtest.Exec(t, b2.DSN(), "SELECT 1")
	refused("another instance's backup restored", b2, a.Password)
}

// TestEarlierStandbyRefused: a standby an earlier storbench made (no password; it
// cannot take one, its roles are its primary's) is refused at start with how to
// replace it, and a primary of that kind gets no new standby before it has a password.
func TestEarlierStandbyRefused(t *testing.T) {
	if testing.Short() {
		t.Skip("starts PostgreSQL servers")
	}
	ctx := context.Background()
	reg := registry(t)
	base := t.TempDir()
	if _, _, err := reg.Create(ctx, instance.Spec{Name: "p2", Engine: "postgres", Path: filepath.Join(base, "p"), MaxConnections: 20}); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = reg.Destroy(context.Background(), "p2") })
	if _, err := reg.Start(ctx, "p2"); err != nil {
		t.Fatal(err)
	}
	if _, _, err := reg.Create(ctx, instance.Spec{Name: "r2", Engine: "postgres", Path: filepath.Join(base, "r"), MaxConnections: 20, ReplicaOf: "p2"}); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = reg.Destroy(context.Background(), "r2") })
	forgetPassword(t, reg, "r2")
	_, err := reg.Start(ctx, "r2")
	if !errors.Is(err, input.ErrInvalid) || !strings.Contains(err.Error(), "storbench instance destroy --name r2") || strings.Contains(err.Error(), "\n") {
		t.Errorf("start of a standby without a password: %v; want one line of bad input saying to destroy it", err)
	}
	forgetPassword(t, reg, "p2")
	_, _, err = reg.Create(ctx, instance.Spec{Name: "r3", Engine: "postgres", Path: filepath.Join(base, "r3"), MaxConnections: 20, ReplicaOf: "p2"})
	if err == nil {
		_ = reg.Destroy(ctx, "r3")
	}
	if !errors.Is(err, input.ErrInvalid) || !strings.Contains(err.Error(), "storbench instance stop --name p2, then start") {
		t.Errorf("a standby of a primary without a password: %v; want bad input saying to start the primary again", err)
	}
	if _, err := os.Stat(filepath.Join(base, "r3")); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("the refused standby left %s: %v", filepath.Join(base, "r3"), err)
	}
}

// forgetPassword makes the named instance's state one an earlier storbench wrote: no
// password.
func forgetPassword(t *testing.T, reg instance.Registry, name string) {
	t.Helper()
	state := reg.StateFile(name)
	var raw map[string]any
	b, err := os.ReadFile(state)
	if err == nil {
		err = json.Unmarshal(b, &raw)
	}
	if err != nil {
		t.Fatal(err)
	}
	delete(raw, "password")
	b, _ = json.Marshal(raw)
	if err := os.WriteFile(state, b, 0o600); err != nil {
		t.Fatal(err)
	}
}

// psqlAsNobody runs psql as the user nobody against the instance's database over
// TCP, with password in its environment ("" : none), never prompting; it returns
// psql's output.
func psqlAsNobody(t *testing.T, st *instance.State, password string) (string, error) {
	t.Helper()
	cmd := exec.Command(filepath.Join(st.BinDir, "psql"), "-X", "-w", "-h", "127.0.0.1", "-p", strconv.Itoa(st.Port),
		"-U", "postgres", "-d", "tpcc", "-c", "SELECT 1")
	cmd.Dir = "/"
	cmd.Env = []string{"PATH=/usr/bin:/bin", "HOME=/nonexistent"}
	if password != "" {
		cmd.Env = append(cmd.Env, "PGPASSWORD="+password)
	}
	cmd.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: 65534, Gid: 65534}}
	out, err := cmd.CombinedOutput()
	return string(out), err
}
