package instance

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"golang.org/x/sys/unix"

	"github.com/storbench/storbench/internal/dburl"
	"github.com/storbench/storbench/internal/fsplace"
	"github.com/storbench/storbench/internal/input"
	"github.com/storbench/storbench/internal/interrupt"
)

// Backups keep their files in DIR/base, beside DIR's marker (the engines' backup tools
// want an empty directory of their own) and DIR/backup.json, which says how it was made.
func backupFiles(dir string) string { return filepath.Join(dir, "base") }

func backupRecord(dir string) string { return filepath.Join(dir, "backup.json") }

// BackupMethod is how a backup is taken.
type BackupMethod struct {
	// Logical: a dump of the database (restored into the running server); otherwise a
	// physical copy of the server's files.
	Logical bool `json:"logical"`
	Jobs    int  `json:"jobs"` // parallel jobs of a logical backup or restore
	// Cold: a physical copy of the files of the server stopped for it (and started
	// again), for a build without the engine's backup tool; restored as any
	// physical backup.
	Cold bool `json:"cold,omitempty"`
}

// ParseBackupMethod reads the method, physical or logical, and the jobs.
func ParseBackupMethod(method string, jobs int) (BackupMethod, error) {
	if jobs < 1 {
		return BackupMethod{}, input.Errorf("jobs", "{jobs} must be at least 1")
	}
	switch method {
	case "physical":
		return BackupMethod{Jobs: jobs}, nil
	case "logical":
		return BackupMethod{Logical: true, Jobs: jobs}, nil
	}
	return BackupMethod{}, input.Errorf("method", "{method} %q: use physical or logical", method)
}

// record is what backup.json says: how the backup was made and by which engine (""
// in a record older than the engine field: postgres, then the only one).
type record struct {
	BackupMethod
	Engine string `json:"engine,omitempty"`
}

// Transfer is a timed copy of a database: a backup or a restore.
type Transfer struct {
	Seconds float64 `json:"seconds"`
	Bytes   int64   `json:"bytes"`
	MBps    float64 `json:"mb_per_s"` // MB = 10^6 bytes
	// Progress is the bytes done at each second, measured from the destination's size.
	Progress []int64 `json:"progress"`
}

// Backup takes a backup of the running instance into dir (an empty or new directory,
// marked as storbench's, outside every instance's and backup's directories: see
// checkOutside). It holds a lease on the instance meanwhile, which builds and runs
// share and destroy, stop and restore refuse; it is refused while a restore holds
// one.
func (r Registry) Backup(ctx context.Context, name, dir string, how BackupMethod) (Transfer, error) {
	st, err := r.Load(name)
	if err != nil {
		return Transfer{}, err
	}
	if err := r.checkOutside("", dir, "back up to a directory outside every instance's and backup's", Registry{}); err != nil {
		return Transfer{}, err
	}
	// The lease first: a physical restore stops the server, and the refusal must name
	// the restore, not a stopped server.
	lease, err := r.takeLease(ctx, st, "storbench backup", forUse)
	if err != nil {
		return Transfer{}, err
	}
	defer lease.Release()
	srv := servers[st.Engine]
	if err := srv.CheckTools(st.BinDir, how); err != nil {
		return Transfer{}, fmt.Errorf("backup of instance %s: %w", name, err)
	}
	if srv.PID(st) == 0 {
		return Transfer{}, fmt.Errorf("instance %s is stopped: storbench instance start --name %s", name, name)
	}
	if _, _, err := claim(dir, name); err != nil {
		return Transfer{}, err
	}
	t, err := timed(backupFiles(dir), func() error {
		if !how.Cold {
			return srv.Backup(ctx, st, backupFiles(dir), how)
		}
		// The copy of a cleanly stopped server needs nothing replayed; the
		// instance is started again as start does (its limits, its cgroup).
		if _, err := r.stop(ctx, name); err != nil {
			return err
		}
		err := srv.Backup(ctx, st, backupFiles(dir), how)
		if _, serr := r.start(ctx, name, ""); err == nil {
			err = serr
		}
		return err
	})
	if err == nil {
		var b []byte
		b, err = json.Marshal(record{BackupMethod: how, Engine: st.Engine})
		if err == nil {
			err = os.WriteFile(backupRecord(dir), b, 0o644)
		}
	}
	if err != nil {
		_, _ = release(dir, name, nil)
		return Transfer{}, fmt.Errorf("backup of instance %s: %w", name, err)
	}
	return t, nil
}

