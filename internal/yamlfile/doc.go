package yamlfile

import (
	"strconv"
	"strings"

	"go.yaml.in/yaml/v3"
)

// Doc is a decoded file's node tree: once decoded, the structs no longer know where
// their values were, so checks find a value's line by its path, e.g.
// "experiments[2].users".
type Doc struct{ top *yaml.Node }

// Lookup returns the node at path (nil when it is absent) and the line of the deepest
// part of the path that is present: a key's own line, or a list item's. Aliases and
// merge keys (<<: *anchor) are followed as the decoder follows them.
func (d Doc) Lookup(path string) (*yaml.Node, int) {
	cur := deref(d.top)
	if cur == nil {
		return nil, 1
	}
	line := cur.Line
	for _, part := range strings.Split(path, ".") {
		key, rest, _ := strings.Cut(part, "[")
		k, v := mapGet(cur, key)
		if k == nil {
			return nil, line
		}
		cur, line = v, k.Line
		for rest != "" {
			idx, after, _ := strings.Cut(rest, "]")
			rest = strings.TrimPrefix(after, "[")
			i, _ := strconv.Atoi(idx)
			if cur.Kind != yaml.SequenceNode || i >= len(cur.Content) {
				return nil, line
			}
			cur = deref(cur.Content[i])
			line = cur.Line
		}
	}
	return cur, line
}

// Has tells whether the file sets path; an empty value ("ramp:") does not count, so
// it takes the default as if it were left out.
func (d Doc) Has(path string) bool {
	n, _ := d.Lookup(path)
	return n != nil && n.ShortTag() != "!!null"
}

// Line is the line of path, or of the deepest part of it that is present.
func (d Doc) Line(path string) int {
	_, line := d.Lookup(path)
	return line
}

func deref(n *yaml.Node) *yaml.Node {
	for n != nil && n.Kind == yaml.AliasNode {
		n = n.Alias
	}
	if n != nil && n.Kind == yaml.DocumentNode && len(n.Content) > 0 {
		return deref(n.Content[0])
	}
	return n
}

// mapGet finds key in a mapping, then in what it merges (<<: *anchor), as the
// decoder does, so a merged value counts as set.
func mapGet(m *yaml.Node, key string) (k, v *yaml.Node) {
	m = deref(m)
	if m == nil || m.Kind != yaml.MappingNode {
		return nil, nil
	}
	var merges []*yaml.Node
	for i := 0; i+1 < len(m.Content); i += 2 {
		kn := m.Content[i]
		if kn.Value == "<<" && (kn.Tag == "" || kn.Tag == "!!merge" || kn.Tag == "tag:yaml.org,2002:merge") {
			merges = append(merges, deref(m.Content[i+1]))
			continue
		}
		if kn.Value == key {
			return kn, deref(m.Content[i+1])
		}
	}
	for _, mv := range merges {
		if mv.Kind == yaml.SequenceNode {
			for _, item := range mv.Content {
				if k, v := mapGet(item, key); k != nil {
					return k, v
				}
			}
			continue
		}
		if k, v := mapGet(mv, key); k != nil {
			return k, v
		}
	}
	return nil, nil
}
