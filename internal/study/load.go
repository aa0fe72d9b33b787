package study

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"net/url"
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"

	"go.yaml.in/yaml/v3"
	"golang.org/x/sys/unix"

	"github.com/storbench/storbench/internal/engine"
	"github.com/storbench/storbench/internal/fio"
	"github.com/storbench/storbench/internal/instance"
)

// Defaults of a study file. The run durations are HammerDB's own TPROC-C defaults
// (2 minutes of ramp-up, 5 minutes timed), which the papers kept or lengthened, so a
// study that leaves them out measures what a HammerDB user would expect.
const (
	DefaultKind       = "managed"
	DefaultEngine     = "postgres"
	DefaultMode       = "procedures"
	DefaultRestore    = "each-step"
	DefaultRamp       = 2 * time.Minute
	DefaultDuration   = 5 * time.Minute
	DefaultRepeats    = 1
	DefaultCycles     = 3
	DefaultMethod     = "physical"
	DefaultFioSize    = 1 << 30
	DefaultFioRuntime = 30 * time.Second
	DefaultInterval   = time.Second
	DefaultIOLatency  = "auto"
)

const (
	// MaxUsers bounds a user count: more sessions than any server accepts is a typo,
	// and the series expansions must stay small.
	MaxUsers = 100000
	// minMemory is the least memory a variant may have: below it PostgreSQL's shared
	// buffers and the sessions do not fit, and the step measures swapping.
	minMemory     = 64 << 20
	minInterval   = 100 * time.Millisecond
	minRunSeconds = time.Second
)

// memTotal reports the machine's memory; a variable so tests do not depend on the
// machine they run on.
var memTotal = readMemTotal

// managedEngines are the engines storbench can create a server of.
var managedEngines = []string{"postgres"}

// LineError is a problem in a study file, printed as "study.yaml:12: what is wrong
// (hint)" so editors can jump to it; it wraps engine.ErrInput (exit code 2).
type LineError struct {
	File string
	Line int // 0 when the YAML parser did not say
	Msg  string
}

func (e *LineError) Error() string {
	if e.Line <= 0 {
		return e.File + ": " + e.Msg
	}
	return fmt.Sprintf("%s:%d: %s", e.File, e.Line, e.Msg)
}

func (e *LineError) Unwrap() error { return engine.ErrInput }

// Load reads and checks a study file; the study it returns has every default filled
// in, so the runner never has to guess.
func Load(path string) (*Study, error) {
	data, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, fmt.Errorf("%w: study file %s does not exist (check the path; examples/ has study files to start from)", engine.ErrInput, path)
	}
	if err != nil {
		return nil, fmt.Errorf("%w: study file: %v", engine.ErrInput, err)
	}
	return Parse(path, data)
}

// Parse checks a study file's text; name is how errors name the file.
func Parse(name string, data []byte) (*Study, error) {
	var root yaml.Node
	if err := yaml.Unmarshal(data, &root); err != nil {
		return nil, syntaxError(name, data, err)
	}
	if len(root.Content) == 0 {
		return nil, &LineError{name, 1, "the file is empty (a study needs name, targets, workload and experiments)"}
	}
	top := root.Content[0]

	// The second parse is the strict one: KnownFields refuses keys no field takes.
	// The node tree of the first stays for the checks below, which need lines.
	dec := yaml.NewDecoder(bytes.NewReader(data))
	dec.KnownFields(true)
	var s Study
	if err := dec.Decode(&s); err != nil {
		return nil, decodeError(name, top, err)
	}
	for {
		var next yaml.Node
		err := dec.Decode(&next)
		if err == io.EOF {
			break
		}
		if err != nil {
			return nil, syntaxError(name, data, err)
		}
		// A trailing "---" leaves an empty document, which holds nothing to refuse.
		if len(next.Content) > 0 && next.Content[0].ShortTag() != "!!null" {
			return nil, &LineError{name, next.Line, "a second YAML document after --- (a study file holds one study; split it into two files)"}
		}
	}

	c := &checker{file: name, doc: tree{top}}
	c.study(&s)
	if err := c.first(); err != nil {
		return nil, err
	}
	return &s, nil
}

var yamlLine = regexp.MustCompile(`^(?:yaml: )?line (\d+): (.*)$`)

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
	unknownField = regexp.MustCompile(`^field (.+) not found in type (.+)$`)
	wrongType    = regexp.MustCompile("^cannot unmarshal (!!\\w+)(?: `.*`)? into (.+)$")
	fieldTwice   = regexp.MustCompile(`^field (.+) already set in type (.+)$`)
	keyTwice     = regexp.MustCompile(`^mapping key "(.+)" already defined at line (\d+)$`)
)

// decodeError reports the first (lowest line) of the decoder's complaints, reworded
// for someone who has not read the Go types.
func decodeError(name string, top *yaml.Node, err error) error {
	var te *yaml.TypeError
	if !errors.As(err, &te) || len(te.Errors) == 0 {
		return syntaxError(name, nil, err)
	}
	best, bestLine := "", 0
	for _, e := range te.Errors {
		m := yamlLine.FindStringSubmatch(e)
		if m == nil {
			if best == "" {
				best = e
			}
			continue
		}
		line, _ := strconv.Atoi(m[1])
		if bestLine == 0 || line < bestLine {
			best, bestLine = m[2], line
		}
	}
	return &LineError{name, bestLine, reword(best, bestLine, top)}
}

