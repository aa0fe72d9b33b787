package instance

import (
	"errors"
	"strings"
	"testing"

	"github.com/storbench/storbench/internal/input"
)

func TestParseSize(t *testing.T) {
	for in, want := range map[string]int64{"2GB": 2 << 30, "512MB": 512 << 20, "1.5GiB": 3 << 29, "64k": 64 << 10, "100": 100, " 1TB ": 1 << 40} {
		if got, err := ParseSize(in); err != nil || got != want {
			t.Errorf("ParseSize(%q) = %d, %v; want %d", in, got, err, want)
		}
	}
	for _, in := range []string{"", "lots", "-1GB", "0", "GB", "1XB"} {
		if _, err := ParseSize(in); !errors.Is(err, input.ErrInvalid) {
			t.Errorf("ParseSize(%q) accepted or wrong error: %v", in, err)
		}
	}
}

// TestFormatSize: sizes print in the largest unit, whole where exact (step IDs) and
// else rounded down to two decimals, never as thousands of KB.
func TestFormatSize(t *testing.T) {
	for b, want := range map[int64]string{2 << 30: "2GB", 1536 << 20: "1536MB", 1 << 40: "1TB", 24684092 << 10: "23.54GB",
		64 << 20: "64MB", 4 << 10: "4KB", 1500 << 10: "1.46MB", 100: "100B", 0: "0B"} {
		if got := FormatSize(b); got != want {
			t.Errorf("FormatSize(%d) = %q, want %q", b, got, want)
		}
		if b >= 1<<20 {
			if back, err := ParseSize(FormatSize(b)); err != nil || back > b {
				t.Errorf("ParseSize(FormatSize(%d)) = %d, %v: want at most the size", b, back, err)
			}
		}
	}
}

func TestParseIOLimit(t *testing.T) {
	got, err := ParseIOLimit("riops=100, wiops=50,rbps=10MB,wbps=1GB")
	want := IOLimit{ReadIOPS: 100, WriteIOPS: 50, ReadBPS: 10 << 20, WriteBPS: 1 << 30}
	if err != nil || got != want {
		t.Errorf("ParseIOLimit = %+v, %v; want %+v", got, err, want)
	}
	for _, in := range []string{"riops", "riops=0", "iops=5", "wbps=fast", "riops=-3"} {
		if _, err := ParseIOLimit(in); !errors.Is(err, input.ErrInvalid) {
			t.Errorf("ParseIOLimit(%q) accepted or wrong error: %v", in, err)
		}
	}
}

// TestParseIOLimitPreset: a preset's name gives its published limit and names it;
// an unknown word names the presets, with the setting it came from.
func TestParseIOLimitPreset(t *testing.T) {
	got, err := ParseIOLimitOf("io_limit", "AWS-gp3")
	want := IOLimit{Preset: "aws-gp3", ReadIOPS: 3000, WriteIOPS: 3000, ReadBPS: 125 << 20, WriteBPS: 125 << 20}
	if err != nil || got != want {
		t.Errorf("ParseIOLimitOf(aws-gp3) = %+v, %v; want %+v", got, err, want)
	}
	if got.Label() != "aws-gp3" || got.Values() != "riops=3000,wiops=3000,rbps=125MB,wbps=125MB" {
		t.Errorf("label %q, values %q", got.Label(), got.Values())
	}
	if _, err = ParseIOLimitOf("io_limit", "aws-gp9"); err == nil || !strings.HasPrefix(err.Error(), "io_limit \"aws-gp9\"") || !strings.Contains(err.Error(), "azure-p30") {
		t.Errorf("unknown preset: %v", err)
	}
	if _, err = ParseIOLimit("aws-gp9"); !errors.Is(err, input.ErrInvalid) || !strings.Contains(err.Error(), "--io-limit") {
		t.Errorf("unknown preset on the command line: %v", err)
	}
}
