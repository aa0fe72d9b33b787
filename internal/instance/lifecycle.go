package instance

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"
	"unicode"

	"github.com/storbench/storbench/internal/input"
	"github.com/storbench/storbench/internal/instance/localserver"
)

// Create claims the directories, initialises the server's files and records the
// instance; it does not start it. Warnings (tmpfs) are returned for the caller to show.
func (r Registry) Create(ctx context.Context, spec Spec) (*State, []string, error) {
	srv, ok := servers[spec.Engine]
	if !ok {
		return nil, nil, input.Errorf("engine", "{engine} %q is not supported: use %s", spec.Engine, strings.Join(Engines(), " or "))
	}
	if spec.ReplicaOf != "" {
		if err := srv.CheckReplica(); err != nil {
			return nil, nil, err
		}
	}
	if !validName.MatchString(spec.Name) {
		return nil, nil, input.Errorf("name", "{name} %q: use lower-case letters, digits, - and _, starting with a letter", spec.Name)
	}
	if spec.MemoryBytes != 0 {
		machine, _ := MachineMemory() // unknown: not refused
		if err := cmp.Or(CheckMemory(spec.Engine, spec.MemoryBytes), CheckMachineMemory(spec.MemoryBytes, machine)); err != nil {
			return nil, nil, err
		}
	}
	if spec.CPUs != "" {
		if err := CheckCPUs(spec.CPUs); err != nil {
			return nil, nil, err
		}
	}
	if spec.BinDir != "" {
		if err := srv.CheckBinDir(spec.BinDir); err != nil {
			return nil, nil, err
		}
	}
	if spec.MaxConnections < 1 {
		return nil, nil, input.Errorf("max_connections", "{max_connections} must be at least 1")
	}
	if err := checkPort(spec.Port); err != nil {
		return nil, nil, err
	}
	for _, p := range []struct {
		key string
		dir *string
	}{{"path", &spec.Path}, {"wal_path", &spec.WALPath}} {
		if *p.dir == "" {
			continue
		}
		if err := CheckPath(p.key, *p.dir); err != nil {
			return nil, nil, err
		}
		*p.dir = filepath.Clean(*p.dir)
		if _, err := claimable(*p.dir); err != nil {
			return nil, nil, err
		}
		if err := r.checkOutside(p.key, *p.dir, "give a directory outside every instance's and backup's", Registry{}); err != nil {
			return nil, nil, err
		}
	}
	// Held until the record is saved: a concurrent create of the same name (or port)
	// then finds it and is refused instead of starting a second, unrecorded server.
	unlock, err := r.lock(ctx)
	if err != nil {
		return nil, nil, err
	}
	defer unlock()
	if r.Recorded(spec.Name) {
		return nil, nil, input.Errorf("name", "an instance named %q exists already (storbench instance destroy --name %s)", spec.Name, spec.Name)
	}
	if spec.Port != 0 {
		all, err := r.List()
		if err != nil {
			return nil, nil, err
		}
		for _, other := range all {
			if other.Port == spec.Port {
				return nil, nil, input.Errorf("port", "{port} %d belongs to instance %s", spec.Port, other.Name)
			}
		}
	}
	st := &State{Spec: spec, CreatedAt: time.Now().UTC(), Dirs: map[string]DirID{}}
	// Claimed before anything exists on disk: a create killed from here on leaves an
	// instance that list shows as incomplete and destroy removes.
	if err := r.writeClaim(st); err != nil {
		r.unclaim(spec.Name)
		return nil, nil, fmt.Errorf("record instance %s: %w", spec.Name, err)
	}
	var warnings []string
	claimed := []string{}
	undo := func() {
		for _, d := range claimed {
			_, _ = release(d, spec.Name, nil)
		}
		r.unclaim(spec.Name)
	}
	for _, dir := range []string{spec.Path, spec.WALPath} {
		if dir == "" {
			continue
		}
		id, w, err := claim(dir, spec.Name)
		if err != nil {
			undo()
			return nil, nil, err
		}
		claimed = append(claimed, dir)
		st.Dirs[dir] = id
		if w != "" {
			warnings = append(warnings, w)
		}
	}
	var primary *State
	if spec.ReplicaOf != "" {
		p, err := r.primary(spec)
		if err != nil {
			undo()
			return nil, nil, err
		}
		primary = p
	} else if spec.Sync {
		undo()
		return nil, nil, input.Errorf("sync", "{sync} needs {replica_of}")
	}
	if err := srv.Init(ctx, st, primary); err != nil {
		undo()
		return nil, nil, fmt.Errorf("create instance %s: %w", spec.Name, err)
	}
	// Its binaries and directories' identities: what stops and destroys it should its
	// state file be damaged.
	if err := r.writeClaim(st); err != nil {
		undo()
		return nil, nil, err
	}
	if err := r.save(st); err != nil {
		undo()
		return nil, nil, err
	}
	return st, warnings, nil
}

