package instance

import "strings"

// The presets are cloud volume classes' published limits, so that a what-if study can
// name the volume instead of copying its figures. Each applies the class's IOPS to reads and
// to writes alike, and its throughput likewise: the clouds limit reads and writes
// together, a cgroup each on its own, so a mixed load may do up to twice the IOPS
// under the emulation. Burstable classes (gp2) are given their baseline, what they
// sustain once the burst credits are spent. The sources, also in docs/io-limits.md:
//
//	AWS:   https://docs.aws.amazon.com/ebs/latest/userguide/general-purpose.html
//	Azure: https://learn.microsoft.com/azure/virtual-machines/disks-types#premium-ssd-size
//	GCP:   https://cloud.google.com/compute/docs/disks/performance

const (
	mib = 1 << 20
	mb  = 1000 * 1000 // Azure and Google publish decimal MB/s
)

// ioPresets are the presets, by name, in the order messages list them.
var ioPresets = []IOLimit{
	// gp3: 3,000 IOPS and 125 MiB/s at any size, without provisioned extras.
	preset("aws-gp3", 3000, 125*mib),
	// gp2: 3 IOPS per GiB (at least 100); 128 MiB/s up to 170 GiB, 250 MiB/s from 334 GiB.
	preset("aws-gp2-100gb", 300, 128*mib),
	preset("aws-gp2-500gb", 1500, 250*mib),
	preset("aws-gp2-1tb", 3072, 250*mib),
	// Premium SSD (v1), per disk size.
	preset("azure-p10", 500, 100*mb),
	preset("azure-p20", 2300, 150*mb),
	preset("azure-p30", 5000, 200*mb),
	// pd-balanced: 3,000 IOPS + 6 per GB and 140 MB/s + 0.28 per GB.
	preset("gcp-pd-balanced-100gb", 3600, 168*mb),
	preset("gcp-pd-balanced-500gb", 6000, 280*mb),
}

func preset(name string, iops, bps int64) IOLimit {
	return IOLimit{Preset: name, ReadIOPS: iops, WriteIOPS: iops, ReadBPS: bps, WriteBPS: bps}
}

// IOPresetNames are the presets' names.
func IOPresetNames() []string {
	var out []string
	for _, p := range ioPresets {
		out = append(out, p.Preset)
	}
	return out
}

func presetNamed(name string) (IOLimit, bool) {
	for _, p := range ioPresets {
		if strings.EqualFold(p.Preset, name) {
			return p, true
		}
	}
	return IOLimit{}, false
}
