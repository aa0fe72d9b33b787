package main

import (
	"context"
	"errors"
	"fmt"
	"text/tabwriter"

	"github.com/spf13/cobra"

	"github.com/storbench/storbench/internal/fio"
	"github.com/storbench/storbench/internal/input"
)

func fioCmd() *cobra.Command {
	var paths, profiles []string
	var all, list bool
	var jsonPath string
	opts := fio.Options{}
	c := &cobra.Command{
		Use:   "fio",
		Short: "Characterise storage with the papers' fio profiles (HCIBench, DiskSpd SQL data, data/log matrices, steady state, sequential)",
		Long: `Run fio profiles on a test file in a directory of the storage under test (removed
afterwards, also on Ctrl-C), or on a raw device with --device and
--i-know-this-destroys-data. With two --path targets the results are compared side by
side, B as % of A. fio itself must be installed (apt-get install fio).`,
		Args: cobra.NoArgs,
		RunE: func(c *cobra.Command, _ []string) error {
			out := c.OutOrStdout()
			if list {
				tw := tabwriter.NewWriter(out, 0, 0, 2, ' ', 0)
				for _, p := range fio.Profiles {
					fmt.Fprintf(tw, "%s\t%s\t(%s)\n", p.Name, p.Description, p.Source)
				}
				return tw.Flush()
			}
			chosen, err := fio.Lookup(profiles, all)
			if err != nil {
				return err
			}
			if err := jsonTarget(jsonPath).Check(); err != nil {
				return err
			}
			targets := paths
			switch {
			case opts.Device != "" && len(paths) > 0:
				return fmt.Errorf("%w: give --path or --device, not both", input.ErrInvalid)
			case opts.Device != "":
				targets = []string{""}
			case len(paths) == 0 || len(paths) > 2:
				return fmt.Errorf("%w: give --path DIR on the storage to test (two --path to compare them)", input.ErrInvalid)
			}
			opts.Progress = func(profile string, done, of int, p *fio.Point) {
				fmt.Fprintf(out, "%s %d/%d %s: %.0f IOPS, %.1f MB/s\n", profile, done, of, p.Name, p.IOPS, p.MBps)
			}
			var runs []*fio.Runs
			var failed error
			for _, dir := range targets {
				opts.Dir = dir
				results, err := fio.Run(c.Context(), chosen, opts)
				if len(results) > 0 {
					runs = append(runs, &fio.Runs{StorbenchVersion: version, Results: results})
					if werr := fio.WriteTable(out, results); werr != nil {
						return werr
					}
				}
				if err != nil {
					failed = err
					break
				}
			}
			if jsonPath != "" && len(runs) > 0 {
				all := &fio.Runs{StorbenchVersion: version}
				for _, r := range runs {
					all.Results = append(all.Results, r.Results...)
				}
				if err := writeJSON(c, jsonTarget(jsonPath), all); err != nil {
					return errors.Join(failed, err)
				}
			}
			if errors.Is(failed, context.Canceled) {
				return fmt.Errorf("%w; %s", failed, keptOnInterrupt(runs, jsonPath))
			}
			if failed != nil {
				return failed
			}
			if len(runs) == 2 {
				fmt.Fprintln(out)
				return fio.Compare(out, targets[0], runs[0], targets[1], runs[1])
			}
			return nil
		},
	}
	c.Flags().StringArrayVar(&paths, "path", nil, "directory on the storage to test (repeat once to compare two targets)")
	c.Flags().StringArrayVar(&profiles, "profile", nil, "profile to run (repeatable; see --list)")
	c.Flags().BoolVar(&all, "all", false, "run every profile")
	c.Flags().BoolVar(&list, "list", false, "list the profiles and where they come from")
	opts.AddFlags(c.Flags())
	c.Flags().StringVar(&jsonPath, "json", "", "write the results (with each point's exact job text) as JSON to this file")
	c.AddCommand(fioCompareCmd())
	return c
}

// keptOnInterrupt says what an interrupted fio leaves: the points finished before,
// in the tables printed and in --json.
func keptOnInterrupt(runs []*fio.Runs, jsonPath string) string {
	n := 0
	for _, r := range runs {
		for _, res := range r.Results {
			n += len(res.Points)
		}
	}
	switch {
	case n == 0:
		return "no point had finished: nothing was written"
	case jsonPath == "":
		return fmt.Sprintf("the %d finished points are in the tables above, in no file (--json F keeps them)", n)
	}
	return fmt.Sprintf("the %d finished points are in the tables above and in %s", n, jsonPath)
}

func fioCompareCmd() *cobra.Command {
	return &cobra.Command{
		Use:   "compare A.json B.json",
		Short: "Print two fio results side by side, B as % of A",
		Args:  cobra.ExactArgs(2),
		RunE: func(c *cobra.Command, args []string) error {
			a, err := fio.ReadRuns(args[0])
			if err != nil {
				return err
			}
			b, err := fio.ReadRuns(args[1])
			if err != nil {
				return err
			}
			return fio.Compare(c.OutOrStdout(), args[0], a, args[1], b)
		},
	}
}
