package yamlfile

import (
	"fmt"
	"strings"
	"time"

	"go.yaml.in/yaml/v3"
)

// Duration is a YAML duration such as 90s or 5m, for any owner whose settings a YAML
// file sets (a study's experiments, the driver's workload): the command line binds
// its flag to the Duration inside.
type Duration struct{ time.Duration }

// UnmarshalYAML reads 90s, 5m or 1h30m. A bare number is refused: seconds or minutes
// is exactly the ambiguity that ruins a night of runs. A negative one is left to the
// check of the setting that holds it, whose message names its key (ramp, runtime…).
func (d *Duration) UnmarshalYAML(n *yaml.Node) error {
	if n.Kind != yaml.ScalarNode {
		return Invalid(n, "expected a duration, got "+Describe(n), "write e.g. 90s or 5m")
	}
	switch n.ShortTag() {
	case "!!int", "!!float":
		return Invalid(n, fmt.Sprintf("duration %s has no unit", n.Value), "write e.g. "+n.Value+"s or "+n.Value+"m")
	}
	v, err := time.ParseDuration(strings.TrimSpace(n.Value))
	if err != nil {
		return Invalid(n, fmt.Sprintf("%q is not a duration", Clip(n.Value)), "write e.g. 90s, 5m or 1h30m")
	}
	d.Duration = v
	return nil
}