// CheckPath refuses a directory given by the setting key ("path", "wal_path"; "":
// the caller names it) that is relative (its meaning would depend on
// where storbench runs) or holds a control character (a newline, a tab: the server's
// tools would fail on it, with their whole output as the message).
func CheckPath(key, dir string) error {
	named := keyed(key, "%q")
	if strings.ContainsFunc(dir, unicode.IsControl) {
		return input.Errorf(key, named+" holds a control character (name a directory without newlines, tabs or other control characters)", dir)
	}
	if !filepath.IsAbs(dir) {
		return input.Errorf(key, named+" is not an absolute path (give the whole path, e.g. /mnt/nvme0/pg)", dir)
	}
	return nil
}

// keyed is a refusal's words for a value of the setting key, formatted by verb: the
// key named ("{path} %q") or, without one, the value alone (the caller names it).
func keyed(key, verb string) string {
	if key == "" {
		return verb
	}
	return "{" + key + "} " + verb
}

// primary returns the running instance a standby is created from.
func (r Registry) primary(spec Spec) (*State, error) {
	p, err := r.Load(spec.ReplicaOf)
	if err != nil {
		return nil, err
	}
	if p.Engine != spec.Engine {
		return nil, input.Errorf("replica_of", "{replica_of} %s is a %s instance, not %s", p.Name, p.Engine, spec.Engine)
	}
	if servers[p.Engine].PID(p) == 0 {
		return nil, input.Errorf("replica_of", "{replica_of} %s is stopped: storbench instance start --name %s", p.Name, p.Name)
	}
	return p, nil
}

// checkPort refuses a port something already listens on (0: the engine picks one).
func checkPort(port int) error {
	if port == 0 {
		return nil
	}
	if port < 1 || port > 65535 {
		return input.Errorf("port", "{port} %d is not a TCP port", port)
	}
	l, err := net.Listen("tcp", net.JoinHostPort("127.0.0.1", strconv.Itoa(port)))
	if err != nil {
		return input.Errorf("port", "{port} %d is in use on 127.0.0.1: choose another or leave it out", port)
	}
	return l.Close()
}

// Start starts the instance's server inside its memory and CPU limits; it refuses
// while a restore replaces its files (which starts it once done).
func (r Registry) Start(ctx context.Context, name string) (*State, error) {
	if err := r.notReplacing(name); err != nil {
		return nil, err
	}
	return r.start(ctx, name, "")
}

// CreateStarted creates the instance (Create) and starts it. One whose server does not
// start is destroyed (what its create made, and only that), its server's log first
// copied beside the registry's records, where the error names it: a create that failed
// leaves no instance behind.
func (r Registry) CreateStarted(ctx context.Context, spec Spec) (*State, []string, error) {
	_, warnings, err := r.Create(ctx, spec)
	if err != nil {
		return nil, nil, err
	}
	st, err := r.start(ctx, spec.Name, filepath.Join(r.Dir, spec.Name+".failed-start.log"))
	if err != nil {
		if derr := r.Destroy(context.WithoutCancel(ctx), spec.Name); derr != nil {
			// derr as text: the create failed as its start did (a refused removal
			// does not make it bad input).
			return nil, nil, fmt.Errorf("%w; removing the instance failed too (%v): storbench instance destroy --name %s", err, derr, spec.Name)
		}
		return nil, nil, fmt.Errorf("%w; instance %s is removed, with what its create made", err, spec.Name)
	}
	return st, warnings, nil
}

// start starts the instance's server; when it does not start, the error names the
// server's log, or keepLog, a copy of it taken then (when keepLog is not "").
func (r Registry) start(ctx context.Context, name, keepLog string) (*State, error) {
	st, err := r.Load(name)
	if err != nil {
		return nil, err
	}
	srv := servers[st.Engine]
	if srv.PID(st) != 0 {
		return st, nil
	}
	if err := checkPort(st.Port); err != nil {
		return nil, err
	}
	pid, err := srv.Start(ctx, st)
	if err != nil {
		// A server that came up too late for its start to succeed is not left running.
		if srv.PID(st) != 0 {
			err = errors.Join(err, srv.Stop(context.WithoutCancel(ctx), st))
		}
		log := srv.LogFile(st)
		if keepLog != "" {
			// The log goes with the failed create: name only a copy that was kept.
			if copyFile(log, keepLog) != nil {
				return nil, fmt.Errorf("start instance %s: %w", name, err)
			}
			log = keepLog
		}
		return nil, fmt.Errorf("start instance %s: %w (server log: %s)", name, err, log)
	}
	st.Limits, st.Cgroup = applyLimits(st, pid, r.cgroupName(st.Name))
	if err := r.save(st); err != nil {
		return nil, err
	}
	// Only a standby that runs may make its primary wait for it.
	if st.Sync {
		p, err := r.Load(st.ReplicaOf)
		if err == nil {
			err = servers[p.Engine].SetSyncStandby(ctx, p, st.Name)
		}
		if err != nil {
			return nil, fmt.Errorf("make %s wait for %s: %w", st.ReplicaOf, name, err)
		}
	}
	return st, nil
}

