package bytesize

import (
	"errors"
	"strings"
	"testing"

	"github.com/spf13/pflag"

	"github.com/storbench/storbench/internal/input"
)

func TestParse(t *testing.T) {
	for in, want := range map[string]int64{"2GB": 2 << 30, "512MB": 512 << 20, "1.5GiB": 3 << 29, "64k": 64 << 10, "100": 100, " 1TB ": 1 << 40} {
		if got, err := Parse(in); err != nil || got != want {
			t.Errorf("Parse(%q) = %d, %v; want %d", in, got, err, want)
		}
	}
	for _, in := range []string{"", "lots", "-1GB", "0", "GB", "1XB"} {
		if _, err := Parse(in); !errors.Is(err, input.ErrInvalid) {
			t.Errorf("Parse(%q) accepted or wrong error: %v", in, err)
		}
	}
}

// TestFormat: sizes print in the largest unit, whole where exact (step IDs) and
// else rounded down to two decimals, never as thousands of KB.
func TestFormat(t *testing.T) {
	for b, want := range map[int64]string{2 << 30: "2GB", 1536 << 20: "1536MB", 1 << 40: "1TB", 24684092 << 10: "23.54GB",
		64 << 20: "64MB", 4 << 10: "4KB", 1500 << 10: "1.46MB", 100: "100B", 0: "0B"} {
		if got := Format(b); got != want {
			t.Errorf("Format(%d) = %q, want %q", b, got, want)
		}
		if b >= 1<<20 {
			if back, err := Parse(Format(b)); err != nil || back > b {
				t.Errorf("Parse(Format(%d)) = %d, %v: want at most the size", b, back, err)
			}
		}
	}
}

// A size flag reads as Parse does, shows as Format does, and leaves marking the
// error as invalid input to the command line, which names the flag.
func TestVar(t *testing.T) {
	fs := pflag.NewFlagSet("t", pflag.ContinueOnError)
	var size int64
	Var(fs, &size, "size", 4<<30, "")
	if got := fs.Lookup("size").DefValue; got != "4GB" {
		t.Errorf("default shown as %q, want 4GB", got)
	}
	if err := fs.Parse([]string{"--size", "512MB"}); err != nil || size != 512<<20 {
		t.Errorf("--size 512MB: %d, %v", size, err)
	}
	err := fs.Parse([]string{"--size", "lots"})
	if err == nil || strings.Count(err.Error(), "invalid input") != 0 || !strings.Contains(err.Error(), `size "lots"`) {
		t.Errorf("--size lots: %v", err)
	}
}
