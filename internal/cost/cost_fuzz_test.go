package cost

import (
	"testing"

	"github.com/storbench/storbench/internal/yamlfile/yamlfiletest"
)

// FuzzParse: a hostile cost model never panics, and is refused with one line
// that wraps input.ErrInvalid.
func FuzzParse(f *testing.F) {
	yamlfiletest.Seeds(f, "../../examples/costs/*.yaml")
	for _, s := range []string{
		"", "\n", "---\n---\n", "configurations: [", "a: &a [*a, *a]\n",
		"configurations: [{name: x, hardware: [{price: .nan}]}]\n",
		"configurations: [{name: x, hardware: [{price: 1e400}]}]\n",
		"\xff\xfe\x00", "<<: *x\n",
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		m, err := Parse("costs.yaml", data)
		yamlfiletest.Refused(t, m != nil, err)
	})
}
