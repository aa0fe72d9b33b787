// Package bytesize reads and writes sizes for people, one way everywhere: a memory
// limit, a test file's size, the bound of a file storbench reads. KB, MB, GB and TB are
// powers of 1024, as memory sizes are usually meant.
package bytesize

import (
	"errors"
	"fmt"
	"math"
	"strconv"
	"strings"

	"github.com/spf13/pflag"

	"github.com/storbench/storbench/internal/input"
)

// Parse reads a size such as 512MB, 2GB or 1.5GiB (the iB forms are accepted too).
func Parse(s string) (int64, error) {
	t := strings.ToUpper(strings.TrimSpace(s))
	t = strings.TrimSuffix(strings.Replace(t, "IB", "B", 1), "B")
	mult := int64(1)
	for i, unit := range []string{"K", "M", "G", "T"} {
		if strings.HasSuffix(t, unit) {
			mult = int64(1) << (10 * (i + 1))
			t = strings.TrimSuffix(t, unit)
			break
		}
	}
	v, err := strconv.ParseFloat(t, 64)
	if err != nil || v <= 0 {
		return 0, fmt.Errorf("%w: size %q: use a number and a unit, e.g. 2GB or 512MB", input.ErrInvalid, s)
	}
	return int64(v * float64(mult)), nil
}

// units are Parse's units, largest first.
var units = []struct {
	name  string
	shift uint
}{{"TB", 40}, {"GB", 30}, {"MB", 20}, {"KB", 10}}

// Format writes a size for people in the units Parse reads: whole in the
// largest unit that keeps it whole from MB up (2GB, 1536MB), so study step IDs read
// like the file; else in the largest unit it reaches, rounded down to two decimals
// (23.54GB, never 24684092KB), so a "give at most" it prints is never too much.
func Format(b int64) string {
	for _, u := range units[:3] {
		if b != 0 && b%(1<<u.shift) == 0 {
			return fmt.Sprintf("%d%s", b>>u.shift, u.name)
		}
	}
	for _, u := range units {
		if b >= 1<<u.shift {
			v := math.Floor(float64(b)/float64(int64(1)<<u.shift)*100) / 100
			return strconv.FormatFloat(v, 'f', -1, 64) + u.name
		}
	}
	return fmt.Sprintf("%dB", b)
}

// Var declares a flag of a size in bytes, read with Parse and shown with Format, for
// an owner declaring its settings' flags.
func Var(fs *pflag.FlagSet, p *int64, name string, value int64, usage string) {
	*p = value
	fs.Var((*sizeValue)(p), name, usage)
}

// sizeValue is the pflag.Value of Var.
type sizeValue int64

func (v *sizeValue) Set(s string) error {
	b, err := Parse(s)
	if err != nil {
		// pflag says whose value it is and the command line marks it invalid input.
		return errors.New(strings.TrimPrefix(err.Error(), input.ErrInvalid.Error()+": "))
	}
	*v = sizeValue(b)
	return nil
}

func (v *sizeValue) String() string { return Format(int64(*v)) }

// Type names the value in --help.
func (v *sizeValue) Type() string { return "string" }
