package measure

import (
	"errors"
	"slices"
	"sync"
	"testing"
	"time"
)

// TestTogetherStart: the common start gives every user of every worker time to
// connect, on one machine as across hosts (a flat 2 s let the start pass while 400
// local users still connected), then the ramp.
func TestTogetherStart(t *testing.T) {
	before := time.Now()
	few := Together{Workers: 2, Users: 1, Ramp: time.Second}.Start()
	many := Together{Workers: 4, Users: 100, Ramp: time.Second}.Start()
	if d := few.Sub(before); d < 3*time.Second || d > 3*time.Second+time.Second/2 {
		t.Errorf("2 workers of 1 user, ramp 1s: start in %v, want about 3s", d)
	}
	if d := many.Sub(before); d < 5*time.Second {
		t.Errorf("4 workers of 100 users, ramp 1s: start in %v, want at least 2s + 400 × 5ms + 1s", d)
	}
	// The noisy workers connect no users: the plan's estimate and the start agree.
	if a := (Together{Workers: 4, Noisy: 2, Users: 100}).Allowance(); a != 3*time.Second {
		t.Errorf("2 TPC-C workers of 100 users: allowance %v, want 2s + 200 × 5ms", a)
	}
}

// TestTogetherRun: every worker runs at once, the last Noisy of them noisy, and each
// error stays with its worker.
func TestTogetherRun(t *testing.T) {
	all := Together{Workers: 4, Noisy: 1}
	var mu sync.Mutex
	var oltp, noisy []int
	bad := errors.New("bad")
	errs := all.Run(func(i int) error {
		mu.Lock()
		defer mu.Unlock()
		oltp = append(oltp, i)
		return nil
	}, func(i int) error {
		mu.Lock()
		defer mu.Unlock()
		noisy = append(noisy, i)
		return bad
	})
	slices.Sort(oltp)
	if !slices.Equal(oltp, []int{0, 1, 2}) || !slices.Equal(noisy, []int{3}) {
		t.Errorf("oltp workers %v, noisy %v; want [0 1 2] and [3]", oltp, noisy)
	}
	if errs[3] != bad || errors.Join(errs[:3]...) != nil {
		t.Errorf("errors %v, want the noisy worker's alone", errs)
	}
}
