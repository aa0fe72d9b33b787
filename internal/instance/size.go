package instance

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/storbench/storbench/internal/engine"
)

// ParseSize reads a size such as 512MB, 2GB or 1.5GiB (KB/MB/GB/TB are powers of 1024,
// as memory sizes are usually meant; the iB forms are accepted too).
func ParseSize(s string) (int64, error) {
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
		return 0, fmt.Errorf("%w: size %q: use a number and a unit, e.g. 2GB or 512MB", engine.ErrInput, s)
	}
	return int64(v * float64(mult)), nil
}
