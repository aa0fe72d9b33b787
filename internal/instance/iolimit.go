package instance

import (
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/storbench/storbench/internal/input"
	"golang.org/x/sys/unix"
)

// IOLimit throttles the instance's I/O on the data directory's disk, to emulate slower
// storage in what-if studies. Zero fields are not limited.
type IOLimit struct {
	ReadIOPS  int64 `json:"riops,omitempty"`
	WriteIOPS int64 `json:"wiops,omitempty"`
	ReadBPS   int64 `json:"rbps,omitempty"` // bytes per second
	WriteBPS  int64 `json:"wbps,omitempty"`
}

// Zero reports whether nothing is limited.
func (l IOLimit) Zero() bool { return l == IOLimit{} }

// ParseIOLimit reads "riops=N,wiops=N,rbps=SIZE,wbps=SIZE" (any subset; SIZE per
// second, e.g. 100MB).
func ParseIOLimit(s string) (IOLimit, error) {
	var l IOLimit
	for _, part := range strings.Split(s, ",") {
		key, val, ok := strings.Cut(strings.TrimSpace(part), "=")
		var err error
		switch {
		case !ok:
			err = fmt.Errorf("%q is not key=value", part)
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
			n, err = ParseSize(val)
			if key == "rbps" {
				l.ReadBPS = n
			} else {
				l.WriteBPS = n
			}
		default:
			err = fmt.Errorf("unknown key %q", key)
		}
		if err != nil {
			return IOLimit{}, fmt.Errorf("%w: --io-limit %q: %v (use riops=N,wiops=N,rbps=100MB,wbps=100MB)", input.ErrInvalid, s, err)
		}
	}
	return l, nil
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
