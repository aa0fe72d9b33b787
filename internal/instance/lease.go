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

// Lease marks an instance as used by this process (a build, run or backup of it, a
// restore) until Release, so that destroy, stop and restore refuse it; it also
// remembers the OOM kills its cgroup had when the lease began. A nil Lease (no
// managed instance) does nothing.
type Lease struct {
	st      *State
	file    *os.File
	path    string // the held lease's file, removed on Release
	oomBase int64  // -1: the cgroup's OOM kills cannot be read
}

// leaseInfo is what a lease file says about its holder, for destroy's refusal.
type leaseInfo struct {
	PID   int       `json:"pid"`
	What  string    `json:"what"`
	Since time.Time `json:"since"`
}

func (r Registry) leaseDir() string { return filepath.Join(r.Dir, "leases") }

// leaseSuffix ends a held lease's file name; instance names hold no '.'.
const leaseSuffix = ".use"

// Use takes a lease on the instance whose server dsn names, if the registry has one
// (see Serving); what names the user in destroy's refusal, e.g. "storbench run".
// It returns nil and no error when no managed instance serves dsn.
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
	return r.lease(st, what)
}

// takeLease takes a lease on st's instance for what, e.g. "storbench backup" (see
// Use); unless force, it refuses while a live process holds one.
func (r Registry) takeLease(ctx context.Context, st *State, what string, force bool) (*Lease, error) {
	unlock, err := r.lock(ctx)
	if err != nil {
		return nil, err
	}
	defer unlock()
	if !force {
		if err := r.inUse(st.Name); err != nil {
			return nil, err
		}
	}
	return r.lease(st, what)
}

// lease takes a lease on st for what; the registry's lock is held.
func (r Registry) lease(st *State, what string) (*Lease, error) {
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
	b, _ := json.Marshal(leaseInfo{PID: os.Getpid(), What: what, Since: time.Now()})
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

// ExplainConnect adds to err, a failure to connect to dsn, how to connect when dsn
// names a managed instance of the registry without its password: such an instance
// admits only that password (kept in its state file), which a DSN copied from create's
// or status's output does not carry.
func (r Registry) ExplainConnect(dsn dburl.URL, err error) error {
	st, serr := r.Serving(dsn)
	if serr != nil || st == nil || st.Password == "" {
		return err
	}
	if pw, _ := dsn.Parts().User.Password(); pw == st.Password {
		return err
	}
	return fmt.Errorf(`%w; that is storbench instance %s, which admits only its own password: export STORBENCH_DSN="$(storbench instance dsn --name %s)" and leave --dsn out`,
		err, st.Name, st.Name)
}

// inUse refuses, naming the holder, while a live process holds a lease on the
// instance (this one too, through another lease); the leases of dead processes are
// removed.
func (r Registry) inUse(name string) error {
	files, err := filepath.Glob(filepath.Join(r.leaseDir(), name+".*"+leaseSuffix))
	if err != nil {
		return err
	}
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
		var info leaseInfo
		b, _ := os.ReadFile(path)
		_ = json.Unmarshal(b, &info)
		f.Close()
		return fmt.Errorf("%w: instance %s is in use by %s (pid %d, since %s): wait for it or add --force",
			input.ErrInvalid, name, info.What, info.PID, info.Since.Format("15:04:05"))
	}
	return nil
}
