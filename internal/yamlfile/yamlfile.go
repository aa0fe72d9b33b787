// Package yamlfile reads the YAML files a user writes (study files, cost models)
// strictly, one document and no unknown keys, and reports their problems on one line
// with the file and line, "study.yaml:12: what is wrong (the fix)", worded for someone
// who has not read the Go types.
package yamlfile

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"reflect"
	"regexp"
	"strconv"
	"strings"

	"github.com/storbench/storbench/internal/input"
	"go.yaml.in/yaml/v3"
)

// LineError is a problem at a line of a file, printed as "study.yaml:12: what is
// wrong (hint)" so editors can jump to it; it wraps input.ErrInvalid (exit code 2).
type LineError struct {
	File string
	Line int // 0 when the YAML parser did not say
	Msg  string
}

func (e *LineError) Error() string {
	// A message quotes the file, which may hold anything: keep it one line.
	msg := strings.NewReplacer("\r", `\r`, "\n", `\n`).Replace(e.Msg)
	if e.Line <= 0 {
		return e.File + ": " + msg
	}
	return fmt.Sprintf("%s:%d: %s", e.File, e.Line, msg)
}

func (e *LineError) Unwrap() error { return input.ErrInvalid }

// Earliest returns the problem on the lowest line (the first of those on it), or nil
// when there is none: a file's checks run in any order, its reader reads from the top.
func Earliest(errs []*LineError) error {
	if len(errs) == 0 {
		return nil
	}
	best := errs[0]
	for _, e := range errs[1:] {
		if e.Line < best.Line {
			best = e
		}
	}
	return best
}

// Options are what differs between kinds of file.
type Options struct {
	// Empty says what a file needs, for the message about an empty one: "the file is
	// empty (Empty)".
	Empty string
	// OneDocument says what a file holds, for the message about a second document:
	// "a second YAML document after --- (OneDocument)".
	OneDocument string
	// Example is where to see a valid file, the hint of a value of a type the
	// messages do not describe: "see Example".
	Example string
	// Places are the mappings of the file, by the structs they decode into; their
	// keys are the structs' yaml tags.
	Places []Place
}

// Place names a mapping of a file in messages.
type Place struct {
	Type any    // a value of the struct the mapping decodes into, e.g. Target{}
	Name string // e.g. "a target": unknown key "x" in a target
}

// place finds the Place of the Go type the decoder's messages name ("study.Target").
func (o *Options) place(goType string) (Place, bool) {
	goType = strings.TrimPrefix(goType, "*")
	for _, p := range o.Places {
		if reflect.TypeOf(p.Type).String() == goType {
			return p, true
		}
	}
	return Place{}, false
}

// knownKeys lists the keys of the mapping of a Go type (Keys).
func (o *Options) knownKeys(goType string) []string {
	p, ok := o.place(goType)
	if !ok {
		return nil
	}
	return Keys(reflect.TypeOf(p.Type))
}

// Keys lists the keys of the mapping a struct type decodes: its fields' yaml tags, in
// field order, with those of the structs it inlines (yaml:",inline") in their place.
func Keys(t reflect.Type) []string {
	var keys []string
	for i := range t.NumField() {
		k, opts, _ := strings.Cut(t.Field(i).Tag.Get("yaml"), ",")
		switch {
		case opts == "inline":
			keys = append(keys, Keys(t.Field(i).Type)...)
		case k != "" && k != "-":
			keys = append(keys, k)
		}
	}
	return keys
}

// Decode decodes data, the text of the file name, into v (a pointer), refusing keys
// no field takes and a second document. Every error is a *LineError. The Doc it
// returns finds the lines of the decoded values, for the checks that follow.
func Decode(name string, data []byte, v any, o Options) (Doc, error) {
	// The first parse keeps the node tree, which knows the lines; the second is the
	// strict one: KnownFields refuses keys no field takes.
	var root yaml.Node
	if err := yaml.Unmarshal(data, &root); err != nil {
		return Doc{}, syntaxError(name, data, err)
	}
	if len(root.Content) == 0 || root.Content[0].ShortTag() == "!!null" {
		return Doc{}, &LineError{name, 1, "the file is empty (" + o.Empty + ")"}
	}
	top := root.Content[0]
	octal := decimalNumbers(name, "", top)

	dec := yaml.NewDecoder(bytes.NewReader(data))
	dec.KnownFields(true)
	if err := dec.Decode(v); err != nil {
		err := decodeError(name, top, err, &o)
		if le, ok := err.(*LineError); ok && octal != nil {
			return Doc{}, Earliest([]*LineError{octal, le})
		}
		return Doc{}, err
	}
	if octal != nil {
		return Doc{}, octal
	}
	for {
		var next yaml.Node
		err := dec.Decode(&next)
		if err == io.EOF {
			break
		}
		if err != nil {
			return Doc{}, syntaxError(name, data, err)
		}
		// A trailing "---" leaves an empty document, which holds nothing to refuse.
		if len(next.Content) > 0 && next.Content[0].ShortTag() != "!!null" {
			return Doc{}, &LineError{name, next.Line, "a second YAML document after --- (" + o.OneDocument + ")"}
		}
	}
	return Doc{top}, nil
}