// Stop stops the instance's server (open sessions are ended) and removes its cgroup.
// It refuses while a live process holds a lease on the instance (a build, run or
// backup, a restore; see Use): that process would lose its server.
func (r Registry) Stop(ctx context.Context, name string) (*State, error) {
	return r.stopChecked(ctx, name, false)
}

// ForceStop is Stop even while the instance is in use: the users lose their server.
func (r Registry) ForceStop(ctx context.Context, name string) (*State, error) {
	return r.stopChecked(ctx, name, true)
}

func (r Registry) stopChecked(ctx context.Context, name string, force bool) (*State, error) {
	if _, err := r.Load(name); err != nil {
		return nil, err
	}
	// Under the registry's lock, which Use takes too: no lease can be taken between
	// the check and the server's stop.
	unlock, err := r.lock(ctx)
	if err != nil {
		return nil, err
	}
	defer unlock()
	if !force {
		if err := r.inUse(name); err != nil {
			return nil, err
		}
	}
	return r.stop(ctx, name)
}

// stop is Stop without looking at leases: its caller did, or holds one itself.
func (r Registry) stop(ctx context.Context, name string) (*State, error) {
	st, err := r.Load(name)
	if err != nil {
		return nil, err
	}
	if err := halt(ctx, st); err != nil {
		return nil, err
	}
	st.Cgroup = ""
	return st, r.save(st)
}

// halt stops st's server when it runs (its pid file names a process that is that
// server, see Server.PID) and removes its cgroup.
func halt(ctx context.Context, st *State) error {
	srv := servers[st.Engine]
	if srv.PID(st) != 0 {
		if err := srv.Stop(ctx, st); err != nil {
			return fmt.Errorf("stop instance %s: %w", st.Name, err)
		}
	}
	if err := releaseLimits(st); err != nil {
		return fmt.Errorf("stop instance %s: remove its cgroup: %w", st.Name, err)
	}
	return nil
}

// Status is an instance's state and whether its server runs.
type Status struct {
	*State
	PID int `json:"pid"` // 0: stopped
	// Enforced is the memory limit its cgroup enforces, read when asked, and whether
	// it is the one asked; "" when the instance is stopped or has no cgroup.
	Enforced string `json:"enforced,omitempty"`
	// Exposed says that the instance admits every user of the machine, and the fix
	// (see Exposer); "" when it admits only its own password.
	Exposed string `json:"exposed,omitempty"`
}

// Status reports one instance.
func (r Registry) Status(name string) (Status, error) {
	st, err := r.Load(name)
	if err != nil {
		return Status{}, err
	}
	srv := servers[st.Engine]
	s := Status{State: st, PID: srv.PID(st)}
	if e, ok := srv.(Exposer); ok {
		s.Exposed = e.Exposed(st)
	}
	if s.PID != 0 {
		s.Enforced = enforced(st)
	}
	return s, nil
}

// Destroy stops the instance and removes what storbench created for it: what it put
// in its directories (and the directories it created, unless they hold something
// else, see DestroyKept), its cgroup and its record. It refuses while a live process
// holds a lease on the instance (see Use).
func (r Registry) Destroy(ctx context.Context, name string) error {
	_, err := r.DestroyKept(ctx, name, false)
	return err
}

// DestroyLeft destroys the named instance if the registry holds one, usable or not:
// what a killed run of the owner left (a study's, whose instances are its own).
func (r Registry) DestroyLeft(ctx context.Context, name string) error {
	if !r.Recorded(name) {
		return nil
	}
	return r.Destroy(ctx, name)
}

// ForceDestroy is Destroy even while the instance is in use: the users lose their
// server.
func (r Registry) ForceDestroy(ctx context.Context, name string) error {
	_, err := r.DestroyKept(ctx, name, true)
	return err
}

