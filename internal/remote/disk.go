package remote

import (
	"context"
	"fmt"
	"regexp"
	"strconv"
	"strings"

	"github.com/storbench/storbench/internal/input"
)

// DataDevice names the disk that holds dir on the host as the host's
// /proc/diskstats (and node_exporter's device label) names it: "vda" for a file
// system on /dev/vda1, "nvme0n1" for one on /dev/nvme0n1p2. A file system on
// device-mapper (LVM, LUKS) or md RAID gives that device, "dm-0" or "md0", not the
// disks under it: its statistics are the file system's I/O, where the disks' would
// mix in other volumes and the RAID's own writes. A loop device gives "loop0".
// dir must be absolute; a file system that is not on a block device (overlay,
// tmpfs, NFS…) is an error: the study must then name the device to sample.
//
// It needs findmnt and lsblk (util-linux) on the host.
func (h *Host) DataDevice(ctx context.Context, dir string) (string, error) {
	if !strings.HasPrefix(dir, "/") || strings.ContainsRune(dir, 0) {
		return "", fmt.Errorf("%w: data directory %q is not an absolute path", input.ErrInvalid, dir)
	}
	out, err := h.Run(ctx, "findmnt -nP -o SOURCE,FSTYPE,TARGET -T "+ShellQuote(dir), nil)
	if err != nil {
		return "", fmt.Errorf("cannot find the file system of %s on %s: %w", dir, h, err)
	}
	fs := parsePairs(out)
	// A bind mount or a btrfs subvolume reads DEVICE[/PATH].
	source, _, _ := strings.Cut(fs["SOURCE"], "[")
	if !strings.HasPrefix(source, "/dev/") {
		return "", fmt.Errorf("%s on %s is on %q (%s, mounted on %s), not on a block device: name the disk to sample in the study (metrics_devices)",
			dir, h, fs["SOURCE"], fs["FSTYPE"], fs["TARGET"])
	}
	// -d: the device alone, not the partitions or volumes under it.
	out, err = h.Run(ctx, "lsblk -ndP -o KNAME,PKNAME,TYPE -- "+ShellQuote(source), nil)
	if err != nil {
		return "", fmt.Errorf("cannot find the disk of %s (%s) on %s: %w: name the disk to sample in the study (metrics_devices)", dir, source, h, err)
	}
	dev := parsePairs(out)
	switch {
	case dev["TYPE"] == "part" && dev["PKNAME"] != "":
		return dev["PKNAME"], nil
	case dev["KNAME"] != "":
		return dev["KNAME"], nil
	}
	return "", fmt.Errorf("lsblk on %s names no device for %s (%q): name the disk to sample in the study (metrics_devices)", h, source, strings.TrimSpace(out))
}

// pairRE is one KEY="value" of findmnt's and lsblk's -P output.
var pairRE = regexp.MustCompile(`([A-Za-z0-9_:%-]+)="([^"]*)"`)

// parsePairs reads the first line of -P output; values have \xHH escapes for
// quotes, spaces and other unsafe bytes.
func parsePairs(out string) map[string]string {
	line, _, _ := strings.Cut(out, "\n")
	m := map[string]string{}
	for _, p := range pairRE.FindAllStringSubmatch(line, -1) {
		m[p[1]] = unescapeHex(p[2])
	}
	return m
}

var hexEscapeRE = regexp.MustCompile(`\\x[0-9a-fA-F]{2}`)

func unescapeHex(s string) string {
	return hexEscapeRE.ReplaceAllStringFunc(s, func(e string) string {
		b, _ := strconv.ParseUint(e[2:], 16, 8) // two hex digits: cannot fail
		return string([]byte{byte(b)})
	})
}
