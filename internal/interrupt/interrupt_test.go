package interrupt

import (
	"context"
	"errors"
	"testing"
)

// An interruption reads as what was kept and still is the context's error.
func TestError(t *testing.T) {
	err := Error("fio interrupted; the test file was removed", context.Canceled)
	if err.Error() != "fio interrupted; the test file was removed" || !errors.Is(err, context.Canceled) {
		t.Errorf("%q, is Canceled: %v", err, errors.Is(err, context.Canceled))
	}
}
