package report

import (
	"fmt"
	"io"
	"math"
	"slices"
	"strings"
	"text/tabwriter"
	"unicode/utf8"
)

// Table is a data table as the report, the terminal and Markdown show it: the
// numbers are formatted once, here, so all three agree to the digit.
type Table struct {
	Title   string
	Columns []string
	Rows    [][]string
	// Notes say where the figures come from and what they mean.
	Notes []string
	// Keys is how many leading columns name a row (at least the first does): a text
	// table too wide for the terminal is printed in parts, each led by them.
	Keys int
	// Groups are the sizes of the runs of columns after the keys that are read
	// together (A, B, B % of A) and so are never split between parts; columns past
	// them stand alone.
	Groups []int
}

// TextWidth is the terminal width text tables are fitted to unless asked wide.
const TextWidth = 100

// textPadding is the space between columns of a text table.
const textPadding = 2

// WriteText prints the table aligned for a terminal, as wide as its cells make it.
func (t *Table) WriteText(w io.Writer) error { return t.WriteTextWithin(w, 0) }

// WriteTextWithin prints the table aligned in at most width columns (0: no limit)
// where its cells allow: a wider table is printed in parts of its columns, each led
// by the key columns, and the title and notes are wrapped.
func (t *Table) WriteTextWithin(w io.Writer, width int) error {
	for _, line := range wrap(t.Title, width) {
		fmt.Fprintf(w, "%s\n", line)
	}
	for i, part := range t.parts(width) {
		if i > 0 {
			fmt.Fprintln(w)
		}
		tw := tabwriter.NewWriter(w, 0, 0, textPadding, ' ', tabwriter.AlignRight)
		for _, r := range append([][]string{t.Columns}, t.Rows...) {
			for _, c := range part {
				fmt.Fprintf(tw, "%s\t", cellAt(r, c))
			}
			fmt.Fprintln(tw)
		}
		if err := tw.Flush(); err != nil {
			return err
		}
	}
	for _, n := range t.Notes {
		for _, line := range wrap(n, width) {
			fmt.Fprintf(w, "%s\n", line)
		}
	}
	return nil
}

// parts splits the columns into the fewest parts, in order, that fit width, each
// led by the key columns and none splitting a group; one part when width is 0.
func (t *Table) parts(width int) [][]int {
	cols := make([]int, len(t.Columns))
	for i := range cols {
		cols[i] = i
	}
	keys := min(max(t.Keys, 1), len(cols))
	widths := make([]int, len(cols))
	total := 0
	for c := range cols {
		for _, r := range append([][]string{t.Columns}, t.Rows...) {
			widths[c] = max(widths[c], utf8.RuneCountInString(cellAt(r, c))+textPadding)
		}
		total += widths[c]
	}
	if width == 0 || total <= width {
		return [][]int{cols}
	}
	var groups [][]int
	next := keys
	for _, n := range t.Groups {
		groups = append(groups, cols[next:min(next+n, len(cols))])
		next = min(next+n, len(cols))
	}
	for ; next < len(cols); next++ {
		groups = append(groups, cols[next:next+1])
	}
	keyWidth := 0
	for _, c := range cols[:keys] {
		keyWidth += widths[c]
	}
	var out [][]int
	part, used := slices.Clone(cols[:keys]), keyWidth
	for _, g := range groups {
		gw := 0
		for _, c := range g {
			gw += widths[c]
		}
		if len(part) > keys && used+gw > width {
			out = append(out, part)
			part, used = slices.Clone(cols[:keys]), keyWidth
		}
		part, used = append(part, g...), used+gw
	}
	return append(out, part)
}

// cellAt is a row's cell in column c; a short row's missing cells are empty.
func cellAt(r []string, c int) string {
	if c < len(r) {
		return r[c]
	}
	return ""
}

// wrap breaks text into lines of at most width characters at spaces (a longer
// word keeps its own line); width 0 leaves it whole. No text, no lines.
func wrap(text string, width int) []string {
	if text == "" {
		return nil
	}
	if width == 0 {
		return []string{text}
	}
	var lines []string
	line := ""
	for _, word := range strings.Fields(text) {
		switch {
		case line == "":
			line = word
		case utf8.RuneCountInString(line)+1+utf8.RuneCountInString(word) > width:
			lines = append(lines, line)
			line = word
		default:
			line += " " + word
		}
	}
	return append(lines, line)
}

// WriteMarkdown prints the table as GitHub-flavoured Markdown, numbers right-aligned.
func (t *Table) WriteMarkdown(w io.Writer) error {
	cell := func(s string) string { return strings.ReplaceAll(s, "|", `\|`) }
	if t.Title != "" {
		fmt.Fprintf(w, "**%s**\n\n", cell(t.Title))
	}
	var head, rule []string
	for i, c := range t.Columns {
		head = append(head, cell(c))
		if i == 0 {
			rule = append(rule, "---")
		} else {
			rule = append(rule, "---:")
		}
	}
	fmt.Fprintf(w, "| %s |\n| %s |\n", strings.Join(head, " | "), strings.Join(rule, " | "))
	for _, r := range t.Rows {
		cells := make([]string, len(r))
		for i := range r {
			cells[i] = cell(r[i])
		}
		fmt.Fprintf(w, "| %s |\n", strings.Join(cells, " | "))
	}
	if len(t.Notes) > 0 {
		fmt.Fprintln(w)
		for _, n := range t.Notes {
			fmt.Fprintf(w, "%s  \n", cell(n))
		}
	}
	_, err := fmt.Fprintln(w)
	return err
}

// num formats a figure with thousands separators and the given decimals; a figure
// that was not measured is "-".
func num(v float64, decimals int) string {
	if math.IsNaN(v) || math.IsInf(v, 0) {
		return "-"
	}
	s := fmt.Sprintf("%.*f", decimals, v)
	neg := strings.HasPrefix(s, "-")
	s = strings.TrimPrefix(s, "-")
	whole, frac, _ := strings.Cut(s, ".")
	var b strings.Builder
	for i, r := range whole {
		if i > 0 && (len(whole)-i)%3 == 0 {
			b.WriteByte(',')
		}
		b.WriteRune(r)
	}
	out := b.String()
	if frac != "" {
		out += "." + frac
	}
	if neg && strings.Trim(out, "0.,") != "" {
		out = "-" + out
	}
	return out
}

// stat formats a repeated figure: its mean, and its range when it was measured more
// than once.
func stat(s Stat, decimals int) string {
	if s.N == 0 {
		return "-"
	}
	if s.N == 1 {
		return num(s.Mean, decimals)
	}
	return fmt.Sprintf("%s (%s–%s)", num(s.Mean, decimals), num(s.Min, decimals), num(s.Max, decimals))
}

// mean formats a Stat's mean alone ("-" when not measured).
func mean(s Stat, decimals int) string {
	if s.N == 0 {
		return "-"
	}
	return num(s.Mean, decimals)
}

// percentOf is B as a percentage of A, as the papers' comparison columns show it.
func percentOf(b, a float64) string {
	if a == 0 || math.IsNaN(a) || math.IsNaN(b) {
		return "-"
	}
	return fmt.Sprintf("%.0f%%", 100*b/a)
}

// statPercent is percentOf over two Stats' means ("-" if either was not measured).
func statPercent(b, a Stat) string {
	if a.N == 0 || b.N == 0 {
		return "-"
	}
	return percentOf(b.Mean, a.Mean)
}
