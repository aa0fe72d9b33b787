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
		if err := CheckRuntime("runtime", MinRuntime); err != nil {
			t.Errorf("the shortest runtime refused: %v", err)
		}
		if err := CheckSize("size", MinSize); err != nil {
			t.Errorf("the smallest size refused: %v", err)
		}
	}
}
