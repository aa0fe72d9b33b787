package yamlfile_test

import (
	"errors"
	"fmt"
	"strings"
	"testing"

	"go.yaml.in/yaml/v3"

	"github.com/storbench/storbench/internal/input"
	"github.com/storbench/storbench/internal/yamlfile"
	"github.com/storbench/storbench/internal/yamlfile/yamlfiletest"
)

// file is a small kind of file: a mapping with a list of mappings, a custom value
// and a mapping the options leave out.
type file struct {
	Name  string `yaml:"name"`
	Count int    `yaml:"count"`
	Items []item `yaml:"items"`
	Size  size   `yaml:"size"`
	Extra *extra `yaml:"extra"`
}

type item struct {
	Label string  `yaml:"label"`
	Price float64 `yaml:"price"`
}

type extra struct {
	A int `yaml:"a"`
}

type size struct{ big bool }

func (s *size) UnmarshalYAML(n *yaml.Node) error {
	if n.Kind != yaml.ScalarNode || n.Value != "big" {
		return yamlfile.Invalid(n, fmt.Sprintf("expected a size, got %s", yamlfile.Describe(n)), "write big")
	}
	s.big = true
	return nil
}

var testFile = yamlfile.Options{
	Empty:       "a test file needs a name",
	OneDocument: "a test file holds one file",
	Example:     "testdata/example.yaml",
	Places: []yamlfile.Place{
		{Type: file{}, Name: "the file"},
		{Type: item{}, Name: "an item"},
	},
}

func TestDecode(t *testing.T) {
	var f file
	doc, err := yamlfile.Decode("t.yaml", []byte("name: a\ncount: 2\nitems:\n  - {label: x, price: 1.5}\nsize: big\n"), &f, testFile)
	if err != nil {
		t.Fatal(err)
	}
	if f.Name != "a" || f.Count != 2 || len(f.Items) != 1 || f.Items[0].Price != 1.5 || !f.Size.big {
		t.Errorf("decoded %+v", f)
	}
	if doc.Line("items[0].price") != 4 || !doc.Has("size") || doc.Has("extra") {
		t.Errorf("doc: line %d, has size %v, has extra %v", doc.Line("items[0].price"), doc.Has("size"), doc.Has("extra"))
	}
}

func TestDecodeErrors(t *testing.T) {
	long := strings.Repeat("x", 50)
	cases := []struct {
		name string
		text string
		line int
		want string
	}{
		{"misspelt key", "nmae: a\n", 1, `unknown key "nmae" in the file (did you mean "name"?)`},
		{"unknown key", "items:\n  - label: a\n    zzzzzz: 1\n", 3, `unknown key "zzzzzz" in an item (known keys: label, price)`},
		{"wrong type", "count: lots\n", 1, `count: expected a whole number, got text "lots" (e.g. 10, without quotes or units)`},
		{"long value", "count: " + long + "\n", 1, `count: expected a whole number, got text "` + long[:37] + `..."`},
		{"beside another value", "items:\n  - {label: a, price: ten}\n", 2, `price: expected a number, got text "ten"`},
		{"list expected", "items: x\n", 1, `items: expected a list, got text "x" (one item per line starting with "- "`},
		{"mapping expected", "items:\n  - a\n", 2, "expected a mapping, got text (key: value lines indented under it)"},
		{"mapping not in the options", "extra: x\n", 1, `extra: expected yamlfile_test.extra, got text "x" (see testdata/example.yaml)`},
		{"key twice", "name: a\nname: b\n", 2, `key "name" given twice, first at line 1 (keep one)`},
		{"custom value", "size: small\n", 1, "expected a size, got text (write big)"},
		{"custom value, a list", "size: [big]\n", 1, "expected a size, got a list (write big)"},
		{"earliest of several", "name: a\nsize: small\ncount: lots\n", 2, "expected a size"},
		{"syntax", "name: a\nitems:\n  - label: a\n  - label: b\n - label: c\n", 5, "not valid YAML"},
		{"tab", "items:\n\t- label: a\n", 2, "(YAML indents with spaces, not tabs)"},
		{"empty", "# nothing\n", 1, "the file is empty (a test file needs a name)"},
		{"null", "~\n", 1, "the file is empty (a test file needs a name)"},
		{"octal", "name: a\ncount: 010\n", 2, "count: 010 is not a decimal number, YAML reads it as 8 (write it in decimal digits, without a leading zero)"},
		{"hexadecimal", "items:\n  - {label: a, price: 0x10}\n", 2, "price: 0x10 is not a decimal number, YAML reads it as 16"},
		{"octal after an earlier problem", "nmae: a\ncount: 010\n", 1, `unknown key "nmae"`},
		{"octal before a later problem", "count: -07\nnmae: a\n", 1, "count: -07 is not a decimal number, YAML reads it as -7"},
		{"second document", "name: a\n---\nname: b\n", 2, "a second YAML document after --- (a test file holds one file)"},
		{"syntax in a second document", "name: a\n---\nname: [\n", 3, "not valid YAML"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			var f file
			_, err := yamlfile.Decode("t.yaml", []byte(c.text), &f, testFile)
			t.Log(err)
			yamlfiletest.CheckError(t, err, "t.yaml", c.line, c.want)
		})
	}
	// Marks of YAML's document syntax around the one document are fine.
	for _, text := range []string{"---\nname: a\n", "name: a\n---\n", "name: a\n...\n"} {
		var f file
		if _, err := yamlfile.Decode("t.yaml", []byte(text), &f, testFile); err != nil {
			t.Errorf("%q: %v", text, err)
		}
	}
}

