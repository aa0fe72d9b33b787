package instance

import (
	"errors"
	"strings"
	"testing"

	"github.com/storbench/storbench/internal/input"
)

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
