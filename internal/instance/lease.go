package instance

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"golang.org/x/sys/unix"

	"github.com/storbench/storbench/internal/dburl"
	"github.com/storbench/storbench/internal/engine"
	"github.com/storbench/storbench/internal/input"
)

// Several storbench processes share a registry: creates of one name must not both
// start a server, and destroy must not pull an instance from under a run. Both use
// flock(2), which the kernel drops when its holder dies, so a killed process never
// leaves a lock behind.

// lock holds the registry's lock exclusively until unlock is called; it waits for
// another holder (a create initialising its server takes seconds) unless ctx ends.
// The lock is the registry's parent directory itself, so that taking it creates
// nothing in the registry: a refused create leaves no trace there.
func (r Registry) lock(ctx context.Context) (unlock func(), err error) {
	parent := filepath.Dir(r.Dir)
	if err := os.MkdirAll(parent, 0o755); err != nil {
		return nil, fmt.Errorf("lock the instance registry: %w", err)
	}
	f, err := os.Open(parent)
	if err != nil {
		return nil, fmt.Errorf("lock the instance registry: %w", err)
	}
	for {
		err := unix.Flock(int(f.Fd()), unix.LOCK_EX|unix.LOCK_NB)
		if err == nil {
			return func() { f.Close() }, nil // closing drops the lock
		}
		if !errors.Is(err, unix.EWOULDBLOCK) {
			f.Close()
			return nil, fmt.Errorf("lock the instance registry (%s): %w", parent, err)
		}
		select {
		case <-ctx.Done():
			f.Close()
			return nil, fmt.Errorf("wait for the instance registry's lock (%s): %w", parent, ctx.Err())
		case <-time.After(50 * time.Millisecond):
		}
	}
}

// Lease marks an instance as used by this process until Release: a build, run or
// backup uses its server as it is, and any number of them may share it; a restore
// replaces it, alone. Destroy and stop refuse an instance under any lease, a restore
// one under another lease, and a use one that a restore holds. A lease also
// remembers the OOM kills the instance's cgroup had when it began. A nil Lease (no
// managed instance) does nothing.
type Lease struct {
	st      *State
	file    *os.File
	path    string // the held lease's file, removed on Release
	oomBase int64  // -1: the cgroup's OOM kills cannot be read
}

// What a lease is for (leaseInfo.For).
const (
	forUse     = "use"     // a build, run or backup: shares the server with others
	forReplace = "replace" // a restore: no other lease beside it
)

// leaseInfo is what a lease file says about its holder, for the refusals.
type leaseInfo struct {
	PID  int    `json:"pid"`
	What string `json:"what"`
	// For is forUse or forReplace ("" in a lease of an earlier storbench: forUse).
	For   string    `json:"for,omitempty"`
	Since time.Time `json:"since"`
}

// holder names the lease's process: "storbench run (pid 123, since 10:00:00)".
func (l leaseInfo) holder() string {
	return fmt.Sprintf("%s (pid %d, since %s)", l.What, l.PID, l.Since.Format("15:04:05"))
}

func (r Registry) leaseDir() string { return filepath.Join(r.Dir, "leases") }

// leaseSuffix ends a held lease's file name; instance names hold no '.'.
const leaseSuffix = ".use"

// Use takes a lease on the instance whose server dsn names, if the registry has one
// (see Serving), to use its server as it is; what names the user in the refusals of
// destroy, stop and restore, e.g. "storbench run". It refuses while a restore is
// replacing the server. It returns nil and no error when no managed instance serves
// dsn.
func (r Registry) Use(ctx context.Context, dsn dburl.URL, what string) (*Lease, error) {
	if st, err := r.Serving(dsn); st == nil || err != nil {
		return nil, err // no instance of this registry serves dsn
	}
	// Under the registry's lock: a destroy checks the leases and stops the server
	// under it too, so it either sees this lease or has finished before it is taken.
	unlock, err := r.lock(ctx)
	if err != nil {
		return nil, err
	}
	defer unlock()
	st, err := r.Serving(dsn)
	if st == nil || err != nil {
		return nil, err
	}
	if err := r.notReplacing(st.Name); err != nil {
		return nil, err
	}
	return r.lease(st, what, forUse)
}

// takeLease takes a lease on st's instance for what, e.g. "storbench backup", and
// purpose (forUse, forReplace), unless a live process holds one it cannot share.
func (r Registry) takeLease(ctx context.Context, st *State, what, purpose string) (*Lease, error) {
	unlock, err := r.lock(ctx)
	if err != nil {
		return nil, err
	}
	defer unlock()
	if purpose == forUse {
		err = r.notReplacing(st.Name)
	} else {
		err = r.unleased(st.Name, "wait for it to end, or stop it: a restore would replace the server under it")
	}
	if err != nil {
		return nil, err
	}
	return r.lease(st, what, purpose)
}

