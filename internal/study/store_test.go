package study

import (
	"errors"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/storbench/storbench/internal/input"
	"github.com/storbench/storbench/internal/testsupport/looptest"
)

// ext4Shutdown is EXT4_IOC_SHUTDOWN (_IOR('X', 125, __u32)) and goingNoLogFlush its
// EXT4_GOING_FLAGS_NOLOGFLUSH: the filesystem stops at once, its journal not
// committed, as after a power cut or an I/O error that remounts it read-only
// (xfstests' "godown" does the same).
const (
	ext4Shutdown    = 0x8004587D
	goingNoLogFlush = 2
)

// crash stops the ext4 filesystem of d at once without writing what is not yet
// synced, then mounts it again (replaying its journal), as the machine would find it
// after a reboot.
func crash(t *testing.T, d *looptest.Disk) {
	t.Helper()
	f, err := os.Open(d.Dir)
	if err != nil {
		t.Fatal(err)
	}
	err = unix.IoctlSetPointerInt(int(f.Fd()), ext4Shutdown, goingNoLogFlush)
	f.Close()
	if err != nil {
		t.Skipf("ext4 shutdown ioctl: %v", err)
	}
	for _, args := range [][]string{{"umount", d.Dir}, {"mount", d.Dev, d.Dir}} {
		if out, err := exec.Command(args[0], args[1:]...).CombinedOutput(); err != nil {
			t.Fatalf("%s: %v: %s", strings.Join(args, " "), err, out)
		}
	}
}

// A step the store said it stored is there after a crash seconds later (the tester
// found steps/0001.json gone and the marker empty after ext4 went read-only on an I/O
// error ~4 s after the step was stored). The journal's commit interval is set past
// the test, so that only what the store syncs itself can be on the disk.
func TestStoredStepSurvivesACrash(t *testing.T) {
	d := looptest.Mount(t, 64<<20)
	if out, err := exec.Command("mount", "-o", "remount,commit=600", d.Dir).CombinedOutput(); err != nil {
		t.Skipf("cannot set the journal's commit interval: %v: %s", err, out)
	}
	s := mustParse(t, minimal)
	steps := Plan(s)
	dir := filepath.Join(d.Dir, "results")
	store, err := OpenStore(dir, s, []byte(minimal), false, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	if err := store.writeJSON("plan.json", steps); err != nil {
		t.Fatal(err)
	}
	if err := store.SaveStep(&StepResult{Step: steps[0], Started: time.Now(), Ended: time.Now()}); err != nil {
		t.Fatal(err)
	}
	store.Unlock()
	crash(t, d)

	read, err := ReadStore(dir)
	if err != nil {
		t.Fatalf("the store after a crash: %v", err)
	}
	stored, err := read.Steps()
	if err != nil || len(stored) != 1 || stored[0].Step.ID != steps[0].ID {
		t.Fatalf("after a crash the store holds steps %v (%v), want the stored step %s", stored, err, steps[0].ID)
	}
	if err := CheckStore(dir, s); err != nil {
		t.Errorf("after a crash the store is not the study's: %v", err)
	}
}

// A huge step file (sparse: a crash, a copy gone wrong) is refused without being read
// into memory, beyond the bound by its size, under it at its first bytes; the other
// steps are read.
func TestHugeStepFileNotRead(t *testing.T) {
	store, steps := plannedStore(t)
	if err := store.SaveStep(&StepResult{Step: steps[1]}); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		size int64
		want string
	}{
		{2 << 30, "steps/0001.json is 2GB, more than the 1GB a step file may hold"},
		{512 << 20, "steps/0001.json is not JSON storbench wrote: invalid character"},
	} {
		f := filepath.Join(store.Dir, "steps", "0001.json")
		if err := os.WriteFile(f, nil, 0o644); err != nil {
			t.Fatal(err)
		}
		if err := os.Truncate(f, c.size); err != nil {
			t.Fatal(err)
		}
		var before, after runtime.MemStats
		runtime.ReadMemStats(&before)
		stored, bad, err := store.ReadSteps()
		runtime.ReadMemStats(&after)
		if alloc := after.TotalAlloc - before.TotalAlloc; alloc > 64<<20 {
			t.Errorf("a %d MiB step file: %d MiB allocated reading the store", c.size>>20, alloc>>20)
		}
		if err != nil || len(stored) != 1 || stored[0].Step.ID != steps[1].ID || len(bad) != 1 || bad[0].Seq != 1 || !strings.HasPrefix(bad[0].String(), c.want) {
			t.Errorf("a %d MiB step file: stored %d, unreadable %v (%v); want step 2 stored and step 1 named with %q", c.size>>20, len(stored), bad, err, c.want)
		}
	}
}

// A study file changed since its store was made is refused without --restart, also
// when lines were only added at its end (before, a stored file that was a beginning
// of the new one was taken as cut short by a crash: appended settings mixed into old
// steps), and when the stored copy is empty (a beginning of any file).
func TestChangedStudyFileRefused(t *testing.T) {
	s := mustParse(t, minimal)
	open := func(dir, file string) error {
		store, err := OpenStore(dir, s, []byte(file), false, io.Discard)
		if err == nil {
			store.Unlock()
		}
		return err
	}
	// A store of minimal, then opened again with file.
	for _, c := range []struct{ name, file string }{
		{"a ramp-up added under the last experiment", minimal + "    ramp: 2m\n"},
		{"a metrics block added", minimal + "metrics:\n  io_latency: \"off\"\n"},
	} {
		mustParse(t, c.file)
		dir := filepath.Join(t.TempDir(), "results")
		if err := open(dir, minimal); err != nil {
			t.Fatal(err)
		}
		if err := open(dir, minimal); err != nil {
			t.Errorf("the same study file again: %v", err)
		}
		if err := open(dir, c.file); !errors.Is(err, input.ErrInvalid) || !strings.Contains(err.Error(), "the study file changed since") {
			t.Errorf("%s: %v, want the study file changed", c.name, err)
		}
		if err := os.WriteFile(filepath.Join(dir, "study.yaml"), nil, 0o644); err != nil {
			t.Fatal(err)
		}
		if err := open(dir, minimal); !errors.Is(err, input.ErrInvalid) || !strings.Contains(err.Error(), "the study file changed since") {
			t.Errorf("a store whose study.yaml is empty: %v, want the study file changed", err)
		}
	}
}