// checkOutside refuses dir, named by setting ("--path", "backup directory"), when
// it is, lies inside or holds a directory of an instance that this registry, the
// default one or a registry linked into either records, or lies inside a directory
// storbench prepared (an instance's or a backup's, known by its marker), symbolic
// links resolved: destroying that instance or removing that backup would remove it
// with its own files, and the instance's backups would copy it. The instances of
// own (Dir "": none) are not refused: their owner takes them over or destroys them
// before it makes anything there. fix says what to give instead.
func (r Registry) checkOutside(key, dir, fix string, own Registry) error {
	named := keyed(key, "%s")
	owned := map[string]bool{}
	if own.Dir != "" {
		all, err := own.List()
		if err != nil {
			return err
		}
		for _, st := range all {
			owned[st.Name] = true
		}
	}
	to := Resolved(dir)
	for p := filepath.Dir(to); ; p = filepath.Dir(p) {
		if m, err := readMarker(p); err == nil && m.Instance != "" && !owned[m.Instance] {
			where := "instance " + m.Instance + "'s directory " + p
			if _, ok := backupTaken(p); ok {
				where = p + ", a backup of instance " + m.Instance
			}
			return input.Errorf(key, named+" is inside %s: destroying or removing that would remove it too; %s", dir, where, fix)
		}
		if p == filepath.Dir(p) {
			break
		}
	}
	regs := []Registry{r}
	if home, err := DefaultRegistry(); err == nil {
		regs = append(regs, home)
	}
	seen := map[string]bool{}
	if own.Dir != "" {
		if abs, err := filepath.Abs(own.Dir); err == nil {
			seen[abs] = true // its instances are owned; its links are the default's
		}
	}
	for i := 0; i < len(regs); i++ {
		abs, err := filepath.Abs(regs[i].Dir)
		if err != nil || seen[abs] {
			continue
		}
		seen[abs] = true
		if linked, err := regs[i].Linked(); err == nil {
			for _, l := range linked {
				regs = append(regs, l.Registry)
			}
		}
		all, err := regs[i].List()
		if err != nil {
			return err
		}
		for _, st := range all {
			for _, d := range []string{st.Path, st.WALPath} {
				if d == "" {
					continue
				}
				where := ""
				switch own := Resolved(d); {
				case to == own:
					where = "is"
				case Within(to, own):
					where = "is inside"
				case Within(own, to):
					where = "holds"
				default:
					continue
				}
				return input.Errorf(key, named+" %s instance %s's directory %s: destroying the one would remove the other, and backups would copy it; %s",
					dir, where, st.Name, d, fix)
			}
		}
	}
	return nil
}

// Resolved is path absolute and cleaned, with the symbolic links of its deepest
// existing ancestor resolved: two names of one directory, or of places below it
// yet to be made, compare equal.
func Resolved(path string) string {
	abs, err := filepath.Abs(path)
	if err != nil {
		abs = filepath.Clean(path)
	}
	rest := ""
	for p := abs; ; p = filepath.Dir(p) {
		if real, err := filepath.EvalSymlinks(p); err == nil {
			return filepath.Join(real, rest)
		}
		if p == filepath.Dir(p) {
			return abs
		}
		rest = filepath.Join(filepath.Base(p), rest)
	}
}

// Within tells whether path is dir or lies inside it (both Resolved, or clean).
func Within(path, dir string) bool {
	rel, err := filepath.Rel(dir, path)
	return err == nil && rel != ".." && !strings.HasPrefix(rel, "../")
}

// ExternalBackuper is a Server that can also back up a server storbench does not
// manage: from here, reached at its DSN over the network, or on its own host.
type ExternalBackuper interface {
	BackupExternal(ctx context.Context, dsn, dir string) error
	// HostBackupScript is a POSIX shell script, run on the server's own host (over
	// SSH), that backs the server at dsn up into a new directory under path there,
	// removes it (also on SIGTERM) and prints "BEGAN ENDED BYTES" (the backup tool's
	// start and end in seconds since the epoch, the backup's size); the script reads
	// stdin first (the password: never on a command line).
	HostBackupScript(dsn, path string) (script, stdin string, err error)
}

// ExternalBackupEngines are the engines whose external servers storbench can back
// up (see ExternalBackuper), by name.
func ExternalBackupEngines() []string {
	var out []string
	for _, name := range Engines() {
		if _, ok := servers[name].(ExternalBackuper); ok {
			out = append(out, name)
		}
	}
	return out
}

func externalBackuper(engineName string) (ExternalBackuper, error) {
	b, ok := servers[engineName].(ExternalBackuper)
	if !ok {
		return nil, fmt.Errorf("%w: storbench cannot take a physical backup of an external %s server", input.ErrInvalid, engineName)
	}
	return b, nil
}