// decimalNumbers refuses a number not written in plain decimal digits: YAML 1.1, which
// the decoder follows here, reads 010 as octal 8 (users: 010 ran 8 users), and a
// count written 0x10 or 0b10 is a typo more often than a choice. The file's earliest
// such number is named, under its key, with what YAML would read.
func decimalNumbers(name, key string, n *yaml.Node) *LineError {
	if n.Kind == yaml.ScalarNode && n.ShortTag() == "!!int" {
		digits := strings.TrimLeft(n.Value, "+-")
		if len(digits) > 1 && digits[0] == '0' {
			var read int64
			_ = n.Decode(&read)
			return &LineError{name, n.Line, fmt.Sprintf("%s: %s is not a decimal number, YAML reads it as %d (write it in decimal digits, without a leading zero)", key, n.Value, read)}
		}
	}
	for i, c := range n.Content {
		k := key
		if n.Kind == yaml.MappingNode && i%2 == 1 {
			k = n.Content[i-1].Value
		}
		if err := decimalNumbers(name, k, c); err != nil {
			return err
		}
	}
	return nil
}

// Invalid is how a custom UnmarshalYAML refuses node n: as a *yaml.TypeError the
// decoder keeps going, so the file's earliest problem is the one Decode reports,
// whatever its kind, as "what (hint)" at n's line.
func Invalid(n *yaml.Node, what, hint string) error {
	return &yaml.TypeError{Errors: []string{fmt.Sprintf("line %d: %s (%s)", n.Line, what, hint)}}
}

// Refused is Invalid for a problem the setting's owning package described whole, as
// "what (hint)", naming the settings by their keys (input.Errorf), as the file does.
func Refused(n *yaml.Node, err error) error {
	msg := strings.TrimPrefix(input.Render(err, func(key string) string { return key }), input.ErrInvalid.Error()+": ")
	return &yaml.TypeError{Errors: []string{fmt.Sprintf("line %d: %s", n.Line, msg)}}
}

var yamlLine = regexp.MustCompile(`(?s)^(?:yaml: )?line (\d+): (.*)$`)

// syntaxError turns the parser's "yaml: line 3: ..." into the file's one-line form.
func syntaxError(name string, data []byte, err error) error {
	msg := strings.TrimPrefix(err.Error(), "yaml: ")
	line := 0
	if m := yamlLine.FindStringSubmatch(msg); m != nil {
		line, _ = strconv.Atoi(m[1])
		msg = m[2]
	}
	if data != nil {
		line = problemLine(data, line)
	}
	hint := "check the indentation and the quoting on this line and the one before"
	if lines := bytes.Split(data, []byte("\n")); line > 0 && line <= len(lines) && bytes.ContainsRune(lines[line-1], '\t') {
		hint = "YAML indents with spaces, not tabs"
	}
	return &LineError{name, line, fmt.Sprintf("not valid YAML: %s (%s)", msg, hint)}
}

// problemLine finds the line a syntax error is on. The parser names the line where
// the enclosing block began ("line 2" for a bad item on line 40 of a list), so look
// for the longest run of whole lines that still parses: the problem is on the next.
func problemLine(data []byte, parserLine int) int {
	lines := bytes.SplitAfter(data, []byte("\n"))
	for n := len(lines) - 1; n >= 0; n-- {
		if parses(bytes.Join(lines[:n], nil)) {
			return n + 1
		}
	}
	return parserLine
}

func parses(data []byte) bool {
	dec := yaml.NewDecoder(bytes.NewReader(data))
	for {
		var n yaml.Node
		switch err := dec.Decode(&n); err {
		case nil:
		case io.EOF:
			return true
		default:
			return false
		}
	}
}

var (
	unknownField = regexp.MustCompile(`(?s)^field (.+) not found in type (.+)$`)
	wrongType    = regexp.MustCompile("(?s)^cannot unmarshal (!!\\w+)(?: `(.*)`)? into (.+)$")
	fieldTwice   = regexp.MustCompile(`(?s)^field (.+) already set in type (.+)$`)
	keyTwice     = regexp.MustCompile(`(?s)^mapping key "(.+)" already defined at line (\d+)$`)
)

// decodeError reports the first (lowest line) of the decoder's complaints, reworded
// for someone who has not read the Go types.
func decodeError(name string, top *yaml.Node, err error, o *Options) error {
	var te *yaml.TypeError
	if !errors.As(err, &te) || len(te.Errors) == 0 {
		return syntaxError(name, nil, err)
	}
	best, bestLine := te.Errors[0], 0
	for _, e := range te.Errors {
		if m := yamlLine.FindStringSubmatch(e); m != nil {
			if line, _ := strconv.Atoi(m[1]); bestLine == 0 || line < bestLine {
				best, bestLine = m[2], line
			}
		}
	}
	return &LineError{name, bestLine, reword(best, bestLine, top, o)}
}

