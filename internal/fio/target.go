package fio

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"golang.org/x/sys/unix"

	"github.com/storbench/storbench/internal/blockdev"
	"github.com/storbench/storbench/internal/fsplace"
	"github.com/storbench/storbench/internal/input"
)

// memoryFilesystems are those where O_DIRECT can succeed without any disk: a test
// there measures RAM.
var memoryFilesystems = map[string]bool{"tmpfs": true, "ramfs": true, "overlay": true, "devtmpfs": true, "hugetlbfs": true}

// workMarker marks the directory storbench made for its test file, so that only what
// it created is ever removed.
const workMarker = ".storbench-fio"

// dataFile is the test file's name in that directory.
const dataFile = "storbench-fio.dat"

// testFile is where the points' I/O goes: a file in a directory storbench created,
// or a raw device the user gave up.
type testFile struct {
	info    Target
	path    string
	workDir string // removed at the end; empty for a raw device
	// stale are test directories of earlier runs that were killed, removed now.
	stale []string
}

// freeSpaceMargin is left free beside the test file, for the filesystem's own needs
// and whatever else writes there.
const freeSpaceMargin = 256 << 20

// prepareFile checks the target and makes the test file's directory.
func prepareFile(opts Options) (*testFile, error) {
	if opts.Device != "" {
		return prepareDevice(opts)
	}
	st, err := os.Stat(opts.Dir)
	if err != nil || !st.IsDir() {
		return nil, input.Errorf("path", "{path} %s is not a directory: give a directory on the storage to test", opts.Dir)
	}
	dir, err := filepath.Abs(opts.Dir)
	if err != nil {
		return nil, input.Errorf("path", "{path}: %w", err)
	}
	// The test file's name differs only in the temporary directory's digits.
	if err := checkFileName(filepath.Join(dir, dataFile)); err != nil {
		return nil, input.Errorf("path", "{path} %s %w", dir, err)
	}
	p, err := blockdev.NewResolver().Resolve(dir, blockdev.RoleFio)
	if err != nil {
		return nil, err
	}
	if memoryFilesystems[p.FSType] && !opts.AllowMemoryFS {
		return nil, input.Errorf("path", "{path} %s is on %s, where direct I/O measures memory, not storage: give a directory on a disk (or {allow_memory_fs})",
			dir, p.FSType)
	}
	free, err := fsplace.FreeBytes(dir)
	if err != nil {
		return nil, fmt.Errorf("free space of %s: %w", dir, err)
	}
	if free < opts.Size+freeSpaceMargin {
		return nil, input.Errorf("size", "{path} %s has %d MiB free, the %d MiB test file needs %d MiB more: use a smaller {size}",
			dir, free>>20, opts.Size>>20, (opts.Size+freeSpaceMargin-free)>>20+1)
	}
	stale := removeStale(dir)
	work, err := os.MkdirTemp(dir, "storbench-fio-")
	if err != nil {
		return nil, input.Errorf("path", "cannot create the test file's directory in %s: %w", dir, err)
	}
	if err := os.WriteFile(filepath.Join(work, workMarker), []byte(strconv.Itoa(os.Getpid())+"\n"), 0o644); err != nil {
		os.Remove(work)
		return nil, err
	}
	t := &testFile{path: filepath.Join(work, dataFile), workDir: work, stale: stale,
		info: Target{Path: dir, FSType: p.FSType, Mount: p.Mount, Chain: p.Chain}}
	for _, d := range p.Devices {
		t.info.Devices = append(t.info.Devices, d.Name)
		t.info.Models = append(t.info.Models, blockdev.DeviceModel(d.Name))
	}
	return t, nil
}

// removeStale removes the test directories that killed runs left in dir: those with
// storbench's marker naming a process that no longer exists.
func removeStale(dir string) []string {
	dirs, _ := filepath.Glob(filepath.Join(dir, "storbench-fio-*"))
	var removed []string
	for _, d := range dirs {
		b, err := os.ReadFile(filepath.Join(d, workMarker))
		if err != nil {
			continue
		}
		pid, err := strconv.Atoi(strings.TrimSpace(string(b)))
		if err != nil || pid <= 0 || !errors.Is(unix.Kill(pid, 0), unix.ESRCH) {
			continue
		}
		if os.RemoveAll(d) == nil {
			removed = append(removed, d)
		}
	}
	return removed
}

// prepareDevice checks a raw block device: confirmed, a block device, not in use.
func prepareDevice(opts Options) (*testFile, error) {
	if !opts.DestroyDevice {
		return nil, input.Errorf("device", "{device} %s would overwrite everything on it: add {i_know_this_destroys_data}, or give {path} DIR for a test file",
			opts.Device)
	}
	// Absolute, as fio would otherwise strip a leading blank off a relative name.
	dev, err := filepath.Abs(opts.Device)
	if err != nil {
		return nil, input.Errorf("device", "{device}: %w", err)
	}
	if err := checkFileName(dev); err != nil {
		return nil, input.Errorf("device", "{device} %s %w", dev, err)
	}
	st, err := os.Stat(dev)
	if err != nil || st.Mode()&os.ModeDevice == 0 || st.Mode()&os.ModeCharDevice != 0 {
		return nil, input.Errorf("device", "{device} %s is not a block device", opts.Device)
	}
	// O_EXCL on a block device fails while it is mounted or held (LVM, md, a swap).
	fd, err := unix.Open(dev, unix.O_RDONLY|unix.O_EXCL, 0)
	if err != nil {
		if errors.Is(err, unix.EBUSY) {
			return nil, input.Errorf("device", "{device} %s is in use (mounted, or part of LVM/md/swap): refusing to write to it", opts.Device)
		}
		return nil, input.Errorf("device", "{device} %s: %w", opts.Device, err)
	}
	unix.Close(fd)
	name := filepath.Base(dev)
	if resolved, err := filepath.EvalSymlinks(dev); err == nil {
		name = filepath.Base(resolved)
	}
	return &testFile{path: dev, info: Target{Path: opts.Device, FSType: "raw device", Devices: []string{name},
		Models: []string{blockdev.DeviceModel(name)}, Chain: name}}, nil
}

// remove deletes the test file's directory, only if storbench made it.
func (t *testFile) remove() error {
	if t.workDir == "" {
		return nil
	}
	if _, err := os.Stat(filepath.Join(t.workDir, workMarker)); err != nil {
		return fmt.Errorf("not removing %s: it lacks storbench's marker", t.workDir)
	}
	return os.RemoveAll(t.workDir)
}