func TestDocLookup(t *testing.T) {
	text := `a: 1
list:
  - x: 1
    y:
      - p
      - q
  - x: 2
`
	var v any
	doc, err := yamlfile.Decode("t.yaml", []byte(text), &v, yamlfile.Options{})
	if err != nil {
		t.Fatal(err)
	}
	for path, want := range map[string]int{"a": 1, "list": 2, "list[0]": 3, "list[0].y": 4, "list[0].y[1]": 6, "list[1].x": 7,
		"list[1].z": 7, "list[5]": 2, "missing": 1, "list[0].y[1].deeper": 6} {
		if got := doc.Line(path); got != want {
			t.Errorf("Line(%q) = %d, want %d", path, got, want)
		}
	}
	if !doc.Has("list[0].y[0]") || doc.Has("list[1].y") || doc.Has("nope") {
		t.Error("Has is wrong")
	}
	if n, line := doc.Lookup("list[0].y[1]"); n == nil || n.Value != "q" || line != 6 {
		t.Errorf("Lookup = %v, %d", n, line)
	}
}

// A merged value (<<: *anchor) counts as set, and an empty one does not.
func TestDocMergeKeys(t *testing.T) {
	text := `base: &b
  x: 1
  y:
one:
  <<: *b
  z: 2
`
	var v any
	doc, err := yamlfile.Decode("t.yaml", []byte(text), &v, yamlfile.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if !doc.Has("one.x") || doc.Line("one.x") != 2 || !doc.Has("one.z") || doc.Has("one.y") || doc.Has("one.w") {
		t.Errorf("one.x has %v line %d, one.z %v, one.y %v, one.w %v", doc.Has("one.x"), doc.Line("one.x"), doc.Has("one.z"), doc.Has("one.y"), doc.Has("one.w"))
	}
}

func TestLineError(t *testing.T) {
	e := &yamlfile.LineError{File: "s.yaml", Line: 3, Msg: "bad (fix it)"}
	if e.Error() != "s.yaml:3: bad (fix it)" || !errors.Is(e, input.ErrInvalid) {
		t.Errorf("LineError = %q", e.Error())
	}
	e.Line = 0
	if e.Error() != "s.yaml: bad (fix it)" {
		t.Errorf("LineError without a line = %q", e.Error())
	}
}

func TestEarliest(t *testing.T) {
	if err := yamlfile.Earliest(nil); err != nil {
		t.Errorf("Earliest(nil) = %v", err)
	}
	errs := []*yamlfile.LineError{{File: "f", Line: 5, Msg: "a"}, {File: "f", Line: 2, Msg: "b"}, {File: "f", Line: 2, Msg: "c"}}
	if err := yamlfile.Earliest(errs); err == nil || err.Error() != "f:2: b" {
		t.Errorf("Earliest = %v, want f:2: b", err)
	}
}

func TestClip(t *testing.T) {
	if got := yamlfile.Clip(strings.Repeat("a", 40)); got != strings.Repeat("a", 40) {
		t.Errorf("Clip of 40 bytes = %q", got)
	}
	if got := yamlfile.Clip(strings.Repeat("a", 41)); got != strings.Repeat("a", 37)+"..." {
		t.Errorf("Clip of 41 bytes = %q", got)
	}
}
