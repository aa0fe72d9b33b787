package study

// The YAML scalar types of a study file: durations, sizes and user counts.

import (
	"fmt"
	"slices"
	"strings"

	"go.yaml.in/yaml/v3"

	"github.com/storbench/storbench/internal/bytesize"
	"github.com/storbench/storbench/internal/driver"
	"github.com/storbench/storbench/internal/instance"
	"github.com/storbench/storbench/internal/yamlfile"
)

// UnmarshalYAML reads 512MB or 2GB (powers of 1024, as memory is sized).
func (s *Size) UnmarshalYAML(n *yaml.Node) error {
	if n.Kind != yaml.ScalarNode {
		return yamlfile.Invalid(n, "expected a size, got "+yamlfile.Describe(n), "write e.g. 2GB or 512MB")
	}
	v, err := bytesize.Parse(n.Value)
	if err != nil {
		return yamlfile.Invalid(n, fmt.Sprintf("%q is not a size", yamlfile.Clip(n.Value)), "write a number and a unit, e.g. 2GB or 512MB")
	}
	s.Bytes = v
	return nil
}

// UnmarshalYAML reads an I/O limit with the instance package's parser: a mapping's
// keys and values are its key=value pairs.
func (l *IOLimit) UnmarshalYAML(n *yaml.Node) error {
	text := n.Value
	switch n.Kind {
	case yaml.ScalarNode:
	case yaml.MappingNode:
		var parts []string
		for i := 0; i+1 < len(n.Content); i += 2 {
			k, v := n.Content[i], n.Content[i+1]
			if v.Kind != yaml.ScalarNode {
				return yamlfile.Invalid(v, fmt.Sprintf("io_limit: %s is %s", k.Value, yamlfile.Describe(v)), "write a count or a size, e.g. riops: 3000 or wbps: 125MB")
			}
			parts = append(parts, k.Value+"="+v.Value)
		}
		text = strings.Join(parts, ",")
	default:
		return yamlfile.Invalid(n, "expected an I/O limit, got "+yamlfile.Describe(n), "write e.g. {riops: 3000, wiops: 3000} or a preset such as aws-gp3")
	}
	v, err := instance.ParseIOLimitOf("io_limit", text)
	if err != nil {
		return yamlfile.Refused(n, err)
	}
	l.IOLimit = v
	return nil
}

// UnmarshalYAML reads a list of user counts, a single count, or a series:
//
//	users: [1, 2, 4, 8]
//	users: {fibonacci: 89}             # 1, 2, 3, 5, 8, …, 89
//	users: {powers: 128, extra: [89]}  # 1, 2, 4, …, 128 and 89
//
// A series ends at its maximum even when that is not a member (fibonacci: 100 ends
// …, 55, 89, 100): whoever wrote 100 wants the sweep to reach 100 users.
func (u *Users) UnmarshalYAML(n *yaml.Node) error {
	var vals []int
	switch n.Kind {
	case yaml.ScalarNode:
		v, err := userCount(n)
		if err != nil {
			return err
		}
		vals = []int{v}
	case yaml.SequenceNode:
		if len(n.Content) == 0 {
			return yamlfile.Invalid(n, "users is an empty list", "give at least one user count, e.g. [1, 2, 4]")
		}
		for _, item := range n.Content {
			v, err := userCount(item)
			if err != nil {
				return err
			}
			vals = append(vals, v)
		}
	case yaml.MappingNode:
		var series, extra *yaml.Node
		var seriesKey string
		seen := map[string]int{}
		for i := 0; i+1 < len(n.Content); i += 2 {
			k, v := n.Content[i], n.Content[i+1]
			if first, dup := seen[k.Value]; dup {
				return yamlfile.Invalid(k, fmt.Sprintf("users: %s given twice, first at line %d", k.Value, first), "keep one")
			}
			seen[k.Value] = k.Line
			switch k.Value {
			case "fibonacci", "powers":
				if series != nil {
					return yamlfile.Invalid(k, fmt.Sprintf("users has both %s and %s", seriesKey, k.Value), "choose one series; add other counts with extra: [..]")
				}
				series, seriesKey = v, k.Value
			case "extra":
				extra = v
			default:
				return yamlfile.Invalid(k, fmt.Sprintf("unknown key %q in users", k.Value), "use fibonacci: N or powers: N, and optionally extra: [..]")
			}
		}
		if series == nil {
			return yamlfile.Invalid(n, "users has no fibonacci: N or powers: N", "add one, or write the counts as a list")
		}
		last, err := userCount(series)
		if err != nil {
			return err
		}
		if seriesKey == "fibonacci" {
			vals = fibonacciUpTo(last)
		} else {
			vals = powersUpTo(last)
		}
		if extra != nil {
			if extra.Kind == yaml.MappingNode {
				return yamlfile.Invalid(extra, "users: extra is a mapping", "write extra as a list, e.g. extra: [89]")
			}
			var more Users
			if err := more.UnmarshalYAML(extra); err != nil {
				return err
			}
			vals = append(vals, more.Values...)
		}
	default:
		return yamlfile.Invalid(n, "expected user counts, got "+yamlfile.Describe(n), "write a list, e.g. [1, 2, 4], or fibonacci: 89")
	}
	slices.Sort(vals)
	u.Values = slices.Compact(vals)
	return nil
}

func userCount(n *yaml.Node) (int, error) {
	if n.Kind != yaml.ScalarNode || n.ShortTag() != "!!int" {
		v := ""
		if n.Kind == yaml.ScalarNode {
			v = fmt.Sprintf(" %q", yamlfile.Clip(n.Value))
		}
		return 0, yamlfile.Invalid(n, fmt.Sprintf("expected a user count, got %s%s", yamlfile.Describe(n), v), "write a whole number of 1 or more")
	}
	var v int
	if err := n.Decode(&v); err != nil {
		return 0, yamlfile.Invalid(n, fmt.Sprintf("user count %s is out of range", n.Value), fmt.Sprintf("every count is 1 to %d", driver.MaxUsers))
	}
	if err := driver.CheckUsers(v); err != nil {
		return 0, yamlfile.Refused(n, err)
	}
	return v, nil
}

// fibonacciUpTo is HammerDB autopilot's favourite sequence, 1, 2, 3, 5, 8, …, ending
// at last.
func fibonacciUpTo(last int) []int {
	var out []int
	for a, b := 1, 2; a <= last; a, b = b, a+b {
		out = append(out, a)
	}
	if out[len(out)-1] != last {
		out = append(out, last)
	}
	return out
}

// powersUpTo is 1, 2, 4, …, ending at last.
func powersUpTo(last int) []int {
	var out []int
	for v := 1; v <= last; v *= 2 {
		out = append(out, v)
	}
	if out[len(out)-1] != last {
		out = append(out, last)
	}
	return out
}
