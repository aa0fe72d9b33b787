package instance

import (
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/storbench/storbench/internal/bytesize"
	"github.com/storbench/storbench/internal/input"
	"golang.org/x/sys/unix"
)

// IOLimit throttles the instance's I/O on the data directory's disk, to emulate slower
// storage in what-if studies. Zero fields are not limited. Preset names the volume
// class the limit was taken from ("" for values given as such).
type IOLimit struct {
	Preset    string `json:"preset,omitempty"`
	ReadIOPS  int64  `json:"riops,omitempty"`
	WriteIOPS int64  `json:"wiops,omitempty"`
	ReadBPS   int64  `json:"rbps,omitempty"` // bytes per second
	WriteBPS  int64  `json:"wbps,omitempty"`
}

// Zero reports whether nothing is limited.
func (l IOLimit) Zero() bool { return l == IOLimit{} }

// Values is the limit as ParseIOLimit reads it: "riops=3000,wbps=125MB".
func (l IOLimit) Values() string {
	var parts []string
	for _, f := range []struct {
		key  string
		n    int64
		size bool
	}{{"riops", l.ReadIOPS, false}, {"wiops", l.WriteIOPS, false}, {"rbps", l.ReadBPS, true}, {"wbps", l.WriteBPS, true}} {
		switch {
		case f.n == 0:
		case f.size:
			parts = append(parts, f.key+"="+bytesize.Format(f.n))
		default:
			parts = append(parts, fmt.Sprintf("%s=%d", f.key, f.n))
		}
	}
	return strings.Join(parts, ",")
}

// Label names the limit in step IDs and series: the preset, else the values.
func (l IOLimit) Label() string {
	if l.Preset != "" {
		return l.Preset
	}
	return l.Values()
}

// String is the limit for people: "aws-gp3 (riops=3000,…)" or the values.
func (l IOLimit) String() string {
	if l.Preset != "" {
		return l.Preset + " (" + l.Values() + ")"
	}
	return l.Values()
}

// ParseIOLimit reads --io-limit: a preset's name (IOPresets) or
// "riops=N,wiops=N,rbps=SIZE,wbps=SIZE" (any subset; SIZE per second, e.g. 100MB).
func ParseIOLimit(s string) (IOLimit, error) {
	l, err := ParseIOLimitOf("--io-limit", s)
	if err != nil {
		return IOLimit{}, fmt.Errorf("%w: %w", input.ErrInvalid, err)
	}
	return l, nil
}

// ParseIOLimitOf is ParseIOLimit for a setting named so in its errors (a study's
// io_limit), which the caller reports as an input error.
func ParseIOLimitOf(setting, s string) (IOLimit, error) {
	if p, ok := presetNamed(strings.TrimSpace(s)); ok {
		return p, nil
	}
	var l IOLimit
	for _, part := range strings.Split(s, ",") {
		key, val, ok := strings.Cut(strings.TrimSpace(part), "=")
		val = strings.TrimSpace(val)
		var err error
		switch {
		case !ok:
			err = fmt.Errorf("%q is not key=value nor a preset (%s)", part, strings.Join(IOPresetNames(), ", "))
		case key == "riops" || key == "wiops":
			var n int64
			n, err = strconv.ParseInt(val, 10, 64)
			if err == nil && n <= 0 {
				err = fmt.Errorf("%s must be positive", key)
			}
			if key == "riops" {
				l.ReadIOPS = n
			} else {
				l.WriteIOPS = n
			}
		case key == "rbps" || key == "wbps":
			var n int64
			n, err = bytesize.Parse(val)
			if key == "rbps" {
				l.ReadBPS = n
			} else {
				l.WriteBPS = n
			}
		default:
			err = fmt.Errorf("unknown key %q", key)
		}
		if err != nil {
			return IOLimit{}, fmt.Errorf("%s %q: %v (use riops=N,wiops=N,rbps=100MB,wbps=100MB or a preset)", setting, s, err)
		}
	}
	return l, nil
}

// IOThrottle is how an instance's I/O limit was put in force at its last start.
type IOThrottle struct {
	Limit  IOLimit `json:"limit"`
	Device string  `json:"device"` // major:minor of the whole disk throttled
	Cgroup int     `json:"cgroup"` // the cgroup version: 1 or 2
}

// Partial tells whether the throttle leaves some writes alone: cgroup v1 sees only the
// I/O a process issues itself, not the buffered writes the kernel writes back later.
func (t IOThrottle) Partial() bool { return t.Cgroup == 1 }

// Throttles says what holds the I/O back and which I/O it holds.
func (t IOThrottle) Throttles() string {
	if t.Partial() {
		return "cgroup v1 blkio: reads and direct/synchronous writes only, buffered writeback NOT throttled (partial emulation)"
	}
	return fmt.Sprintf("cgroup v%d io.max: reads and writes, buffered writeback included", t.Cgroup)
}

// Mechanism is the throttle in the instance's limit lines.
func (t IOThrottle) Mechanism() string {
	return fmt.Sprintf("I/O limit %s on disk %s by %s", t.Limit, t.Device, t.Throttles())
}

// diskOf returns the "major:minor" of the whole disk holding path: cgroup v1 throttles
// whole disks, so a partition resolves to its disk.
func diskOf(path string) (string, error) {
	var st unix.Stat_t
	if err := unix.Stat(path, &st); err != nil {
		return "", err
	}
	dev := fmt.Sprintf("%d:%d", unix.Major(st.Dev), unix.Minor(st.Dev))
	sys := filepath.Join("/sys/dev/block", dev)
	if _, err := os.Stat(sys); err != nil {
		return "", fmt.Errorf("%s is on device %s, which is no block device (tmpfs, overlay, network filesystem): I/O cannot be throttled there", path, dev)
	}
	if _, err := os.Stat(filepath.Join(sys, "partition")); err == nil {
		b, err := os.ReadFile(filepath.Join(sys, "..", "dev"))
		if err != nil {
			return "", fmt.Errorf("find the disk of partition %s: %w", dev, err)
		}
		return strings.TrimSpace(string(b)), nil
	}
	return dev, nil
}