// DestroyKept is Destroy (ForceDestroy with force), saying in one line for each
// directory storbench created but kept why it stays (it holds files storbench did
// not create), or, with force, what it left where a directory was not there.
//
// An incomplete or damaged instance (see record) is destroyed from its claim: its
// server is stopped by the pid in its directory's pid file (the engine checks that
// the process is that server) and its cgroup removed by name. A directory of the
// instance that is not there (a disk not mounted) or holds no marker is refused,
// naming it, before anything changes; with force the record goes and the line says
// what was left.
func (r Registry) DestroyKept(ctx context.Context, name string, force bool) (kept []string, err error) {
	st, err := r.record(name)
	if err != nil {
		return nil, err
	}
	absent := absentDirs(st)
	if !force {
		if err := r.checkFound(st, absent); err != nil {
			return nil, err
		}
	}
	// Under the registry's lock, which Use takes too: no lease can be taken between
	// the check and the server's stop.
	unlock, err := r.lock(ctx)
	if err != nil {
		return nil, fmt.Errorf("destroy instance %s: %w", name, err)
	}
	defer unlock()
	if !force {
		if err := r.inUse(name); err != nil {
			return nil, err
		}
	}
	if st.Condition != "" {
		st.Cgroup = r.cgroupName(name) // its record of it may be lost
	}
	// A record that cannot be read whole is trusted with a server only where the
	// directory's marker names this instance.
	if st.Condition == "" || markedFor(st.Path, name) {
		if err := halt(ctx, st); err != nil {
			return nil, err
		}
	}
	if st.Condition == "" {
		st.Cgroup = ""
		if err := r.save(st); err != nil {
			return nil, err
		}
	}
	// A synchronous standby's primary would wait for it forever.
	if st.Sync {
		if p, err := r.Load(st.ReplicaOf); err == nil && servers[p.Engine].PID(p) != 0 {
			if err := servers[p.Engine].SetSyncStandby(ctx, p, ""); err != nil {
				return nil, fmt.Errorf("stop %s waiting for %s: %w", p.Name, name, err)
			}
		}
	}
	if st.Path == "" {
		kept = append(kept, fmt.Sprintf("instance %s's directories and server, which storbench could not find, are left as they are", name))
	}
	for _, a := range absent {
		kept = append(kept, fmt.Sprintf("%s %s: whatever instance %s has there is left; remove it by hand once it is back", a.dir, a.why, name))
	}
	var errs []error
	for _, dir := range []string{st.Path, st.WALPath} {
		if dir == "" || slices.ContainsFunc(absent, func(a absence) bool { return a.dir == dir }) {
			continue
		}
		if st.Condition == Incomplete && !Claimed(dir) {
			continue // its create had not marked it: nothing in it is storbench's
		}
		var want *DirID
		if id, ok := st.Dirs[dir]; ok {
			want = &id
		}
		k, err := release(dir, name, want)
		errs = append(errs, err)
		if k != "" {
			kept = append(kept, k)
		}
	}
	if err := errors.Join(errs...); err != nil {
		return kept, fmt.Errorf("destroy instance %s: %w", name, err)
	}
	if err := removeFile(r.file(name)); err != nil {
		return kept, err
	}
	return kept, removeFile(r.claimFile(name)) // last: until then destroy can be run again
}

// checkFound refuses to destroy an instance whose directories storbench cannot
// find (its record lost them, or they are absent): the record is all that still
// points at its data. The fix names the registry's way to force it (forceHint).
func (r Registry) checkFound(st *State, absent []absence) error {
	if st.Path == "" {
		return fmt.Errorf("%w: instance %s is damaged (%s): storbench cannot find its directories or stop its server: do both by hand, then %s to forget it", input.ErrInvalid, st.Name, st.Problem, r.forceHint())
	}
	if len(absent) == 0 {
		return nil
	}
	var why []string
	for _, a := range absent {
		why = append(why, a.dir+" "+a.why)
	}
	return fmt.Errorf("%w: instance %s: %s: mount its disk and try again, or %s to forget the instance and leave its files there", input.ErrInvalid, st.Name, strings.Join(why, "; "), r.forceHint())
}

// absence is a directory of an instance that is not as storbench left it, and how.
type absence struct{ dir, why string }

// absentDirs are the instance's directories that are not there or hold no storbench
// marker: most often a disk not mounted, whose data the instance's record must not be
// forgotten for. An incomplete instance may not have made them yet: none is absent.
func absentDirs(st *State) []absence {
	if st.Condition == Incomplete {
		return nil
	}
	var out []absence
	for _, dir := range []string{st.Path, st.WALPath} {
		if dir == "" {
			continue
		}
		if _, err := os.Stat(dir); err != nil {
			out = append(out, absence{dir, "is not there (is its disk mounted?)"})
		} else if !Claimed(dir) {
			out = append(out, absence{dir, "holds no storbench marker (is its disk mounted?)"})
		}
	}
	return out
}

// copyFile copies the file from, in a server's directory (see localserver.OpenOwn:
// its user may have put a link to another file there), to to (replaced).
func copyFile(from, to string) error {
	f, err := localserver.OpenOwn(from, os.O_RDONLY, 0, nil)
	if err != nil {
		return err
	}
	defer f.Close()
	b, err := io.ReadAll(f)
	if err == nil {
		err = os.WriteFile(to, b, 0o644)
	}
	return err
}
