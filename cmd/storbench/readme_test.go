package main

import (
	"bufio"
	"fmt"
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/storbench/storbench/internal/driver"
	"github.com/storbench/storbench/internal/metrics"
	"github.com/storbench/storbench/internal/study"
)

// readmePath is the README a newcomer follows: its commands must be the CLI's.
const readmePath = "../../README.md"

// TestReadmeCommandsParse parses every `storbench …` line of the shell code blocks of
// the README and docs/*.md against the real command tree, without running anything: the verb must exist
// and be runnable, every flag must exist and take its value, and the positional
// arguments must be what the verb accepts. A renamed flag or verb fails here instead
// of on a newcomer's first command.
func TestReadmeCommandsParse(t *testing.T) {
	cmds := readmeCommands(t, readmePath)
	if len(cmds) < 10 {
		t.Fatalf("%s: found %d storbench commands in its shell code blocks, expected the tour's", readmePath, len(cmds))
	}
	for _, c := range cmds {
		if err := parseCommand(c.args); err != nil {
			t.Errorf("%s:%d: %s: %v", readmePath, c.line, c.text, err)
		}
	}
	docs, err := filepath.Glob("../../docs/*.md")
	if err != nil || len(docs) == 0 {
		t.Fatalf("docs/*.md: %v %v", docs, err)
	}
	for _, doc := range docs {
		for _, c := range readmeCommands(t, doc) {
			if err := parseCommand(c.args); err != nil {
				t.Errorf("%s:%d: %s: %v", doc, c.line, c.text, err)
			}
		}
	}
}

// TestReadmeTestCommand: .ci/run runs "exactly the README's test command"; both must
// hold the same line.
func TestReadmeTestCommand(t *testing.T) {
	ci, err := os.ReadFile("../../.ci/run")
	if err != nil {
		t.Fatal(err)
	}
	_, after, ok := strings.Cut(string(ci), "# README \"Tests\":\n")
	if !ok {
		t.Fatal(`.ci/run: no line '# README "Tests":' above the test command`)
	}
	command, _, _ := strings.Cut(after, "\n")
	readme, err := os.ReadFile(readmePath)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(readme), "\n    "+command+"\n") && !strings.Contains(string(readme), "\n"+command+"\n") {
		t.Errorf("README.md does not show .ci/run's test command as a line of its own: %q", command)
	}
}

// TestParseCommandRefuses: the check itself tells a wrong command from a right one.
func TestParseCommandRefuses(t *testing.T) {
	for _, bad := range []string{
		"storbench bogus --path x",                   // no such verb
		"storbench instance bogus --name x",          // no such sub-verb
		"storbench instance",                         // a group, not a command
		"storbench run --dsn sqlite:x.db --bogus 1",  // no such flag
		"storbench run --users many",                 // not a number
		"storbench compare a.json",                   // two arguments needed
		"storbench study plan",                       // a file needed
		"storbench quick --path 'unterminated",       // shell quoting
		"storbench report results/x --title",         // flag without its value
		"storbench fio --path /var/tmp --runtime 10", // a duration needs its unit
	} {
		args, err := shellWords(strings.TrimPrefix(bad, "storbench "))
		if err == nil {
			err = parseCommand(args)
		}
		if err == nil {
			t.Errorf("%s: accepted", bad)
		}
	}
	good, err := shellWords(`fio compare "a b.json" 'c.json'   # comment`)
	if err != nil || parseCommand(good) != nil || len(good) != 4 || good[2] != "a b.json" {
		t.Errorf("a valid command with quotes and a comment: %q %v %v", good, err, parseCommand(good))
	}
}

// readmeCommand is one `storbench …` line of a shell code block.
type readmeCommand struct {
	line int
	text string
	args []string // after "storbench"
}

// readmeCommands returns the storbench commands of the file's fenced sh/bash/shell
// code blocks (where the README puts commands to type) and of its indented blocks.
func readmeCommands(t *testing.T, path string) []readmeCommand {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var cmds []readmeCommand
	inFence, shell := false, false
	sc := bufio.NewScanner(f)
	for n := 1; sc.Scan(); n++ {
		line := sc.Text()
		trimmed := strings.TrimSpace(line)
		if strings.HasPrefix(trimmed, "```") {
			if !inFence {
				inFence = true
				lang := strings.TrimSpace(strings.TrimPrefix(trimmed, "```"))
				shell = lang == "sh" || lang == "bash" || lang == "shell" || lang == "console"
			} else {
				inFence, shell = false, false
			}
			continue
		}
		indented := !inFence && strings.HasPrefix(line, "    ")
		if !(shell || indented) {
			continue
		}
		text := strings.TrimPrefix(trimmed, "$ ")
		if !strings.HasPrefix(text, "storbench ") {
			continue
		}
		args, err := shellWords(strings.TrimPrefix(text, "storbench "))
		if err != nil {
			t.Errorf("%s:%d: %s: %v", path, n, text, err)
			continue
		}
		cmds = append(cmds, readmeCommand{line: n, text: text, args: args})
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	return cmds
}

// parseCommand checks args (after "storbench") against the command tree as cobra
// would parse them, without running the command.
func parseCommand(args []string) error {
	root := rootCmd()
	cmd, rest, err := root.Find(args)
	if err != nil {
		return err
	}
	if cmd == root {
		return fmt.Errorf("no verb")
	}
	if !cmd.Runnable() {
		return fmt.Errorf("%q is a group of verbs, not a command (storbench %s --help)", cmd.CommandPath(), cmd.Name())
	}
	if err := cmd.ParseFlags(rest); err != nil {
		return err
	}
	return cmd.ValidateArgs(cmd.Flags().Args())
}

// shellWords splits a command line as sh would for the README's simple commands:
// blanks separate words, single and double quotes group, # starts a comment; no
// variables, globs or backslash escapes (the README's commands have none).
func shellWords(s string) ([]string, error) {
	var words []string
	var cur strings.Builder
	inWord := false
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c == ' ' || c == '\t':
			if inWord {
				words = append(words, cur.String())
				cur.Reset()
				inWord = false
			}
		case c == '#' && !inWord:
			return words, nil
		case c == '\'' || c == '"':
			end := strings.IndexByte(s[i+1:], c)
			if end < 0 {
				return nil, fmt.Errorf("unterminated %c quote", c)
			}
			cur.WriteString(s[i+1 : i+1+end])
			i += end + 1
			inWord = true
		default:
			cur.WriteByte(c)
			inWord = true
		}
	}
	if inWord {
		words = append(words, cur.String())
	}
	return words, nil
}

