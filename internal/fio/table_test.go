package fio

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/storbench/storbench/internal/input"
)

// fio compare given another file than a fio result says what the file is, with no
// "(<nil>)" of an error that was not there.
func TestReadRunsNotFio(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	for _, c := range []struct{ name, body, want string }{
		{"run-1.json", `{"config": {"users": 1}, "tpm_db": 17196, "nopm_db": 18729}`, "run-1.json is the result of storbench run (run --json; storbench compare compares two of them), not the --json of storbench fio"},
		{"empty.json", `{"storbench_version": "1", "results": []}`, "empty.json is a storbench fio result with no results"},
		{"other.json", `{"a": 1}`, "other.json is no storbench result, not the --json of storbench fio"},
		{"list.json", `[1]`, "list.json is not the --json of storbench fio (json: cannot unmarshal"},
	} {
		path := filepath.Join(dir, c.name)
		if err := os.WriteFile(path, []byte(c.body), 0o644); err != nil {
			t.Fatal(err)
		}
		_, err := ReadRuns(path)
		if !errors.Is(err, input.ErrInvalid) || !strings.Contains(err.Error(), c.want) || strings.Contains(err.Error(), "<nil>") {
			t.Errorf("%s: %v, want an input error with %q", c.name, err, c.want)
		}
	}
}