// lease takes a lease on st for what and purpose; the registry's lock is held.
func (r Registry) lease(st *State, what, purpose string) (*Lease, error) {
	dir := r.leaseDir()
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, fmt.Errorf("lease instance %s: %w", st.Name, err)
	}
	// Locked under a name destroy does not look at, then renamed: destroy never sees
	// an unlocked lease of a live process (it would take it for a dead one's).
	f, err := os.CreateTemp(dir, "new-*")
	if err != nil {
		return nil, fmt.Errorf("lease instance %s: %w", st.Name, err)
	}
	fail := func(err error) (*Lease, error) {
		f.Close()
		os.Remove(f.Name())
		return nil, fmt.Errorf("lease instance %s: %w", st.Name, err)
	}
	if err := unix.Flock(int(f.Fd()), unix.LOCK_EX|unix.LOCK_NB); err != nil {
		return fail(err)
	}
	b, _ := json.Marshal(leaseInfo{PID: os.Getpid(), What: what, For: purpose, Since: time.Now()})
	if _, err := f.Write(b); err != nil {
		return fail(err)
	}
	final := filepath.Join(dir, fmt.Sprintf("%s.%d.%s%s", st.Name, os.Getpid(), strings.TrimPrefix(filepath.Base(f.Name()), "new-"), leaseSuffix))
	if err := os.Rename(f.Name(), final); err != nil {
		return fail(err)
	}
	kills, oerr := oomKills(st)
	if oerr != nil {
		kills = -1
	}
	return &Lease{st: st, file: f, path: final, oomBase: kills}, nil
}

// Release ends the lease.
func (l *Lease) Release() {
	if l == nil {
		return
	}
	os.Remove(l.path)
	l.file.Close()
}

// Serving is the recorded instance whose server dsn names: a loopback host and the
// instance's port, with the scheme of the instance's own DSN; nil when there is none.
func (r Registry) Serving(dsn dburl.URL) (*State, error) {
	u := dsn.Parts()
	if _, local := dsn.Local(); !local || u.Port() == "" {
		return nil, nil
	}
	all, err := r.List()
	if err != nil {
		return nil, err
	}
	for _, st := range all {
		if st.Condition != "" {
			continue // no server storbench can tell
		}
		own, err := dburl.Parse(st.DSN())
		if err == nil && own.Parts().Port() == u.Port() && engine.SameEngine(own.Scheme(), u.Scheme) {
			return st, nil
		}
	}
	return nil, nil
}

// ExplainConnect adds to err, a failure to connect to dsn, why when dsn names a
// managed instance of the registry: a restore is replacing its server, or its server
// is stopped, or (it runs) the DSN lacks its password, which such an instance alone
// admits (kept in its state file): a DSN copied from create's or status's output
// does not carry it.
func (r Registry) ExplainConnect(dsn dburl.URL, err error) error {
	var refused *leaseRefused
	if errors.As(err, &refused) {
		return err // not a failure to connect: Use refused it
	}
	st, serr := r.Serving(dsn)
	if serr != nil || st == nil {
		return err
	}
	if l := r.replacer(st.Name); l != nil {
		return fmt.Errorf("%w; that is storbench instance %s, being restored by %s: wait for it to finish", err, st.Name, l.holder())
	}
	if servers[st.Engine].PID(st) == 0 {
		return fmt.Errorf("%w; that is storbench instance %s, which is stopped: storbench instance start --name %s", err, st.Name, st.Name)
	}
	if pw, _ := dsn.Parts().User.Password(); st.Password == "" || pw == st.Password {
		return err
	}
	return fmt.Errorf(`%w; that is storbench instance %s, which admits only its own password: export STORBENCH_DSN="$(storbench instance dsn --name %s)" and leave --dsn out`,
		err, st.Name, st.Name)
}

// held is the leases live processes hold on the named instance (this one too,
// through another lease); the leases of dead processes are removed.
func (r Registry) held(name string) ([]leaseInfo, error) {
	files, err := filepath.Glob(filepath.Join(r.leaseDir(), name+".*"+leaseSuffix))
	if err != nil {
		return nil, err
	}
	var out []leaseInfo
	for _, path := range files {
		f, err := os.Open(path)
		if err != nil {
			continue // released meanwhile
		}
		err = unix.Flock(int(f.Fd()), unix.LOCK_EX|unix.LOCK_NB)
		if err == nil {
			os.Remove(path) // its holder is gone
			f.Close()
			continue
		}
		info := leaseInfo{For: forUse}
		b, _ := os.ReadFile(path)
		_ = json.Unmarshal(b, &info)
		f.Close()
		out = append(out, info)
	}
	return out, nil
}

// leaseRefused is a verb's refusal of an instance because of another's lease: bad
// input that says itself what to do (ExplainConnect adds nothing to it).
type leaseRefused struct{ msg string }

func (e *leaseRefused) Error() string { return input.ErrInvalid.Error() + ": " + e.msg }

func (e *leaseRefused) Unwrap() error { return input.ErrInvalid }

// unleased refuses, naming the holder and fix, while a live process holds a lease
// on the named instance.
func (r Registry) unleased(name, fix string) error {
	held, err := r.held(name)
	if err != nil || len(held) == 0 {
		return err
	}
	return &leaseRefused{fmt.Sprintf("instance %s is in use by %s: %s", name, held[0].holder(), fix)}
}

// inUse is unleased for what stops or removes the server (stop, destroy), which
// force overrides.
func (r Registry) inUse(name string) error { return r.unleased(name, "wait for it or "+r.forceHint()) }

// replacer is the lease of a live process replacing the named instance's server (a
// restore); nil when none is.
func (r Registry) replacer(name string) *leaseInfo {
	held, _ := r.held(name)
	for _, l := range held {
		if l.For == forReplace {
			return &l
		}
	}
	return nil
}

// notReplacing refuses, naming the restore, while one replaces the named instance's
// server: what would use it must wait.
func (r Registry) notReplacing(name string) error {
	if l := r.replacer(name); l != nil {
		return &leaseRefused{fmt.Sprintf("instance %s is being restored by %s: wait for it to finish", name, l.holder())}
	}
	return nil
}