// HostBackup is the script and its stdin that back an external engineName server
// up on its own host (see ExternalBackuper); ParseHostBackup reads what it printed.
func HostBackup(engineName, dsn, path string) (script, stdin string, err error) {
	b, err := externalBackuper(engineName)
	if err != nil {
		return "", "", err
	}
	return b.HostBackupScript(dsn, path)
}

// ParseHostBackup reads a host backup script's "BEGAN ENDED BYTES": the seconds
// are the backup tool's own, a difference of the host's clock (its skew does not
// matter).
func ParseHostBackup(out string) (Transfer, error) {
	var began, ended float64
	var t Transfer
	if _, err := fmt.Sscan(out, &began, &ended, &t.Bytes); err != nil || ended < began {
		return t, fmt.Errorf("the backup printed %q, not its times and size (%v)", strings.TrimSpace(out), err)
	}
	t.Seconds = ended - began
	if t.Seconds > 0 {
		t.MBps = float64(t.Bytes) / 1e6 / t.Seconds
	}
	return t, nil
}

// BackupExternal takes a physical backup of an external engineName server at dsn
// into dir (an empty or new directory, marked as owner's, removed with
// RemoveBackup(dir, owner)), timed like Backup. The backup is not restorable by
// storbench: it is a consolidation's noise, a copy of what the server holds.
func BackupExternal(ctx context.Context, engineName, dsn, dir, owner string) (Transfer, error) {
	b, err := externalBackuper(engineName)
	if err != nil {
		return Transfer{}, err
	}
	if _, _, err := claim(dir, owner); err != nil {
		return Transfer{}, err
	}
	t, err := timed(backupFiles(dir), func() error { return b.BackupExternal(ctx, dsn, backupFiles(dir)) })
	if err != nil {
		_, _ = release(dir, owner, nil)
		return Transfer{}, fmt.Errorf("backup of %s: %w", dburl.Redact(dsn), err)
	}
	return t, nil
}

// RemoveBackup removes a backup that Backup made of the named instance in dir, and
// dir itself only if storbench created it and nothing else is in it; anything without
// its marker, or whose marker was copied from elsewhere, stays.
func RemoveBackup(dir, name string) error {
	_, err := release(dir, name, nil)
	return err
}

// RestoreOptions say what a restore may replace.
type RestoreOptions struct {
	// Jobs are a logical restore's parallel jobs (0: the backup's).
	Jobs int
	// OtherInstance allows a backup of another instance than the one restored (a
	// study's consolidation gives each instance its target's base image); otherwise
	// that is refused, naming whose backup it is.
	OtherInstance bool
}

// Restore is RestoreWith: the instance's own backup.
func (r Registry) Restore(ctx context.Context, name, dir string, jobs int) (Transfer, error) {
	return r.RestoreWith(ctx, name, dir, RestoreOptions{Jobs: jobs})
}

// RestoreWith replaces the instance's database with the backup in dir. A physical
// backup stops the instance, copies the backup beside its files, swaps the copy in
// once it is complete and starts it again; a logical one is loaded into the running
// instance. A physical restore that cannot complete (no room, a failed copy, an
// interrupt) leaves the instance's data as it was. The restore holds a lease on the
// instance that no other may share: it is refused while a build, run or backup uses
// the instance (that process would lose its server or its database; nothing
// overrides this), and they are refused while it runs.
func (r Registry) RestoreWith(ctx context.Context, name, dir string, opts RestoreOptions) (Transfer, error) {
	st, err := r.Load(name)
	if err != nil {
		return Transfer{}, err
	}
	m, err := checkMarker(dir)
	if err != nil {
		return Transfer{}, err
	}
	var rec record
	b, err := os.ReadFile(backupRecord(dir))
	if err == nil {
		err = json.Unmarshal(b, &rec)
	}
	if err != nil {
		return Transfer{}, fmt.Errorf("%w: %s: no readable backup record: %w", input.ErrInvalid, dir, err)
	}
	if rec.Engine == "" {
		rec.Engine = "postgres"
	}
	if rec.Engine != st.Engine {
		return Transfer{}, fmt.Errorf("%w: %s is a backup of a %s instance; instance %s is %s", input.ErrInvalid, dir, rec.Engine, name, st.Engine)
	}
	if m.Instance != name && !opts.OtherInstance {
		taken, _ := backupTaken(dir)
		return Transfer{}, input.Errorf("force", "%s is a backup of instance %s (taken %s), not of %s: restoring it replaces %s's database with %s's; add {force} to do so",
			dir, m.Instance, taken.Format("2006-01-02 15:04:05"), name, name, m.Instance)
	}
	lease, err := r.takeLease(ctx, st, "storbench restore", forReplace)
	if err != nil {
		return Transfer{}, err
	}
	defer lease.Release()
	return r.restore(ctx, st, dir, rec, opts.Jobs)
}

