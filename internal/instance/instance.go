// Package instance manages database servers that storbench creates on a storage
// target (a directory the user names): create, start, stop, status, destroy, list.
// Each instance is recorded in a small state file so that later invocations find it,
// and each directory storbench creates carries a marker file, so that destroy never
// removes anything storbench did not create. An engine runs its server behind Server.
package instance

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"time"

	"github.com/storbench/storbench/internal/bytesize"
	"github.com/storbench/storbench/internal/durable"
	"github.com/storbench/storbench/internal/input"
)

// Spec is what the user asks of an instance.
type Spec struct {
	Name    string `json:"name"`
	Engine  string `json:"engine"`
	Path    string `json:"path"`               // the storage under test: data files
	WALPath string `json:"wal_path,omitempty"` // optional second target: the log
	// MemoryBytes sizes the engine's caches and, where cgroups may be used, limits the
	// whole instance (processes and page cache). 0: engine defaults, no limit.
	MemoryBytes    int64   `json:"memory_bytes,omitempty"`
	CPUs           string  `json:"cpus,omitempty"` // e.g. "0-1"
	IOLimit        IOLimit `json:"io_limit,omitempty"`
	Port           int     `json:"port"`
	MaxConnections int     `json:"max_connections"`
	// ReplicaOf names the instance this one is a streaming standby of; with Sync the
	// primary's commits wait for it (synchronous commit, the papers' availability group).
	ReplicaOf string `json:"replica_of,omitempty"`
	Sync      bool   `json:"sync,omitempty"`
	// BinDir is the directory of the server build's programs, which choose its
	// version ("": the engine's default build, e.g. pg_config --bindir's); once
	// created, the build that created it, the one that runs it.
	BinDir string `json:"bin_dir"`
}

// State is an instance as recorded: its spec and what was actually applied.
type State struct {
	Spec
	CreatedAt time.Time         `json:"created_at"`
	Version   string            `json:"version"`
	Settings  map[string]string `json:"settings"` // written to the engine's configuration
	// Limits says which memory and CPU limits are in force and how, or why not.
	Limits []string `json:"limits"`
	// Cgroup is the cgroup's name when one holds the instance.
	Cgroup string `json:"cgroup,omitempty"`
	// IOThrottle is how IOLimit was put in force at the last start (nil: not).
	IOThrottle *IOThrottle `json:"io_throttle,omitempty"`
	// Password is that of the user the DSN names; random, kept only here (the state
	// file is 0600). Absent in PostgreSQL instances created before they had one.
	Password string `json:"password,omitempty"`
	// Dirs are the identities of Path and WALPath when they were claimed: destroy
	// removes nothing in a directory that is no longer the one storbench prepared.
	// Absent in states recorded before: then only the markers' are checked (see release).
	Dirs map[string]DirID `json:"dirs,omitempty"`
	// Condition is "" for a usable record, else Incomplete or Damaged (see record):
	// such an instance is listed and can be destroyed, nothing else; Problem says what
	// is wrong with a damaged one.
	Condition string `json:"-"`
	Problem   string `json:"-"`
}

// DSN is the URL build, run and check connect with (its Server's DSN). It holds the
// password: store and print it only through dburl.Redact.
func (st *State) DSN() string { return servers[st.Engine].DSN(st) }

// Server runs one engine's server for an instance.
type Server interface {
	// Init creates the database files in st.Path (and st.WALPath) and records in st
	// the settings, binaries and version it used; with primary, as its standby.
	Init(ctx context.Context, st *State, primary *State) error
	// SetSyncStandby makes the running primary's commits wait for the standby named
	// name ("" : for none).
	SetSyncStandby(ctx context.Context, primary *State, name string) error
	// Start starts the server and returns its main process id; limit is called with
	// that pid before the server accepts connections from storbench.
	Start(ctx context.Context, st *State) (pid int, err error)
	Stop(ctx context.Context, st *State) error
	// PID is the server's main process id, 0 when it is not running.
	PID(st *State) int
	// Backup writes a backup of the running server into dir.
	Backup(ctx context.Context, st *State, dir string, how BackupMethod) error
	// Restore replaces the database with the backup in dir: a physical one into the
	// stopped server's files, a logical one into the running server.
	Restore(ctx context.Context, st *State, dir string, how BackupMethod) error
	// MinMemory is the least MemoryBytes the server starts, serves and stops within.
	MinMemory() int64
	// CacheSetting names the setting of the engine's own cache, which MemoryBytes sizes.
	CacheSetting() string
	// CheckReplica refuses (an input error) making an instance a streaming standby of
	// another (Spec.ReplicaOf) when the engine has none.
	CheckReplica() error
	// Installed tells why the server cannot be set up here (nil: it can): an error
	// wrapping input.ErrInvalid for a setting to fix, else the binaries' absence.
	Installed() error
	// CheckBinDir refuses (an input error naming bindir) a directory without the
	// engine's server programs.
	CheckBinDir(dir string) error
	// CheckTools refuses (an input error naming bindir) backing up or restoring an
	// instance of the build in dir by how (a standby is a physical backup), when the
	// build lacks the engine's tools for it: its own version's, never another's.
	CheckTools(dir string, how BackupMethod) error
	// LogFile is the server's log, where it says why it did not start.
	LogFile(st *State) string
	// DSN is the URL of the instance's database, with the password of its user.
	DSN(st *State) string
}

