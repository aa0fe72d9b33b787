package report

import (
	"slices"
	"strings"
	"testing"
)

// TestStandaloneFioPath: a standalone `storbench fio --json` result records the
// path it tested; the report's profile table shows it, and no column named for a
// path holds the '-' of a result with no role in a study's target.
func TestStandaloneFioPath(t *testing.T) {
	srcs, err := Load([]string{fixtureFioA})
	if err != nil {
		t.Fatal(err)
	}
	path := srcs[0].Steps[0].Fio[0].Target.Path // /work/.fixture-run/fast
	sec := profilesSection(srcs)
	tab := sec.Blocks[0].Table
	if i := slices.Index(tab.Columns, "path"); i >= 0 && tab.Rows[0][i] == "-" {
		t.Errorf("column %q shows '-' for a result that records its path %s", tab.Columns[i], path)
	}
	var text []string
	for _, r := range tab.Rows {
		text = append(text, r...)
	}
	if !strings.Contains(strings.Join(append(text, tab.Notes...), "\n"), path) {
		t.Errorf("the profile table does not name the path tested, %s:\ncolumns %v\nrows %v\nnotes %v", path, tab.Columns, tab.Rows, tab.Notes)
	}
}
