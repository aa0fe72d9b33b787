package blockdev

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"golang.org/x/sys/unix"
)

// HostScript prints, on a host reached over SSH, everything a Resolver reads there:
// for each path on its stdin (one a line, see HostInput) its st_dev and real path,
// the host's mountinfo, and every block device's sysfs entry (real directory, the
// attributes DeviceInfo and the resolution read, slaves and holders), with the
// st_dev and real path of each loop device's backing file. One command, whatever the
// stack, so that a host's provenance costs one round trip; POSIX sh with stat,
// readlink and head (coreutils or busybox).
const HostScript = `while IFS= read -r p; do
	printf 'P\t%s\t%s\t%s\n' "$p" "$(stat -L -c %d "$p" 2>/dev/null)" "$(readlink -f "$p" 2>/dev/null)"
done
while IFS= read -r l; do printf 'M\t%s\n' "$l"; done </proc/self/mountinfo
for d in /sys/class/block/*; do
	[ -e "$d" ] || continue
	n=${d##*/}
	r=$(readlink -f "$d")
	printf 'D\t%s\t%s\n' "$n" "$r"
	for f in ` + hostAttributes + `; do
		if [ -f "$r/$f" ]; then printf 'F\t%s\t%s\t%s\n' "$n" "$f" "$(head -n 1 "$r/$f" 2>/dev/null)"; fi
	done
	for s in "$r"/slaves/*; do if [ -e "$s" ]; then printf 'S\t%s\t%s\n' "$n" "${s##*/}"; fi; done
	for s in "$r"/holders/*; do if [ -e "$s" ]; then printf 'H\t%s\t%s\n' "$n" "${s##*/}"; fi; done
	if [ -f "$r/loop/backing_file" ]; then
		b=$(head -n 1 "$r/loop/backing_file")
		printf 'P\t%s\t%s\t%s\n' "$b" "$(stat -L -c %d "$b" 2>/dev/null)" "$(readlink -f "$b" 2>/dev/null)"
	fi
done
`

// hostAttributes are the sysfs files of a block device that HostScript copies: those
// node and deviceInfo read.
const hostAttributes = "dev partition dm/name md/level loop/backing_file device/vendor device/model queue/rotational queue/scheduler " +
	"queue/nr_requests queue/logical_block_size queue/physical_block_size queue/write_cache queue/discard_max_bytes queue/discard_granularity"

// HostInput is HostScript's stdin for these paths. A path with a line break cannot
// be sent; it is then not found on the host.
func HostInput(paths ...string) string {
	var b strings.Builder
	for _, p := range paths {
		if !strings.ContainsAny(p, "\n\r") {
			b.WriteString(p + "\n")
		}
	}
	return b.String()
}

// HostSys is a host's /sys and /proc as HostScript printed them, laid out in a
// temporary directory as the kernel lays them out, so that the Resolver that reads
// this machine's reads the host's. Close removes it.
type HostSys struct {
	Resolver
	root string
}

// hostPath is a path HostScript stated: its st_dev and real path.
type hostPath struct {
	dev  uint64
	real string
}

// ReadHost lays out HostScript's output. Lines it does not know, and paths outside
// /sys/devices, are left out: the host's word is not trusted with this machine's files.
func ReadHost(out string) (*HostSys, error) {
	root, err := os.MkdirTemp("", "storbench-host-")
	if err != nil {
		return nil, err
	}
	h := &HostSys{root: root}
	if err := h.layOut(out); err != nil {
		h.Close()
		return nil, err
	}
	return h, nil
}

func (h *HostSys) layOut(out string) error {
	paths := map[string]hostPath{}
	dirs := map[string]string{} // kernel name → its directory under root
	var mountinfo []string
	type link struct{ kind, from, to string }
	var links []link
	attrs := strings.Fields(hostAttributes)
	for line := range strings.Lines(out) {
		f := strings.Split(strings.TrimSuffix(line, "\n"), "\t")
		switch {
		case f[0] == "M" && len(f) == 2:
			mountinfo = append(mountinfo, f[1])
		case f[0] == "P" && len(f) == 4:
			if dev, err := strconv.ParseUint(f[2], 10, 64); err == nil {
				paths[f[1]] = hostPath{dev: dev, real: f[3]}
			}
		case f[0] == "D" && len(f) == 3 && validName(f[1]):
			real := filepath.Clean(f[2])
			if !strings.HasPrefix(real, "/sys/devices/") || real != f[2] {
				continue
			}
			dirs[f[1]] = filepath.Join(h.root, real)
			if err := os.MkdirAll(dirs[f[1]], 0o755); err != nil {
				return err
			}
		case f[0] == "F" && len(f) == 4 && slices.Contains(attrs, f[2]) && dirs[f[1]] != "":
			file := filepath.Join(dirs[f[1]], f[2])
			if err := os.MkdirAll(filepath.Dir(file), 0o755); err != nil {
				return err
			}
			if err := os.WriteFile(file, []byte(f[3]+"\n"), 0o644); err != nil {
				return err
			}
		case (f[0] == "S" || f[0] == "H") && len(f) == 3 && validName(f[2]):
			links = append(links, link{map[string]string{"S": "slaves", "H": "holders"}[f[0]], f[1], f[2]})
		}
	}
	if len(mountinfo) == 0 {
		return errors.New("the host printed no mountinfo")
	}
	sys := filepath.Join(h.root, "sys")
	for name, dir := range dirs {
		if err := hostLink(dir, filepath.Join(sys, "class", "block", name)); err != nil {
			return err
		}
		if dev, err := readSysfs(filepath.Join(dir, "dev")); err == nil && validName(dev) {
			if err := hostLink(dir, filepath.Join(sys, "dev", "block", dev)); err != nil {
				return err
			}
		}
	}
	for _, l := range links {
		if dirs[l.from] != "" && dirs[l.to] != "" {
			if err := hostLink(dirs[l.to], filepath.Join(dirs[l.from], l.kind, l.to)); err != nil {
				return err
			}
		}
	}
	proc := filepath.Join(h.root, "proc")
	if err := os.MkdirAll(filepath.Join(proc, "self"), 0o755); err != nil {
		return err
	}
	if err := os.WriteFile(filepath.Join(proc, "self", "mountinfo"), []byte(strings.Join(mountinfo, "\n")+"\n"), 0o644); err != nil {
		return err
	}
	stated := func(p string) (hostPath, error) {
		if hp, ok := paths[p]; ok {
			return hp, nil
		}
		return hostPath{}, &fs.PathError{Op: "stat", Path: p, Err: unix.ENOENT}
	}
	h.Resolver = Resolver{ProcRoot: proc, SysRoot: sys,
		stat: func(p string) (uint64, error) {
			hp, err := stated(p)
			return hp.dev, err
		},
		realpath: func(p string) (string, error) {
			hp, err := stated(p)
			if err == nil && hp.real == "" {
				return "", fmt.Errorf("no real path of %s", p)
			}
			return hp.real, err
		}}
	return nil
}

// validName is a sysfs entry's name (sda, dm-0, 8:0): one path element.
func validName(s string) bool {
	return s != "" && s != "." && s != ".." && !strings.ContainsAny(s, "/\x00")
}

// hostLink makes link point to target, as sysfs's links do.
func hostLink(target, link string) error {
	if err := os.MkdirAll(filepath.Dir(link), 0o755); err != nil {
		return err
	}
	return os.Symlink(target, link)
}

// Close removes the laid-out copy.
func (h *HostSys) Close() error { return os.RemoveAll(h.root) }
