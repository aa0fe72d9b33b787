package study

import (
	"testing"

	"github.com/storbench/storbench/internal/yamlfile/yamlfiletest"
)

// FuzzParse: a hostile study file never panics, and is refused with one line
// that wraps input.ErrInvalid.
func FuzzParse(f *testing.F) {
	yamlfiletest.Seeds(f, "../../examples/*.yaml", "testdata/*.yaml")
	for _, s := range []string{
		"", "\n", "---\n---\n", "name: [", "name: x\n\tworkload: {}\n",
		"a: &a [*a, *a]\n", "targets: !!binary AAAA\n", "experiments: [{kind: user-sweep, users: fib(99999999999)}]\n",
		"\xff\xfe\x00", "name: \"\\uD800\"\n", "<<: *x\n",
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		s, err := Parse("study.yaml", data)
		yamlfiletest.Refused(t, s != nil, err)
	})
}
