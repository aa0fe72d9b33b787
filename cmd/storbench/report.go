package main

import (
	"fmt"
	"strings"

	"github.com/spf13/cobra"

	"github.com/storbench/storbench/internal/cost"
	"github.com/storbench/storbench/internal/outfile"
	"github.com/storbench/storbench/internal/report"
)

func reportCmd() *cobra.Command {
	var out, costsPath, title string
	c := &cobra.Command{
		Use:   "report RESULTS... [-o report.html]",
		Short: "Write the results as one self-contained HTML report: charts, tables, costs",
		Long: `Write one HTML file with the papers' charts and tables from a study's results
store (--results of study run), a run's JSON (run --json) or a fio result
(fio --json), or several of them compared. The file inlines its chart library: it
opens with no network and prints to PDF from a browser.

Without -o it writes report.html beside the first results given. It replaces only
a report it wrote (or an empty file), never another file of that name.

Costs come from the study file's costs block or --costs FILE (see examples/).`,
		Args: cobra.MinimumNArgs(1),
		RunE: func(c *cobra.Command, args []string) error {
			if out == "" {
				out = report.DefaultPath(args)
			}
			opts := report.Options{Title: title, Version: version}
			if costsPath != "" {
				var err error
				if opts.Costs, err = cost.Load(costsPath); err != nil {
					return err
				}
			}
			return makeReport(c, args, opts, report.File(out, "-o"))
		},
	}
	c.Flags().StringVarP(&out, "output", "o", "", "HTML file to write (default: report.html beside the first results)")
	c.Flags().StringVar(&costsPath, "costs", "", "cost model YAML (hardware and licences per configuration)")
	c.Flags().StringVar(&title, "title", "", "the report's title (default: from the study)")
	return c
}

// makeReport reads the results, builds the report and writes it to out (report.File).
func makeReport(c *cobra.Command, results []string, opts report.Options, out outfile.Target) error {
	srcs, err := report.Load(results)
	if err != nil {
		return err
	}
	r, err := report.Build(srcs, opts)
	if err != nil {
		return err
	}
	if err := report.WriteFile(out, r); err != nil {
		return err
	}
	fmt.Fprintf(c.OutOrStdout(), "report written to %s (sections: %s)\n", out.Path, strings.Join(r.SectionIDs(), ", "))
	return nil
}

func compareCmd() *cobra.Command {
	var markdown, wide bool
	c := &cobra.Command{
		Use:   "compare A B",
		Short: "Compare two runs or studies step by step in the terminal, B as % of A",
		Long: `Print the headline comparison of two results (study results stores, run JSON
files or fio JSON files): each configuration's peak, then every step both have with
B as a percentage of A. Text fits 100 columns: a wider table is printed in parts,
each led by the columns that name its rows; --wide prints each table whole.
--markdown prints tables to paste into a document.`,
		Args: cobra.ExactArgs(2),
		RunE: func(c *cobra.Command, args []string) error {
			srcs, err := report.Load(args)
			if err != nil {
				return err
			}
			tables, err := report.Compare(srcs[0], srcs[1])
			if err != nil {
				return err
			}
			width := report.TextWidth
			if wide {
				width = 0
			}
			return report.WriteComparison(c.OutOrStdout(), srcs[0], srcs[1], tables, markdown, width)
		},
	}
	c.Flags().BoolVar(&markdown, "markdown", false, "print Markdown tables")
	c.Flags().BoolVar(&wide, "wide", false, "print each text table whole, however wide")
	return c
}