func reword(msg string, line int, top *yaml.Node) string {
	if m := unknownField.FindStringSubmatch(msg); m != nil {
		known := knownKeys[m[2]]
		what := fmt.Sprintf("unknown key %q in %s", m[1], placeName(m[2]))
		if near := closest(m[1], known); near != "" {
			return fmt.Sprintf("%s (did you mean %q?)", what, near)
		}
		return fmt.Sprintf("%s (known keys: %s)", what, strings.Join(known, ", "))
	}
	if m := wrongType.FindStringSubmatch(msg); m != nil {
		key, value := keyAtLine(top, line, m[1])
		want, hint := describeGoType(m[2])
		got := describeTag(m[1])
		if value != "" {
			got += fmt.Sprintf(" %q", clip(value))
		}
		what := fmt.Sprintf("expected %s, got %s", want, got)
		if key != "" {
			what = key + ": " + what
		}
		return fmt.Sprintf("%s (%s)", what, hint)
	}
	if m := fieldTwice.FindStringSubmatch(msg); m != nil {
		return fmt.Sprintf("key %q given twice in %s (keep one)", m[1], placeName(m[2]))
	}
	if m := keyTwice.FindStringSubmatch(msg); m != nil {
		return fmt.Sprintf("key %q given twice, first at line %s (keep one)", m[1], m[2])
	}
	return msg
}

// knownKeys lists the keys of each mapping of a study file, by the Go type name the
// decoder's messages use.
var knownKeys = func() map[string][]string {
	m := map[string][]string{}
	for _, v := range []any{Study{}, Target{}, Replica{}, Workload{}, Experiment{}, Metrics{}} {
		t := reflect.TypeOf(v)
		var keys []string
		for i := range t.NumField() {
			if k, _, _ := strings.Cut(t.Field(i).Tag.Get("yaml"), ","); k != "" && k != "-" {
				keys = append(keys, k)
			}
		}
		m[t.String()] = keys
	}
	return m
}()

func placeName(goType string) string {
	switch strings.TrimPrefix(goType, "study.") {
	case "Study":
		return "the study"
	case "Target":
		return "a target"
	case "Replica":
		return "replica"
	case "Workload":
		return "workload"
	case "Experiment":
		return "an experiment"
	case "Metrics":
		return "metrics"
	}
	return goType
}

func describeGoType(t string) (want, hint string) {
	switch {
	case strings.HasPrefix(t, "[]"):
		return "a list", `one item per line starting with "- ", or [a, b]`
	case strings.HasPrefix(t, "int"):
		return "a whole number", "e.g. 10, without quotes or units"
	case strings.HasPrefix(t, "uint"):
		return "a whole number of 0 or more", "e.g. 42, without quotes"
	case t == "bool":
		return "true or false", "write true or false"
	case t == "string":
		return "a single value", "quote it if it holds a colon or starts with a special character"
	case strings.HasPrefix(t, "study.") || strings.HasPrefix(t, "*study."):
		return "a mapping", "key: value lines indented under it"
	}
	return t, "see the examples/ directory"
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
	}
	return tag
}

func clip(s string) string {
	if len(s) > 40 {
		return s[:37] + "..."
	}
	return s
}

