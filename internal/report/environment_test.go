package report

import (
	"slices"
	"strings"
	"testing"

	"github.com/storbench/storbench/internal/blockdev"
	"github.com/storbench/storbench/internal/study"
)

// TestEnvironmentBlockDevices: the environment lists each target's block devices
// from the filesystem's down to the disks, once per target with every role they
// hold, with their queue and what each is made of, and the mount's options beside
// its filesystem.
func TestEnvironmentBlockDevices(t *testing.T) {
	yes, no := true, false
	disk := blockdev.DeviceInfo{Name: "sda", Kind: "disk", Vendor: "ATA", Model: "ST4000NM0035", Rotational: &yes, Scheduler: "mq-deadline", NrRequests: 64,
		LogicalBlock: 512, PhysicalBlock: 4096, WriteCache: "write back", Discard: &no, Holders: []string{"sda2"}}
	data := blockdev.Placement{Path: "/srv/pg/data", Role: "data", Mount: "/srv/pg", FSType: "xfs", MountOptions: "rw,noatime,attr2", Chain: "dm-0 (vg-data) → sda2 → sda",
		Stack: []blockdev.DeviceInfo{{Name: "dm-0", Kind: "dm", DMName: "vg-data", Slaves: []string{"sda2"}}, {Name: "sda2", Kind: "partition", Parent: "sda"}, disk}}
	wal := blockdev.Placement{Path: "/srv/wal", Role: "wal", Mount: "/srv/wal", FSType: "ext4", MountOptions: "rw,relatime", Chain: "loop0 → /img/wal.img → sda2 → sda",
		Stack: []blockdev.DeviceInfo{{Name: "loop0", Kind: "loop", BackingFile: "/img/wal.img", Rotational: &no, Scheduler: "none"}, {Name: "sda2", Kind: "partition", Parent: "sda"}, disk}}
	src := &Source{Label: "s", Env: &study.Environment{Targets: []study.TargetEnv{{Name: "hdd", Kind: "managed", Placements: []blockdev.Placement{data, wal}}}}}
	var rows []string
	var storage string
	for _, b := range environmentSection([]*Source{src}).Blocks {
		switch {
		case b.Table == nil:
		case b.Table.Title == "Block devices":
			for _, r := range b.Table.Rows {
				rows = append(rows, strings.Join(r, " | "))
			}
		case b.Table.Title == "Targets":
			storage = b.Table.Rows[0][4]
		}
	}
	if want := "data /srv/pg/data: xfs (rw,noatime,attr2) on /srv/pg; wal /srv/wal: ext4 (rw,relatime) on /srv/wal"; storage != want {
		t.Errorf("storage %q, want %q", storage, want)
	}
	want := []string{
		"s | hdd | data | dm-0 | dm | - | - | - | - | - | - | - | vg-data over sda2",
		"s | hdd | data, wal | sda2 | partition | - | - | - | - | - | - | - | partition of sda",
		"s | hdd | data, wal | sda | disk | ATA ST4000NM0035 | yes | mq-deadline | 64 | 512/4096 | write back | no | -",
		"s | hdd | wal | loop0 | loop | - | no | none | - | - | - | - | backing file /img/wal.img",
	}
	if !slices.Equal(rows, want) {
		t.Errorf("block devices:\n%s\nwant:\n%s", strings.Join(rows, "\n"), strings.Join(want, "\n"))
	}
}