// TestReadmeQuickTime: the README states how long quick took; the figure cannot be
// below the timed windows quick's own study runs (ramps, windows, fio runtimes), so a
// longer default window or a new step that the README was not measured again for
// fails here (it said 47 s while its 30 s windows alone take 99 s).
func TestReadmeQuickTime(t *testing.T) {
	readme, err := os.ReadFile(readmePath)
	if err != nil {
		t.Fatal(err)
	}
	m := regexp.MustCompile(`(?s)storbench quick --path.*?Measured: (\d+) s on `).FindSubmatch(readme)
	if m == nil {
		t.Fatal(`README.md: no "Measured: N s on …" after the quick command`)
	}
	stated, _ := strconv.Atoi(string(m[1]))
	// The README's case: PostgreSQL and fio installed.
	file, err := study.QuickFile("/var/tmp/storbench-quick", true, false, driver.CounterWindow, metrics.DefaultWaitRate)
	if err != nil {
		t.Fatal(err)
	}
	s, err := study.Parse("quick.yaml", file)
	if err != nil {
		t.Fatal(err)
	}
	var windows time.Duration
	for _, st := range study.Plan(s) {
		windows += st.Ramp + st.Duration + st.Runtime
	}
	if time.Duration(stated)*time.Second < windows {
		t.Errorf("README.md says quick took %d s, but its study's windows alone take %v: measure it again (bash bench/quick.sh) and state the figure", stated, windows)
	}
}

// TestArchitectureNamesEveryPackage keeps docs/architecture.md's package map whole:
// every package under internal/ is named in it (its last path element), so a new
// package cannot land unexplained.
func TestArchitectureNamesEveryPackage(t *testing.T) {
	doc, err := os.ReadFile("../../docs/architecture.md")
	if err != nil {
		t.Fatal(err)
	}
	named := map[string]bool{}
	for _, w := range strings.FieldsFunc(string(doc), func(r rune) bool {
		return !(r == '_' || r >= 'a' && r <= 'z' || r >= '0' && r <= '9')
	}) {
		named[w] = true
	}
	err = filepath.WalkDir("../../internal", func(path string, d fs.DirEntry, err error) error {
		if err != nil || !d.IsDir() {
			return err
		}
		sources, _ := filepath.Glob(filepath.Join(path, "*.go"))
		code := slices.ContainsFunc(sources, func(f string) bool { return !strings.HasSuffix(f, "_test.go") })
		if code && !named[filepath.Base(path)] {
			t.Errorf("docs/architecture.md does not name package %s: add it to the package map", strings.TrimPrefix(path, "../../"))
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

// The leaves stay leaves (docs/architecture.md): what fio, the sampler and every
// package lean on for disks, free space, interruptions, sizes and input errors
// imports no other package of storbench's but input, and fio stays off the engines
// and the sampler, so that a change there cannot reach a storage profile.
func TestLeavesStayLeaves(t *testing.T) {
	allowed := map[string][]string{
		"blockdev": {"input"}, "interrupt": nil, "fsplace": nil, "input": nil, "bytesize": {"input"},
		"fio": {"blockdev", "bytesize", "childproc", "fsplace", "infile", "input", "interrupt"},
	}
	fset := token.NewFileSet()
	for pkg, may := range allowed {
		sources, _ := filepath.Glob(filepath.Join("../../internal", pkg, "*.go"))
		for _, f := range sources {
			if strings.HasSuffix(f, "_test.go") {
				continue
			}
			file, err := parser.ParseFile(fset, f, nil, parser.ImportsOnly)
			if err != nil {
				t.Fatal(err)
			}
			for _, imp := range file.Imports {
				path, _ := strconv.Unquote(imp.Path.Value)
				own, ok := strings.CutPrefix(path, "github.com/storbench/storbench/internal/")
				if ok && !slices.Contains(may, own) {
					t.Errorf("%s imports internal/%s: internal/%s may import only %v", f, own, pkg, may)
				}
			}
		}
	}
}