// keyAtLine finds the key whose value, of the given tag, starts on line (the deepest
// such key), so a type error can name the key and show its whole value: the
// decoder's message cuts it at 7 bytes.
func keyAtLine(n *yaml.Node, line int, tag string) (key, value string) {
	if n == nil {
		return "", ""
	}
	switch n.Kind {
	case yaml.MappingNode:
		for i := 0; i+1 < len(n.Content); i += 2 {
			k, v := n.Content[i], n.Content[i+1]
			if dk, dv := keyAtLine(v, line, tag); dk != "" {
				return dk, dv
			}
			if v.Line == line && v.ShortTag() == tag {
				if v.Kind == yaml.ScalarNode {
					return k.Value, v.Value
				}
				return k.Value, ""
			}
		}
	case yaml.SequenceNode:
		for _, item := range n.Content {
			if dk, dv := keyAtLine(item, line, tag); dk != "" {
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

// typeErr is how the custom unmarshalers complain: as a TypeError the decoder keeps
// going, so the file's earliest problem is the one reported, whatever its kind.
func typeErr(n *yaml.Node, what, hint string) error {
	return &yaml.TypeError{Errors: []string{fmt.Sprintf("line %d: %s (%s)", n.Line, what, hint)}}
}

// UnmarshalYAML reads 90s, 5m or 1h30m. A bare number is refused: seconds or minutes
// is exactly the ambiguity that ruins a night of runs.
func (d *Duration) UnmarshalYAML(n *yaml.Node) error {
	if n.Kind != yaml.ScalarNode {
		return typeErr(n, "expected a duration, got "+kindName(n), "write e.g. 90s or 5m")
	}
	switch n.ShortTag() {
	case "!!int", "!!float":
		return typeErr(n, fmt.Sprintf("duration %s has no unit", n.Value), "write e.g. "+n.Value+"s or "+n.Value+"m")
	}
	v, err := time.ParseDuration(strings.TrimSpace(n.Value))
	if err != nil {
		return typeErr(n, fmt.Sprintf("%q is not a duration", clip(n.Value)), "write e.g. 90s, 5m or 1h30m")
	}
	if v < 0 {
		return typeErr(n, fmt.Sprintf("duration %s is negative", n.Value), "durations are 0s or more")
	}
	d.Duration = v
	return nil
}

// UnmarshalYAML reads 512MB or 2GB (powers of 1024, as memory is sized).
func (s *Size) UnmarshalYAML(n *yaml.Node) error {
	if n.Kind != yaml.ScalarNode {
		return typeErr(n, "expected a size, got "+kindName(n), "write e.g. 2GB or 512MB")
	}
	v, err := instance.ParseSize(n.Value)
	if err != nil {
		return typeErr(n, fmt.Sprintf("%q is not a size", clip(n.Value)), "write a number and a unit, e.g. 2GB or 512MB")
	}
	s.Bytes = v
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
			return typeErr(n, "users is an empty list", "give at least one user count, e.g. [1, 2, 4]")
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
				return typeErr(k, fmt.Sprintf("users: %s given twice, first at line %d", k.Value, first), "keep one")
			}
			seen[k.Value] = k.Line
			switch k.Value {
			case "fibonacci", "powers":
				if series != nil {
					return typeErr(k, fmt.Sprintf("users has both %s and %s", seriesKey, k.Value), "choose one series; add other counts with extra: [..]")
				}
				series, seriesKey = v, k.Value
			case "extra":
				extra = v
			default:
				return typeErr(k, fmt.Sprintf("unknown key %q in users", k.Value), "use fibonacci: N or powers: N, and optionally extra: [..]")
			}
		}
		if series == nil {
			return typeErr(n, "users has no fibonacci: N or powers: N", "add one, or write the counts as a list")
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
				return typeErr(extra, "users: extra is a mapping", "write extra as a list, e.g. extra: [89]")
			}
			var more Users
			if err := more.UnmarshalYAML(extra); err != nil {
				return err
			}
			vals = append(vals, more.Values...)
		}
	default:
		return typeErr(n, "expected user counts, got "+kindName(n), "write a list, e.g. [1, 2, 4], or fibonacci: 89")
	}
	slices.Sort(vals)
	u.Values = slices.Compact(vals)
	return nil
}

func userCount(n *yaml.Node) (int, error) {
	if n.Kind != yaml.ScalarNode || n.ShortTag() != "!!int" {
		v := ""
		if n.Kind == yaml.ScalarNode {
			v = fmt.Sprintf(" %q", clip(n.Value))
		}
		return 0, typeErr(n, fmt.Sprintf("expected a user count, got %s%s", kindName(n), v), "write a whole number of 1 or more")
	}
	var v int
	if err := n.Decode(&v); err != nil || v < 1 || v > MaxUsers {
		return 0, typeErr(n, fmt.Sprintf("user count %s is out of range", n.Value), fmt.Sprintf("every count is 1 to %d", MaxUsers))
	}
	return v, nil
}