func reword(msg string, line int, top *yaml.Node, o *Options) string {
	if m := unknownField.FindStringSubmatch(msg); m != nil {
		known := o.knownKeys(m[2])
		what := fmt.Sprintf("unknown key %q in %s", m[1], o.placeName(m[2]))
		if near := closest(m[1], known); near != "" {
			return fmt.Sprintf("%s (did you mean %q?)", what, near)
		}
		return fmt.Sprintf("%s (known keys: %s)", what, strings.Join(known, ", "))
	}
	if m := wrongType.FindStringSubmatch(msg); m != nil {
		key, value := keyAtLine(top, line, m[1], strings.TrimSuffix(m[2], "..."))
		want, hint := o.describeGoType(m[3])
		got := describeTag(m[1])
		if value != "" {
			got += fmt.Sprintf(" %q", Clip(value))
		}
		what := fmt.Sprintf("expected %s, got %s", want, got)
		if key != "" {
			what = key + ": " + what
		}
		return fmt.Sprintf("%s (%s)", what, hint)
	}
	if m := fieldTwice.FindStringSubmatch(msg); m != nil {
		return fmt.Sprintf("key %q given twice in %s (keep one)", m[1], o.placeName(m[2]))
	}
	if m := keyTwice.FindStringSubmatch(msg); m != nil {
		return fmt.Sprintf("key %q given twice, first at line %s (keep one)", m[1], m[2])
	}
	return msg
}

// placeName names a mapping in messages by its Go type: "a target" for "study.Target".
func (o *Options) placeName(goType string) string {
	if p, ok := o.place(goType); ok {
		return p.Name
	}
	return goType
}

func (o *Options) describeGoType(t string) (want, hint string) {
	switch {
	case strings.HasPrefix(t, "[]"):
		return "a list", `one item per line starting with "- ", or [a, b]`
	case strings.HasPrefix(t, "int"):
		return "a whole number", "e.g. 10, without quotes or units"
	case strings.HasPrefix(t, "uint"):
		return "a whole number of 0 or more", "e.g. 42, without quotes"
	case strings.HasPrefix(t, "float"):
		return "a number", "e.g. 7595.62, without quotes, thousands separators or currency sign"
	case t == "bool":
		return "true or false", "write true or false"
	case t == "string":
		return "a single value", "quote it if it holds a colon or starts with a special character"
	}
	if _, ok := o.place(t); ok {
		return "a mapping", "key: value lines indented under it"
	}
	return t, "see " + o.Example
}

// Describe names what a node holds in messages: "a mapping", "a list", "text", "a
// number", ...
func Describe(n *yaml.Node) string {
	switch n.Kind {
	case yaml.MappingNode:
		return "a mapping"
	case yaml.SequenceNode:
		return "a list"
	}
	return describeTag(n.ShortTag())
}

func describeTag(tag string) string {
	switch tag {
	case "!!str":
		return "text"
	case "!!int", "!!float":
		return "a number"
	case "!!bool":
		return "true/false"
	case "!!map":
		return "a mapping"
	case "!!seq":
		return "a list"
	case "!!timestamp":
		return "a date"
	case "!!null":
		return "nothing"
	}
	return tag
}

// Clip shortens a value quoted in a message to 40 bytes.
func Clip(s string) string {
	if len(s) > 40 {
		return s[:37] + "..."
	}
	return s
}

// keyAtLine finds the key whose value, of the given tag and starting with prefix
// (what the decoder's message shows of it), starts on line (the deepest such key), so
// a type error can name the key and show its whole value: the decoder's message cuts
// it at 7 bytes. The prefix tells apart two values on one line ({item: a, price: b}).
func keyAtLine(n *yaml.Node, line int, tag, prefix string) (key, value string) {
	if n == nil {
		return "", ""
	}
	switch n.Kind {
	case yaml.MappingNode:
		for i := 0; i+1 < len(n.Content); i += 2 {
			k, v := n.Content[i], n.Content[i+1]
			if dk, dv := keyAtLine(v, line, tag, prefix); dk != "" {
				return dk, dv
			}
			if v.Line == line && v.ShortTag() == tag && (v.Kind != yaml.ScalarNode || strings.HasPrefix(v.Value, prefix)) {
				if v.Kind == yaml.ScalarNode {
					return k.Value, v.Value
				}
				return k.Value, ""
			}
		}
	case yaml.SequenceNode:
		for _, item := range n.Content {
			if dk, dv := keyAtLine(item, line, tag, prefix); dk != "" {
				return dk, dv
			}
		}
	}
	return "", ""
}

// closest suggests the known key a misspelt one was probably meant to be.
func closest(key string, known []string) string {
	best, bestD := "", 3
	for _, k := range known {
		if d := editDistance(strings.ToLower(key), k); d < bestD {
			best, bestD = k, d
		}
	}
	return best
}

func editDistance(a, b string) int {
	prev := make([]int, len(b)+1)
	cur := make([]int, len(b)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur[0] = i
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
		}
		prev, cur = cur, prev
	}
	return prev[len(b)]
}
