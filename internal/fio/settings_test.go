package fio

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/storbench/storbench/internal/input"
)

// TestRunRefusesSettings: fio.Run refuses a runtime or size the study file refuses,
// with the same words, before touching the target; each is bad input.
func TestRunRefusesSettings(t *testing.T) {
	for _, c := range []struct {
		opts Options
		want string
	}{
		{Options{Dir: t.TempDir(), Size: MinSize, Runtime: time.Second / 2}, "runtime 500ms is too short"},
		{Options{Dir: t.TempDir(), Size: MinSize - 1, Runtime: time.Second}, "size is under 16MB"},
	} {
		_, err := Run(context.Background(), nil, c.opts)
		if !errors.Is(err, input.ErrInvalid) || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%+v: %v, want bad input saying %q", c.opts, err, c.want)
		}
		if err := CheckRuntime(MinRuntime); err != nil {
			t.Errorf("the shortest runtime refused: %v", err)
		}
		if err := CheckSize(MinSize); err != nil {
			t.Errorf("the smallest size refused: %v", err)
		}
	}
}

// TestTargetErrorsNameSettings: a target fio refuses names its settings by key, so a
// study shows its own places for them (no --flag) and points at the setting to fix,
// while the command line still reads --path, --size, --device.
func TestTargetErrorsNameSettings(t *testing.T) {
	study := func(key string) string { return "experiments[0]." + key }
	missing := t.TempDir() + "/missing"
	for _, c := range []struct {
		opts           Options
		setting        string
		cli, studyText string
	}{
		{Options{Dir: missing}, "path",
			"--path " + missing + " is not a directory",
			"experiments[0].path " + missing + " is not a directory"},
		{Options{Dir: t.TempDir(), Size: 1 << 60, AllowMemoryFS: true}, "size",
			"MiB more: use a smaller --size", "MiB more: use a smaller experiments[0].size"},
		{Options{Device: "/dev/null"}, "device",
			"--device /dev/null would overwrite everything on it: add --i-know-this-destroys-data, or give --path DIR for a test file",
			"experiments[0].device /dev/null would overwrite everything on it: add experiments[0].i_know_this_destroys_data, or give experiments[0].path DIR for a test file"},
		{Options{Device: "/dev/null", DestroyDevice: true}, "device",
			"--device /dev/null is not a block device", "experiments[0].device /dev/null is not a block device"},
	} {
		_, err := prepareFile(c.opts)
		var ie *input.Error
		if !errors.As(err, &ie) || ie.Setting != c.setting {
			t.Errorf("%+v: %v, want an input.Error of setting %s", c.opts, err, c.setting)
			continue
		}
		if !strings.Contains(err.Error(), c.cli) {
			t.Errorf("%+v on the command line: %q, want %q", c.opts, err, c.cli)
		}
		if got := input.Render(err, study); !strings.Contains(got, c.studyText) || strings.Contains(got, "--") {
			t.Errorf("%+v in a study: %q, want %q and no --flag", c.opts, got, c.studyText)
		}
	}
}
