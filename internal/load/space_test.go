package load_test

import (
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	"golang.org/x/sys/unix"

	"github.com/storbench/storbench/internal/engine"
	"github.com/storbench/storbench/internal/load"
	"github.com/storbench/storbench/internal/testsupport/looptest"
)

// TestCheckSpace: a build's data and the log it writes are checked against the
// filesystem each is on: both against one, each against its own when the log has a
// filesystem of its own (a managed instance's --wal-path), copies each with their log.
func TestCheckSpace(t *testing.T) {
	data, wal := looptest.Mount(t, 300<<20).Dir, looptest.Mount(t, 100<<20).Dir
	f := engine.RegisteredFootprint("postgres") // 1 warehouse: 126 MB of data, 120 MB of WAL
	free := func(dir string) string {
		var fs unix.Statfs_t
		if err := unix.Statfs(dir, &fs); err != nil {
			t.Fatal(err)
		}
		return fmt.Sprintf("which has %.0f MB free", float64(int64(fs.Bavail)*fs.Bsize)/1e6)
	}
	for _, c := range []struct {
		name            string
		copies, whs     int
		dataDir, walDir string
		want            string // "": it fits
	}{
		{"both on the data's", 1, 1, filepath.Join(data, "pg"), "", ""},
		{"both on the data's, the WAL named", 1, 1, filepath.Join(data, "pg"), filepath.Join(data, "pg", "wal"), ""},
		{"more than fit there", 1, 2, filepath.Join(data, "pg"), "",
			"a build of 2 warehouses needs about 452 MB on " + filepath.Join(data, "pg") + " (232 MB of data, 220 MB of log it writes), " + free(data) + " (give at most 1 warehouse, or free space there)"},
		{"the data on its own", 1, 2, filepath.Join(data, "pg"), filepath.Join(wal, "wal"),
			"a build of 2 warehouses needs about 220 MB on " + filepath.Join(wal, "wal") + " (the log it writes), " + free(wal) + " (free space there or use a larger target)"},
		{"copies", 2, 1, filepath.Join(data, "pg"), "",
			"a build of 2 copies of 1 warehouse needs about 492 MB on " + filepath.Join(data, "pg") + " (252 MB of data, 240 MB of log it writes)"},
	} {
		err := load.CheckSpace(f, c.copies, c.whs, c.dataDir, c.walDir)
		if c.want == "" && err != nil || c.want != "" && (err == nil || !strings.HasPrefix(err.Error(), c.want)) {
			t.Errorf("%s: %v, want %q", c.name, err, c.want)
		}
	}
}