// restore restores the backup in dir, made as rec says, into st's instance.
func (r Registry) restore(ctx context.Context, st *State, dir string, rec record, jobs int) (Transfer, error) {
	name := st.Name
	how := rec.BackupMethod
	if jobs > 0 {
		how.Jobs = jobs
	}
	srv := servers[st.Engine]
	if how.Logical {
		if err := srv.CheckTools(st.BinDir, how); err != nil {
			return Transfer{}, fmt.Errorf("restore of instance %s: %w", name, err)
		}
		if _, err := r.start(ctx, name, ""); err != nil {
			return Transfer{}, err
		}
		// The restore's volume is the dump read; the database's growth is not a file tree
		// storbench can watch, so progress follows nothing and the bytes are the dump's.
		t, err := timed("", func() error { return srv.Restore(ctx, st, backupFiles(dir), how) })
		if ctx.Err() != nil {
			return Transfer{}, interrupt.Error(fmt.Sprintf("restore of instance %s interrupted: its database is partly restored; restore it again", name), ctx.Err())
		}
		if err != nil {
			return Transfer{}, fmt.Errorf("restore of instance %s: %s", name, condense(err))
		}
		t.Bytes = treeSize(backupFiles(dir))
		if t.Seconds > 0 {
			t.MBps = float64(t.Bytes) / 1e6 / t.Seconds
		}
		return t, nil
	}
	if err := checkRoom(name, st.Path, treeSize(backupFiles(dir))); err != nil {
		return Transfer{}, err
	}
	running := srv.PID(st) != 0
	if _, err := r.stop(ctx, name); err != nil {
		return Transfer{}, err
	}
	copied := false
	t, err := timed(st.Path, func() error {
		if err := srv.Restore(ctx, st, backupFiles(dir), how); err != nil {
			return err
		}
		copied = true
		// The copy went through the host's page cache outside the instance's cgroup:
		// make it durable and drop it, or the instance would read its restored
		// database from memory that its limit does not count.
		for _, d := range []string{st.Path, st.WALPath} {
			if err := syncAndDrop(d); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil && !copied {
		return Transfer{}, r.abandoned(ctx, st, running, err)
	}
	if err != nil {
		return Transfer{}, fmt.Errorf("restore of instance %s: the backup was copied in but could not be synced: %w", name, err)
	}
	if st.WALPath != "" { // restored too, on its own target
		t.Bytes += treeSize(st.WALPath)
		t.MBps = float64(t.Bytes) / 1e6 / t.Seconds
	}
	// The restore is complete: an interrupt now would leave a stopped instance for
	// nothing.
	if _, err := r.start(context.WithoutCancel(ctx), name, ""); err != nil {
		return Transfer{}, err
	}
	return t, nil
}

// abandoned is the one-line error of a physical restore that failed (err) or was
// interrupted: the instance's files are as they were (the engine's Restore swaps the
// copy in only once it is complete, see ReplaceDirs); a running instance is started
// again, even after an interrupt (a quick start, and the user's database is back).
func (r Registry) abandoned(ctx context.Context, st *State, running bool, err error) error {
	restart := ""
	if running {
		if _, serr := r.start(context.WithoutCancel(ctx), st.Name, ""); serr != nil {
			restart = "; starting it again failed: " + condense(serr)
		}
	}
	if ctx.Err() != nil {
		return interrupt.Error(fmt.Sprintf("restore of instance %s interrupted: abandoned, its data is unchanged (the partial copy was removed)%s", st.Name, restart), ctx.Err())
	}
	return fmt.Errorf("restore of instance %s failed, its data is unchanged (the partial copy was removed)%s: %s", st.Name, restart, condense(err))
}

// condense is err's first line, with the number of lines left out: a copy that fails
// on a full disk reports every file it could not write.
func condense(err error) string {
	lines := strings.Split(strings.TrimSpace(err.Error()), "\n")
	if len(lines) == 1 {
		return lines[0]
	}
	return fmt.Sprintf("%s (and %d more lines)", lines[0], len(lines)-1)
}

// restoreMargin is the free space a restore leaves beyond its copy, besides 5% of
// it: a filesystem keeps a little for itself, and a server must still be able to
// write (PostgreSQL stops when it cannot create its next 16 MB WAL segment).
const restoreMargin = 64 << 20

// checkRoom refuses a restore of size bytes into the named instance whose copy does
// not fit beside the data already in dir (which stays until the copy is complete).
func checkRoom(name, dir string, size int64) error {
	free, err := fsplace.FreeBytes(dir)
	if err != nil {
		return fmt.Errorf("free space of %s: %w", dir, err)
	}
	if need := size + size/20 + restoreMargin; free < need {
		return fmt.Errorf("%w: restore of instance %s: the %d MB backup does not fit beside the current data in %s (%d MB free, %d MB needed): free some space there; the instance's data is unchanged",
			input.ErrInvalid, name, size/1e6, dir, free/1e6, need/1e6)
	}
	return nil
}

// Suffixes of a directory's new copy while a restore fills it, and of the directory
// it replaces while the copy is renamed into place.
const (
	restoringSuffix = ".restoring"
	replacedSuffix  = ".replaced"
)

// ReplaceDirs replaces each of dirs ("" : none) with a new copy that fill makes
// beside it, in staged[i] = dirs[i]+".restoring" (absent when fill is called; ""
// for ""): the directories stay as they are until every copy is complete, then the
// copies are renamed into place and the old directories removed. When fill fails
// (or is interrupted), its copies are removed and dirs are unchanged. Engines'
// physical restores go through it.
func ReplaceDirs(dirs []string, fill func(staged []string) error) error {
	staged := make([]string, len(dirs))
	for i, d := range dirs {
		if d == "" {
			continue
		}
		staged[i] = d + restoringSuffix
		// A previous restore's leftovers: a copy never completed, a directory replaced.
		if err := os.RemoveAll(staged[i]); err != nil {
			return err
		}
		if _, err := os.Stat(d); err == nil {
			if err := os.RemoveAll(d + replacedSuffix); err != nil {
				return err
			}
		}
	}
	discard := func() {
		for _, s := range staged {
			if s != "" {
				_ = os.RemoveAll(s)
			}
		}
	}
	if err := fill(staged); err != nil {
		discard()
		return err
	}
	var swapped []int
	undo := func() {
		for _, i := range swapped {
			_ = os.Rename(dirs[i], staged[i])
			_ = os.Rename(dirs[i]+replacedSuffix, dirs[i])
		}
		discard()
	}
	for i, d := range dirs {
		if d == "" {
			continue
		}
		if err := os.Rename(d, d+replacedSuffix); err != nil && !errors.Is(err, os.ErrNotExist) {
			undo()
			return err
		}
		if err := os.Rename(staged[i], d); err != nil {
			_ = os.Rename(d+replacedSuffix, d)
			undo()
			return err
		}
		swapped = append(swapped, i)
	}
	for _, d := range dirs {
		if d != "" {
			// A failure leaves only a name of storbench's: the next restore or destroy
			// removes it.
			_ = os.RemoveAll(d + replacedSuffix)
		}
	}
	return nil
}

// timed runs copy and samples the size of dest every second ("" : no samples): what
// it gained since copy began (a restore copies beside the data it replaces).
func timed(dest string, copy func() error) (Transfer, error) {
	var t Transfer
	before := treeSize(dest)
	done := make(chan struct{})
	var wg sync.WaitGroup
	wg.Go(func() {
		if dest == "" {
			return
		}
		tick := time.NewTicker(time.Second)
		defer tick.Stop()
		for {
			select {
			case <-done:
				return
			case <-tick.C:
				t.Progress = append(t.Progress, max(treeSize(dest)-before, 0))
			}
		}
	})
	start := time.Now()
	err := copy()
	t.Seconds = time.Since(start).Seconds()
	close(done)
	wg.Wait()
	if dest != "" {
		t.Bytes = treeSize(dest)
	}
	if t.Seconds > 0 {
		t.MBps = float64(t.Bytes) / 1e6 / t.Seconds
	}
	return t, err
}

// treeSize is the size of the regular files under dir.
func treeSize(dir string) int64 {
	var n int64
	_ = filepath.WalkDir(dir, func(_ string, d fs.DirEntry, err error) error {
		if err == nil && d.Type().IsRegular() {
			if info, err := d.Info(); err == nil {
				n += info.Size()
			}
		}
		return nil
	})
	return n
}

// syncAndDrop writes every file under dir to storage and drops its pages from the
// page cache.
func syncAndDrop(dir string) error {
	if dir == "" {
		return nil
	}
	return filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil || !d.Type().IsRegular() {
			return err
		}
		f, err := os.Open(path)
		if err != nil {
			return err
		}
		defer f.Close()
		if err := f.Sync(); err != nil {
			return fmt.Errorf("sync %s: %w", path, err)
		}
		return unix.Fadvise(int(f.Fd()), 0, 0, unix.FADV_DONTNEED)
	})
}
