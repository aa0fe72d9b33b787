// Package looptest gives tests a block device of their own: a loop device over a
// sparse file, raw or with a fresh ext4 mounted on it. Its /proc/diskstats line
// counts the test's I/O only, whatever else writes to the machine's disks.
package looptest

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

// Disk is a loop device attached for the test.
type Disk struct {
	Dev          string // /dev/loopN
	Name         string // loopN, its name in /proc/diskstats and /sys/block
	Major, Minor uint32
	Backing      string // the file under it, in a temp dir of the test
	Dir          string // where its filesystem is mounted (Mount only)
}

// Attach attaches a loop device over a new sparse file of size bytes and detaches it
// when the test ends. It skips the test when not root or when no loop device can be
// had here (a container without /dev/loop*, all of them taken).
func Attach(t testing.TB, size int64) *Disk {
	t.Helper()
	return AttachIn(t, t.TempDir(), size)
}

// AttachIn is Attach with the backing file in dir, e.g. on a tmpfs (/dev/shm) to test
// a loop device whose backing file lies on no disk.
func AttachIn(t testing.TB, dir string, size int64) *Disk {
	t.Helper()
	if os.Geteuid() != 0 {
		t.Skip("not root: a loop device needs root")
	}
	// A directory of its own in dir: tests running side by side with the same dir
	// (/dev/shm) each get their own file, not one they would all format and write.
	own, err := os.MkdirTemp(dir, "looptest-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(own) })
	backing := filepath.Join(own, "loop.img")
	if err := os.WriteFile(backing, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Truncate(backing, size); err != nil {
		t.Fatal(err)
	}
	out, err := exec.Command("losetup", "--find", "--show", backing).CombinedOutput()
	if err != nil {
		t.Skipf("no loop device here: losetup: %v: %s", err, strings.TrimSpace(string(out)))
	}
	dev := strings.TrimSpace(string(out))
	// Registered before any mount's cleanup, so it runs after the unmount.
	t.Cleanup(func() {
		if out, err := exec.Command("losetup", "--detach", dev).CombinedOutput(); err != nil {
			t.Errorf("losetup --detach %s: %v: %s", dev, err, strings.TrimSpace(string(out)))
		}
	})
	var st unix.Stat_t
	if err := unix.Stat(dev, &st); err != nil {
		t.Fatal(err)
	}
	return &Disk{Dev: dev, Name: filepath.Base(dev), Major: unix.Major(st.Rdev), Minor: unix.Minor(st.Rdev), Backing: backing}
}

// Mount makes a fresh ext4 of size bytes on a loop device (Attach) and mounts it in a
// temp dir until the test ends. No blocks are reserved for root, so that what is free
// is what the test can fill; inode tables and journal are written by mkfs, not in the
// background after the mount, where those writes would count with the test's.
func Mount(t testing.TB, size int64) *Disk {
	t.Helper()
	return MountIn(t, t.TempDir(), size)
}

// MountIn is Mount with the backing file in dir (see AttachIn).
func MountIn(t testing.TB, dir string, size int64) *Disk {
	t.Helper()
	return mount(t, AttachIn(t, dir, size))
}

// MountWith is Mount with more options of mkfs.ext4, e.g. "-N", "2048" for a
// filesystem with few inodes.
func MountWith(t testing.TB, size int64, mkfs ...string) *Disk {
	t.Helper()
	return mount(t, Attach(t, size), mkfs...)
}

func mount(t testing.TB, d *Disk, mkfs ...string) *Disk {
	t.Helper()
	Format(t, d, mkfs...)
	d.Dir = t.TempDir()
	if out, err := exec.Command("mount", d.Dev, d.Dir).CombinedOutput(); err != nil {
		t.Skipf("cannot mount a loop device here: %v: %s", err, strings.TrimSpace(string(out)))
	}
	t.Cleanup(func() {
		// A process the test left holding a file there makes this fail: reported,
		// with the processes that hold it. One still exiting (its files are closed
		// after it has left /proc's lists) is waited for, a few seconds.
		var out []byte
		var err error
		for wait := 50 * time.Millisecond; ; wait *= 2 {
			if out, err = exec.Command("umount", d.Dir).CombinedOutput(); err == nil || wait > 2*time.Second || !strings.Contains(string(out), "busy") {
				break
			}
			time.Sleep(wait)
		}
		if err != nil {
			t.Errorf("umount %s: %v: %s (held by: %s)", d.Dir, err, strings.TrimSpace(string(out)), strings.Join(Holders(d.Dir), "; "))
		}
	})
	return d
}

// Format makes a fresh ext4 on an attached loop device (Attach), with more options of
// mkfs.ext4 if given, for a test that mounts it itself (in another mount namespace).
func Format(t testing.TB, d *Disk, mkfs ...string) {
	t.Helper()
	args := append([]string{"-q", "-F", "-m", "0", "-E", "lazy_itable_init=0,lazy_journal_init=0"}, mkfs...)
	if out, err := exec.Command("mkfs.ext4", append(args, d.Dev)...).CombinedOutput(); err != nil {
		t.Skipf("no mkfs.ext4 here: %v: %s", err, strings.TrimSpace(string(out)))
	}
}

// Holders are the processes with a working directory or an open file under dir, each
// as "pid command line", for a failure message.
func Holders(dir string) []string {
	var found []string
	procs, _ := filepath.Glob("/proc/[0-9]*")
	for _, p := range procs {
		links, _ := filepath.Glob(filepath.Join(p, "fd", "*"))
		for _, l := range append(links, filepath.Join(p, "cwd")) {
			if to, err := os.Readlink(l); err == nil && (to == dir || strings.HasPrefix(to, dir+"/")) {
				cmd, _ := os.ReadFile(filepath.Join(p, "cmdline"))
				found = append(found, filepath.Base(p)+" "+strings.TrimSpace(strings.ReplaceAll(string(cmd), "\x00", " ")))
				break
			}
		}
	}
	return found
}