func kindName(n *yaml.Node) string {
	switch n.Kind {
	case yaml.MappingNode:
		return "a mapping"
	case yaml.SequenceNode:
		return "a list"
	}
	return describeTag(n.ShortTag())
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

// sizeText writes a size in the largest unit that keeps it whole, the form ParseSize
// reads, so step IDs read like the file (memory=2GB).
func sizeText(b int64) string {
	for _, u := range []struct {
		name  string
		shift uint
	}{{"TB", 40}, {"GB", 30}, {"MB", 20}, {"KB", 10}} {
		if b != 0 && b%(1<<u.shift) == 0 {
			return fmt.Sprintf("%d%s", b>>u.shift, u.name)
		}
	}
	return fmt.Sprintf("%dB", b)
}

// readMemTotal reads MemTotal from /proc/meminfo.
func readMemTotal() (int64, error) {
	f, err := os.Open("/proc/meminfo")
	if err != nil {
		return 0, err
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		fields := strings.Fields(sc.Text())
		if len(fields) >= 2 && fields[0] == "MemTotal:" {
			kb, err := strconv.ParseInt(fields[1], 10, 64)
			if err != nil {
				return 0, fmt.Errorf("meminfo: MemTotal %q", fields[1])
			}
			return kb << 10, nil
		}
	}
	if err := sc.Err(); err != nil {
		return 0, err
	}
	return 0, errors.New("meminfo has no MemTotal")
}

// tree finds a value's line in the document by its path, e.g. "experiments[2].users",
// because once decoded the structs no longer know where their values were.
type tree struct{ top *yaml.Node }

// lookup returns the node at path (nil when it is absent) and the line of the
// deepest part of the path that is present: a key's own line, or a list item's.
func (t tree) lookup(path string) (*yaml.Node, int) {
	cur := deref(t.top)
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

// has tells whether the file sets path; an empty value ("ramp:") does not count, so
// it takes the default as if it were left out.
func (t tree) has(path string) bool {
	n, _ := t.lookup(path)
	return n != nil && n.ShortTag() != "!!null"
}

func (t tree) line(path string) int {
	_, line := t.lookup(path)
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

// checker validates a decoded study and fills in its defaults, keeping every problem
// with its line so the earliest one in the file is reported.
type checker struct {
	file string
	doc  tree
	errs []*LineError
}

// errf records a problem at path: what and hint are one format, so args run on from
// what into hint.
func (c *checker) errf(path, what, hint string, args ...any) {
	c.errs = append(c.errs, &LineError{c.file, c.doc.line(path), fmt.Sprintf(what+" ("+hint+")", args...)})
}

func (c *checker) first() error {
	if len(c.errs) == 0 {
		return nil
	}
	best := c.errs[0]
	for _, e := range c.errs[1:] {
		if e.Line < best.Line {
			best = e
		}
	}
	return best
}

var (
	studyNameRE     = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$`)
	shortNameRE     = regexp.MustCompile(`^[a-z][a-z0-9_-]{0,39}$`)
	envNameRE       = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*$`)
	cpuListRE       = regexp.MustCompile(`^\d+(-\d+)?(,\d+(-\d+)?)*$`)
	experimentKinds = []string{UserSweep, MemorySweep, CPUSweep, StorageProfiles, BackupRestore, Replication, Consolidation}
)

func (c *checker) study(s *Study) {
	switch {
	case !c.doc.has("name"):
		c.errf("name", "the study has no name", "add e.g. name: nvme-vs-sata; it names the results")
	case !studyNameRE.MatchString(s.Name):
		c.errf("name", "name %q is not a study name", "use letters, digits, '.', '-' and '_', starting with a letter or digit, at most 64", s.Name)
	}

	if len(s.Targets) == 0 {
		c.errf("targets", "the study has no targets", "add targets: with at least one target, managed with a path or external with a dsn")
	}
	names := map[string]int{}
	paths := map[string]string{}
	for i := range s.Targets {
		c.target(i, &s.Targets[i], names, paths)
	}

	c.workload(&s.Workload)

	if len(s.Experiments) == 0 {
		c.errf("experiments", "the study has no experiments", "add experiments: with at least one, e.g. - kind: user-sweep")
	}
	expNames := map[string]int{}
	for i := range s.Experiments {
		c.experiment(s, i, expNames)
	}

	c.metrics(&s.Metrics)
}

func (c *checker) target(i int, t *Target, names map[string]int, paths map[string]string) {
	p := func(key string) string { return fmt.Sprintf("targets[%d].%s", i, key) }
	if !c.doc.has(p("name")) {
		c.errf(p("name"), "target %d has no name", "add e.g. name: nvme; step IDs and results use it", i+1)
	} else {
		c.uniqueName(p("name"), "target", t.Name, names, "give each target its own name")
	}

	if !c.doc.has(p("kind")) {
		t.Kind = DefaultKind
	}
	managedOnly := []string{"engine", "path", "wal_path", "memory", "cpus", "replica"}
	externalOnly := []string{"dsn", "password_env", "metrics_host"}
	switch t.Kind {
	case "managed":
		for _, k := range externalOnly {
			if c.doc.has(p(k)) {
				c.errf(p(k), "%s is for external targets", "a managed target's server is created on its path; use kind: external to connect to a server", k)
			}
		}
		c.managed(i, t, paths)
	case "external":
		for _, k := range managedOnly {
			if c.doc.has(p(k)) {
				c.errf(p(k), "%s is for managed targets", "storbench does not control an external server; its engine is the dsn's scheme", k)
			}
		}
		c.external(i, t)
	default:
		c.errf(p("kind"), "target kind %q is unknown", "use managed, a server storbench creates on path, or external, a server at dsn", t.Kind)
	}
}

func (c *checker) managed(i int, t *Target, paths map[string]string) {
	p := func(key string) string { return fmt.Sprintf("targets[%d].%s", i, key) }
	if !c.doc.has(p("engine")) {
		t.Engine = DefaultEngine
	} else if !slices.Contains(managedEngines, t.Engine) {
		c.errf(p("engine"), "engine %q cannot be managed", "storbench creates %s servers; for another engine use kind: external with a dsn", t.Engine, strings.Join(managedEngines, " and "))
	}

	ownPath := func(key, dir string) {
		if !filepath.IsAbs(dir) {
			c.errf(p(key), "%s %q is not an absolute path", "write the full directory, e.g. /mnt/nvme/storbench", key, dir)
			return
		}
		clean := filepath.Clean(dir)
		if other, dup := paths[clean]; dup {
			c.errf(p(key), "%s %s is also %s", "every server and WAL directory needs a directory of its own", key, dir, other)
			return
		}
		paths[clean] = fmt.Sprintf("target %s's %s", t.Name, key)
	}
	if t.Path == "" {
		c.errf(p("path"), "managed target %s has no path", "add path: the directory on the storage under test, e.g. /mnt/nvme/storbench", t.Name)
	} else {
		ownPath("path", t.Path)
	}
	if t.WALPath != "" {
		ownPath("wal_path", t.WALPath)
	}
	if t.Replica != nil {
		if t.Replica.Path == "" {
			c.errf(p("replica"), "the replica of %s has no path", "add path: under replica, the standby's directory on its own storage", t.Name)
		} else {
			ownPath("replica.path", t.Replica.Path)
		}
	}
	if c.doc.has(p("memory")) {
		c.memory(p("memory"), t.Memory.Bytes)
	}
	if c.doc.has(p("cpus")) {
		c.cpus(p("cpus"), t.CPUs)
	}
}

// memory refuses a variant that cannot be what it claims: too small to run, or more
// than the machine has, which the cgroup would allow and the page cache would fake.
func (c *checker) memory(path string, b int64) {
	if b < minMemory {
		c.errf(path, "memory %s is too small", "give at least 64MB", sizeText(b))
		return
	}
	total, err := memTotal()
	if err == nil && total > 0 && b > total {
		c.errf(path, "memory %s is more than this machine's %s", "a limit above the machine's memory is no limit; give at most %s", sizeText(b), sizeText(total), sizeText(total))
	}
}

func (c *checker) cpus(path, list string) {
	if !cpuListRE.MatchString(list) {
		c.errf(path, "cpus %q is not a CPU list", "write CPU numbers and ranges without spaces, e.g. 0-3 or 0,2", list)
		return
	}
	for _, part := range strings.Split(list, ",") {
		lo, hi, isRange := strings.Cut(part, "-")
		a, _ := strconv.Atoi(lo)
		if b, _ := strconv.Atoi(hi); isRange && b < a {
			c.errf(path, "cpus %q has the range %s backwards", "write the lower CPU first, e.g. %d-%d", list, part, b, a)
			return
		}
	}
}

func (c *checker) external(i int, t *Target) {
	p := func(key string) string { return fmt.Sprintf("targets[%d].%s", i, key) }
	if t.DSN == "" {
		c.errf(p("dsn"), "external target %s has no dsn", "add dsn: e.g. postgres://bench@db1:5432/tpcc", t.Name)
	} else if u, err := url.Parse(t.DSN); err != nil || u.Scheme == "" || u.Host == "" {
		c.errf(p("dsn"), "dsn of %s is not a URL", "write e.g. postgres://bench@db1:5432/tpcc", t.Name)
	} else if _, has := u.User.Password(); has || u.Query().Has("password") {
		c.errf(p("dsn"), "dsn of %s holds a password", "a study file is stored with the results: remove the password and name an environment variable that holds it with password_env", t.Name)
	}
	if t.PasswordEnv != "" {
		if !envNameRE.MatchString(t.PasswordEnv) {
			c.errf(p("password_env"), "password_env %q is not an environment variable name", "give the variable's name, e.g. PGPASSWORD, not its value", t.PasswordEnv)
		} else if u, err := url.Parse(t.DSN); t.DSN != "" && err == nil && u.User == nil {
			// The password goes with the DSN's user name; without one it would be dropped.
			c.errf(p("dsn"), "dsn of %s has no user for the password in %s", "write the user before the host, e.g. postgres://bench@db1:5432/tpcc", t.Name, t.PasswordEnv)
		}
	}
	if t.MetricsHost != "" {
		if u, err := url.Parse(t.MetricsHost); err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
			c.errf(p("metrics_host"), "metrics_host %q is not an http URL", "give node_exporter's URL, e.g. http://db1:9100/metrics", t.MetricsHost)
		}
	}
}

func (c *checker) workload(w *Workload) {
	switch {
	case !c.doc.has("workload.warehouses"):
		c.errf("workload.warehouses", "the workload has no warehouses", "add warehouses: N under workload:, the schema size, about 100MB each")
	case w.Warehouses < 1:
		c.errf("workload.warehouses", "warehouses %d is too few", "the schema needs at least 1 warehouse", w.Warehouses)
	}
	if !c.doc.has("workload.mode") {
		w.Mode = DefaultMode
	} else if w.Mode != "procedures" && w.Mode != "sql" {
		c.errf("workload.mode", "mode %q is unknown", "use procedures, stored procedures as HammerDB does, or sql, statements sent by the client", w.Mode)
	}
	if !c.doc.has("workload.restore") {
		w.Restore = DefaultRestore
	} else if w.Restore != "each-step" && w.Restore != "never" {
		c.errf("workload.restore", "restore %q is unknown", "use each-step, every step from the base image, or never", w.Restore)
	}
}

// kindKnobs are the keys each experiment kind reads; a key of another kind is most
// likely a misplaced line, and ignoring it would silently run something else.
var kindKnobs = map[string][]string{
	UserSweep:       {"users", "ramp", "duration", "repeats"},
	MemorySweep:     {"users", "ramp", "duration", "repeats", "memory"},
	CPUSweep:        {"users", "ramp", "duration", "repeats", "cpus"},
	Replication:     {"users", "ramp", "duration", "repeats"},
	StorageProfiles: {"profiles", "size", "runtime"},
	BackupRestore:   {"cycles", "method"},
	Consolidation:   {"users", "ramp", "duration", "instances", "instance_memory", "instance_cpus", "noisy", "baseline"},
}

// allKnobs are the keys of every kind, in a fixed order: the union of kindKnobs.
var allKnobs = func() []string {
	var all []string
	for _, kind := range experimentKinds {
		for _, k := range kindKnobs[kind] {
			if !slices.Contains(all, k) {
				all = append(all, k)
			}
		}
	}
	return all
}()

func (c *checker) experiment(s *Study, i int, names map[string]int) {
	e := &s.Experiments[i]
	p := func(key string) string { return fmt.Sprintf("experiments[%d].%s", i, key) }
	if !c.doc.has(p("kind")) {
		c.errf(p("kind"), "experiment %d has no kind", "add kind: one of %s", i+1, strings.Join(experimentKinds, ", "))
		return
	}
	knobs, known := kindKnobs[e.Kind]
	if !known {
		c.errf(p("kind"), "experiment kind %q is unknown", "use one of %s", e.Kind, strings.Join(experimentKinds, ", "))
		return
	}

	// The kind names an experiment by default; a second one of the same kind needs a
	// name of its own, as step IDs hold it.
	if !c.doc.has(p("name")) {
		e.Name = e.Kind
	}
	c.uniqueName(p("name"), "experiment", e.Name, names, "name each experiment, e.g. name: sweep-long")

	for _, k := range allKnobs {
		if c.doc.has(p(k)) && !slices.Contains(knobs, k) {
			c.errf(p(k), "%s does not apply to a %s experiment", "it takes %s; remove the line or move it to an experiment of the kind that uses it", k, e.Kind, strings.Join(knobs, ", "))
		}
	}

	c.experimentTargets(s, i)

	if slices.Contains(knobs, "users") {
		c.sweep(i, e)
	}
	switch e.Kind {
	case MemorySweep:
		if len(e.Memory) == 0 {
			c.errf(p("memory"), "%s has no memory values", "add memory: e.g. [8GB, 2GB]", label(e))
		}
		distinct(c, p("memory"), "memory", e.Memory, func(m Size) string { return sizeText(m.Bytes) },
			func(ip string, m Size) { c.memory(ip, m.Bytes) })
	case CPUSweep:
		if len(e.CPUs) == 0 {
			c.errf(p("cpus"), "%s has no cpu sets", "add cpus: e.g. [0-3, 0-1, 0]", label(e))
		}
		distinct(c, p("cpus"), "cpus", e.CPUs, func(set string) string { return set }, c.cpus)
	case StorageProfiles:
		if len(e.Profiles) == 0 {
			c.errf(p("profiles"), "%s has no profiles", "add profiles: e.g. [sql-data-8k]; storbench fio --list names them", label(e))
		}
		distinct(c, p("profiles"), "profile", e.Profiles, func(name string) string { return name }, func(ip, name string) {
			if _, err := fio.Lookup([]string{name}, false); err != nil {
				c.errf(ip, "fio profile %q is unknown", "use one of %s", name, strings.Join(profileNames(), ", "))
			}
		})
		if !c.doc.has(p("size")) {
			e.Size = Size{DefaultFioSize}
		} else if e.Size.Bytes < 16<<20 {
			c.errf(p("size"), "size %s is too small for a test file", "give at least 16MB; larger than the device's cache measures the device", sizeText(e.Size.Bytes))
		}
		if !c.doc.has(p("runtime")) {
			e.Runtime = Duration{DefaultFioRuntime}
		} else if e.Runtime.Duration < minRunSeconds {
			c.errf(p("runtime"), "runtime %s is too short", "give at least 1s per point", e.Runtime)
		}
	case Consolidation:
		c.consolidation(i, e)
	case BackupRestore:
		if !c.doc.has(p("cycles")) {
			e.Cycles = DefaultCycles
		} else if e.Cycles < 1 {
			c.errf(p("cycles"), "cycles %d is too few", "give 1 or more backup-then-restore cycles", e.Cycles)
		}
		if !c.doc.has(p("method")) {
			e.Method = DefaultMethod
		} else if e.Method != "physical" && e.Method != "logical" {
			c.errf(p("method"), "method %q is unknown", "use physical, a copy of the server's files, or logical, a dump", e.Method)
		}
	}
}

// consolidation checks the instances, the noisy workload and that it all fits the
// machine: every instance's memory in its memory, every connection a process.
func (c *checker) consolidation(i int, e *Experiment) {
	p := func(key string) string { return fmt.Sprintf("experiments[%d].%s", i, key) }
	if len(e.Users.Values) != 1 {
		c.errf(p("users"), "%s needs one users value: the OLTP users of each instance", "e.g. users: 4", label(e))
	}
	if e.Instances < 2 {
		c.errf(p("instances"), "%s needs at least 2 instances", "e.g. instances: 4", label(e))
	}
	if !c.doc.has(p("instance_memory")) {
		e.InstanceMemory = Size{512 << 20}
	} else {
		c.memory(p("instance_memory"), e.InstanceMemory.Bytes)
	}
	for j, set := range e.InstanceCPUs {
		c.cpus(fmt.Sprintf("%s[%d]", p("instance_cpus"), j), set)
	}
	if total, err := memTotal(); err == nil && total > 0 && int64(e.Instances)*e.InstanceMemory.Bytes > total*8/10 {
		c.errf(p("instances"), "%d instances of %s need %s, more than 80%% of this machine's %s", "give fewer instances or less instance_memory",
			e.Instances, sizeText(e.InstanceMemory.Bytes), sizeText(int64(e.Instances)*e.InstanceMemory.Bytes), sizeText(total))
	}
	if procs, ok := maxProcesses(); ok && len(e.Users.Values) == 1 && int64(e.Instances*(e.Users.Values[0]+20)) > procs {
		c.errf(p("instances"), "%d instances of %d users need about %d processes, this user may run %d", "give fewer instances or users, or raise ulimit -u",
			e.Instances, e.Users.Values[0], e.Instances*(e.Users.Values[0]+20), procs)
	}
	if !c.doc.has(p("ramp")) {
		e.Ramp = Duration{DefaultRamp}
	}
	if !c.doc.has(p("duration")) {
		e.Duration = Duration{DefaultDuration}
	} else if e.Duration.Duration < minRunSeconds {
		c.errf(p("duration"), "duration %s is too short", "measure for at least 1s", e.Duration)
	}
	n := e.Noisy
	if n == nil {
		if e.Baseline {
			c.errf(p("baseline"), "baseline compares with a noisy workload", "add noisy: or remove baseline")
		}
		return
	}
	np := func(key string) string { return p("noisy." + key) }
	if n.Instances < 1 || n.Instances >= e.Instances {
		c.errf(np("instances"), "noisy instances %d out of %d", "give 1 to %d: the others run TPC-C", n.Instances, e.Instances, e.Instances-1)
	}
	if n.Kind == "" {
		n.Kind = "backup"
	} else if n.Kind != "backup" {
		c.errf(np("kind"), "noisy kind %q is unknown", "use backup", n.Kind)
	}
	if n.Method == "" {
		n.Method = DefaultMethod
	} else if n.Method != "physical" && n.Method != "logical" {
		c.errf(np("method"), "method %q is unknown", "use physical or logical", n.Method)
	}
	if n.Interval.Duration < time.Second {
		c.errf(np("interval"), "interval %s is too short", "give the time between backup starts, e.g. 100s", n.Interval)
	}
	if n.Cycles < 1 {
		c.errf(np("cycles"), "cycles %d is too few", "give 1 or more backups", n.Cycles)
	}
	if n.Path != "" && !filepath.IsAbs(n.Path) {
		c.errf(np("path"), "backup path %q is not absolute", "give the directory the backups go to, e.g. /mnt/backup", n.Path)
	}
}

// uniqueName checks a target's or experiment's name: step IDs and results hold it, so
// it must be short, plain and used once.
func (c *checker) uniqueName(path, what, name string, names map[string]int, hint string) {
	if !shortNameRE.MatchString(name) {
		c.errf(path, "%s name %q is not allowed", "use lower-case letters, digits, '-' and '_', starting with a letter, at most 40", what, name)
		return
	}
	if first, dup := names[name]; dup {
		c.errf(path, "%s name %q is used twice", "the first is at line %d; "+hint, what, name, first)
		return
	}
	names[name] = c.doc.line(path)
}

// distinct checks each item of the list at path once: a repeat is reported with the
// line of its first (a copy-paste slip, or a variant run twice); the others go to check.
func distinct[T any](c *checker, path, what string, items []T, show func(T) string, check func(ip string, item T)) {
	seen := map[string]int{}
	for j, item := range items {
		ip := fmt.Sprintf("%s[%d]", path, j)
		key := show(item)
		if first, dup := seen[key]; dup {
			c.errf(ip, "%s %s is listed twice", "the first is at line %d", what, key, first)
			continue
		}
		seen[key] = c.doc.line(ip)
		check(ip, item)
	}
}

func (c *checker) sweep(i int, e *Experiment) {
	p := func(key string) string { return fmt.Sprintf("experiments[%d].%s", i, key) }
	if len(e.Users.Values) == 0 {
		c.errf(p("users"), "%s has no users", "add users: e.g. [1, 2, 4, 8] or fibonacci: 89", label(e))
	}
	if !c.doc.has(p("ramp")) {
		e.Ramp = Duration{DefaultRamp}
	}
	if !c.doc.has(p("duration")) {
		e.Duration = Duration{DefaultDuration}
	} else if e.Duration.Duration < minRunSeconds {
		c.errf(p("duration"), "duration %s is too short", "measure for at least 1s; the papers used 5m", e.Duration)
	}
	if !c.doc.has(p("repeats")) {
		e.Repeats = DefaultRepeats
	} else if e.Repeats < 1 {
		c.errf(p("repeats"), "repeats %d is too few", "give 1 or more; 3 gives the report a spread", e.Repeats)
	}
}

// experimentTargets checks the targets an experiment names, or, when it names none,
// that its kind applies to at least one.
func (c *checker) experimentTargets(s *Study, i int) {
	e := &s.Experiments[i]
	p := fmt.Sprintf("experiments[%d].targets", i)
	seen := map[string]int{}
	for j, name := range e.Targets {
		ip := fmt.Sprintf("%s[%d]", p, j)
		if first, dup := seen[name]; dup {
			c.errf(ip, "target %s is listed twice", "the first is at line %d", name, first)
			continue
		}
		seen[name] = c.doc.line(ip)
		k := slices.IndexFunc(s.Targets, func(t Target) bool { return t.Name == name })
		if k < 0 {
			c.errf(ip, "%s names target %q, which the study does not have", "use one of the names under targets: %s", label(e), name, strings.Join(targetNames(s), ", "))
			continue
		}
		if why := notApplicable(e.Kind, &s.Targets[k]); why != "" {
			fix := "remove it from targets:"
			if e.Kind == Replication && s.Targets[k].Kind == "managed" {
				fix = "give the target a replica: with a path and sync: true, or remove it from targets:"
			}
			c.errf(ip, "%s cannot run on target %s: %s", fix, e.Kind, name, why)
		}
	}
	if len(e.Targets) == 0 && len(s.Targets) > 0 && len(experimentTargets(s, e)) == 0 {
		what := "managed"
		if e.Kind == Replication {
			what = "managed with a replica"
		}
		c.errf(fmt.Sprintf("experiments[%d].kind", i), "%s has no target to run on", "it runs on targets that are %s, and the study has none", label(e), what)
	}
}

// label names an experiment in messages: by its kind, and its name when it has one
// of its own.
func label(e *Experiment) string {
	if e.Name == "" || e.Name == e.Kind {
		return "the " + e.Kind + " experiment"
	}
	return fmt.Sprintf("the %s experiment %q", e.Kind, e.Name)
}

// notApplicable says why an experiment kind cannot run on a target ("" when it can):
// storbench can only resize, pin, replicate, back up or fio-test the servers and
// directories it manages.
func notApplicable(kind string, t *Target) string {
	managed := t.Kind == "" || t.Kind == "managed"
	switch kind {
	case MemorySweep, CPUSweep, BackupRestore, Consolidation:
		if !managed {
			return "it is external, and storbench only controls the servers it manages"
		}
	case StorageProfiles:
		if !managed {
			return "it is external, so it has no path here to test"
		}
	case Replication:
		if !managed {
			return "it is external, and storbench only controls the servers it manages"
		}
		if t.Replica == nil {
			return "it has no replica"
		}
	}
	return ""
}

// experimentTargets are the targets an experiment runs on: those it names, in the
// order it names them, or else every target its kind applies to, in file order.
func experimentTargets(s *Study, e *Experiment) []*Target {
	var out []*Target
	if len(e.Targets) > 0 {
		for _, name := range e.Targets {
			if k := slices.IndexFunc(s.Targets, func(t Target) bool { return t.Name == name }); k >= 0 && !slices.Contains(out, &s.Targets[k]) {
				out = append(out, &s.Targets[k])
			}
		}
		return out
	}
	for k := range s.Targets {
		if notApplicable(e.Kind, &s.Targets[k]) == "" {
			out = append(out, &s.Targets[k])
		}
	}
	return out
}

func targetNames(s *Study) []string {
	var out []string
	for _, t := range s.Targets {
		out = append(out, t.Name)
	}
	return out
}

func profileNames() []string {
	var out []string
	for _, p := range fio.Profiles {
		out = append(out, p.Name)
	}
	return out
}

func (c *checker) metrics(m *Metrics) {
	if !c.doc.has("metrics.interval") {
		m.Interval = Duration{DefaultInterval}
	} else if m.Interval.Duration < minInterval {
		c.errf("metrics.interval", "interval %s is too short", "sample every 100ms or more; 1s is the default", m.Interval)
	}
	if !c.doc.has("metrics.io_latency") {
		m.IOLatency = DefaultIOLatency
	} else if m.IOLatency != "auto" && m.IOLatency != "on" && m.IOLatency != "off" {
		c.errf("metrics.io_latency", "io_latency %q is unknown", "use auto, traced when bpftrace can, on, which requires it, or off", m.IOLatency)
	}
}

// maxProcesses is this user's process limit (ulimit -u); false when unlimited.
func maxProcesses() (int64, bool) {
	var l unix.Rlimit
	if unix.Getrlimit(unix.RLIMIT_NPROC, &l) != nil || l.Cur == unix.RLIM_INFINITY {
		return 0, false
	}
	return int64(l.Cur), true
}