// Exposer is a Server some of whose instances admit every user of the machine
// (those an earlier storbench created, before they had a password).
type Exposer interface {
	// Exposed says so of st, in one sentence with the fix; "" when st admits only
	// its own password.
	Exposed(st *State) string
}

var servers = map[string]Server{}

// Register makes an engine's server available; engine packages call it from init.
func Register(engineName string, s Server) { servers[engineName] = s }

// CheckMemory refuses an instance memory its engine's server cannot run in: it would
// fail to start, or start and then be killed by the memory limit, even on stop.
// An unknown engine is left to Create's own check.
func CheckMemory(engineName string, memoryBytes int64) error {
	srv, ok := servers[engineName]
	if !ok || memoryBytes >= srv.MinMemory() {
		return nil
	}
	return input.Errorf("memory", "{memory} %s is too small (a %s server needs at least %s)", bytesize.Format(memoryBytes), engineName, bytesize.Format(srv.MinMemory()))
}

// CheckBinDir refuses a directory without the server programs of engine (an unknown
// engine is left to Create's own check).
func CheckBinDir(engineName, dir string) error {
	srv, ok := servers[engineName]
	if !ok {
		return nil
	}
	return srv.CheckBinDir(dir)
}

// CheckTools refuses a backup or restore by how of an instance of engine's build in
// dir ("": the default build) that the build has no tools for (Server.CheckTools).
func CheckTools(engineName, dir string, how BackupMethod) error {
	srv, ok := servers[engineName]
	if !ok {
		return nil
	}
	return srv.CheckTools(dir, how)
}

// Engines are the engines whose servers are registered, by name.
func Engines() []string {
	names := make([]string, 0, len(servers))
	for n := range servers {
		names = append(names, n)
	}
	sort.Strings(names)
	return names
}

// Installed tells why engine's server cannot be set up here (nil: it can): an error
// wrapping input.ErrInvalid for a setting to fix or an unknown engine, else the
// binaries' absence.
func Installed(engine string) error {
	srv, ok := servers[engine]
	if !ok {
		return fmt.Errorf("%w: engine %q is not supported: use %s", input.ErrInvalid, engine, strings.Join(Engines(), " or "))
	}
	return srv.Installed()
}

// Registry is the directory of state files.
type Registry struct {
	Dir string
	// Forcing is the command that destroys the registry's instances whatever the
	// refusals (an instance in use, its directories not found), named by them: a
	// study's (storbench study clean --force RESULTS), whose instances no instance
	// command reaches. "" : the instance commands' --force.
	Forcing string
}

// forceHint is how a refusal of destroy tells to override it.
func (r Registry) forceHint() string {
	if r.Forcing != "" {
		return "run " + r.Forcing
	}
	return "add --force"
}

// DefaultRegistry is $STORBENCH_HOME/instances, else ~/.local/state/storbench/instances.
func DefaultRegistry() (Registry, error) {
	if h := os.Getenv("STORBENCH_HOME"); h != "" {
		return Registry{Dir: filepath.Join(h, "instances")}, nil
	}
	home, err := os.UserHomeDir()
	if err != nil {
		return Registry{}, fmt.Errorf("find the instance registry: %w (set STORBENCH_HOME)", err)
	}
	return Registry{Dir: filepath.Join(home, ".local", "state", "storbench", "instances")}, nil
}

var validName = regexp.MustCompile(`^[a-z][a-z0-9_-]{0,62}$`)

func (r Registry) file(name string) string { return filepath.Join(r.Dir, name+".json") }

// StateFile is where the named instance's state is recorded, its password with it.
func (r Registry) StateFile(name string) string { return r.file(name) }

// Load reads a usable instance's state; an incomplete or damaged one is refused,
// naming destroy.
func (r Registry) Load(name string) (*State, error) {
	st, err := r.record(name)
	if err != nil {
		return nil, err
	}
	if why := st.Unusable(); why != "" {
		return nil, fmt.Errorf("%w: %s", input.ErrInvalid, why)
	}
	return st, nil
}

func (r Registry) save(st *State) error {
	if err := os.MkdirAll(r.Dir, 0o755); err != nil {
		return err
	}
	b, err := json.MarshalIndent(st, "", "  ")
	if err != nil {
		return err
	}
	// 0600: the state may hold the DSN's password.
	return durable.WriteFile(r.file(st.Name), append(b, '\n'), 0o600)
}

// List returns every instance the registry holds, by name: an incomplete or damaged
// one too (its Condition says so), so that one bad record hides nothing else.
func (r Registry) List() ([]*State, error) {
	names, err := r.names()
	if err != nil {
		return nil, err
	}
	var out []*State
	for _, name := range names {
		if st, err := r.record(name); err == nil { // else destroyed meanwhile
			out = append(out, st)
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out, nil
}

// Claimed tells whether dir is a directory storbench prepared for an instance (it
// holds the marker): its space already holds that instance's data.
func Claimed(dir string) bool {
	_, err := os.Stat(filepath.Join(dir, markerFile))
	return err == nil
}
