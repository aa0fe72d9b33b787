package report

import (
	"fmt"
	"io"
	"math"
	"strings"
	"text/tabwriter"
)

// Table is a data table as the report, the terminal and Markdown show it: the
// numbers are formatted once, here, so all three agree to the digit.
type Table struct {
	Title   string
	Columns []string
	Rows    [][]string
	// Notes say where the figures come from and what they mean.
	Notes []string
}

// WriteText prints the table aligned for a terminal.
func (t *Table) WriteText(w io.Writer) error {
	if t.Title != "" {
		fmt.Fprintf(w, "%s\n", t.Title)
	}
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintf(tw, "%s\t\n", strings.Join(t.Columns, "\t"))
	for _, r := range t.Rows {
		fmt.Fprintf(tw, "%s\t\n", strings.Join(r, "\t"))
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	for _, n := range t.Notes {
		fmt.Fprintf(w, "%s\n", n)
	}
	return nil
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
