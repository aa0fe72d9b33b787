package pgserver

import (
	"strings"
	"testing"
)

func TestBinDirNamesWhatIsMissing(t *testing.T) {
	t.Setenv("STORBENCH_PG_BINDIR", t.TempDir())
	_, err := BinDir()
	if err == nil || !strings.Contains(err.Error(), "initdb") {
		t.Fatalf("BinDir with an empty STORBENCH_PG_BINDIR: %v; want an error naming initdb", err)
	}
}
