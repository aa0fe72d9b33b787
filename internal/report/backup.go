package report

import (
	"fmt"
	"math"
	"slices"
	"strconv"

	"github.com/storbench/storbench/internal/study"
)

// transferRun is one backup or restore of a backup-restore cycle.
type transferRun struct {
	Config, What string // configuration; "backup" or "restore"
	Cycle        int
	Transfer     *study.Transfer
}

// backupSection is the papers' backup and restore test: seconds per cycle as bars,
// throughput second by second, and the disks during each transfer.
func backupSection(srcs []*Source) *Section {
	var runs []transferRun
	for _, src := range srcs {
		for i := range src.Steps {
			r := &src.Steps[i]
			if r.Backup == nil || r.Restore == nil {
				continue
			}
			cfg := qualified(srcs, src, configName(src, r.Step))
			if r.Step.Cycle < 1 {
				continue // not a cycle of a backup-restore step: nothing to place it by
			}
			runs = append(runs, transferRun{cfg, "backup", r.Step.Cycle, r.Backup}, transferRun{cfg, "restore", r.Step.Cycle, r.Restore})
		}
	}
	if len(runs) == 0 {
		return nil
	}
	sec := &Section{ID: "backup-restore", Title: "Backup and restore",
		Intro: []string{backupIntro}}

	table := &Table{Title: "Seconds per cycle", Columns: []string{"configuration", "cycle", "backup s", "backup MB/s", "restore s", "restore MB/s"},
		Notes: []string{"mean MB/s: all the cycles' bytes over all their seconds; in brackets the slowest and fastest cycle"}}
	var configs []string
	cycles := 0
	for _, r := range runs {
		if !slices.Contains(configs, r.Config) {
			configs = append(configs, r.Config)
		}
		cycles = max(cycles, r.Cycle)
	}
	cats := make([]string, cycles)
	for i := range cats {
		cats[i] = strconv.Itoa(i + 1)
	}
	var bars []barSeries
	// One transfer at a time: a line per cycle, a dozen of them, could not be read.
	picker := &Picker{ID: "transfers", Label: "transfer"}
	for _, c := range configs {
		secs := map[string][]float64{}
		for _, what := range []string{"backup", "restore"} {
			vs := make([]float64, cycles)
			for i := range vs {
				vs[i] = math.NaN()
			}
			for _, r := range runs {
				if r.Config != c || r.What != what {
					continue
				}
				vs[r.Cycle-1] = r.Transfer.Seconds
				secs[what] = append(secs[what], r.Transfer.Seconds)
				x, y := transferRate(r.Transfer.Progress)
				name := what + " MB/s"
				if len(x) == 0 {
					// Done within its first second: its mean rate, at its end.
					x, y, name = []float64{r.Transfer.Seconds}, []float64{r.Transfer.MBps}, what+" MB/s (whole transfer, under a second)"
				}
				rate := lineChart("Transfer throughput second by second", "growth of the destination per second (MB = 10^6 bytes)", "s", "MB/s", "",
					[]xySeries{{Name: name, X: x, Y: y}}, nil)
				sys, lat := diskCharts(r.Transfer.System, nil)
				picker.Choices = append(picker.Choices, fmt.Sprintf("%s %s cycle %d", c, what, r.Cycle))
				picker.Charts = append(picker.Charts, []Chart{rate, sys, lat})
			}
			bars = append(bars, barSeries{Name: c + " " + what, Values: vs})
		}
		// The mean rate is all bytes over all seconds, so it agrees with the mean
		// seconds beside it; the range is the cycles' own rates.
		rate := map[string]string{}
		for _, what := range []string{"backup", "restore"} {
			var bytes int64
			var secs float64
			var rates []float64
			for _, r := range runs {
				if r.Config == c && r.What == what {
					bytes, secs, rates = bytes+r.Transfer.Bytes, secs+r.Transfer.Seconds, append(rates, r.Transfer.MBps)
				}
			}
			if rs := statOf(rates); secs > 0 {
				rate[what] = fmt.Sprintf("%s (%s–%s)", num(float64(bytes)/1e6/secs, 1), num(rs.Min, 1), num(rs.Max, 1))
			}
		}
		for _, r := range runs {
			if r.Config == c && r.What == "backup" {
				row := []string{c, strconv.Itoa(r.Cycle), num(r.Transfer.Seconds, 1), num(r.Transfer.MBps, 1), "-", "-"}
				for _, q := range runs {
					if q.Config == c && q.What == "restore" && q.Cycle == r.Cycle {
						row[4], row[5] = num(q.Transfer.Seconds, 1), num(q.Transfer.MBps, 1)
					}
				}
				table.Rows = append(table.Rows, row)
			}
		}
		if len(secs["backup"]) > 1 {
			table.Rows = append(table.Rows, []string{c, "mean (range)", stat(statOf(secs["backup"]), 1), dash(rate["backup"]),
				stat(statOf(secs["restore"]), 1), dash(rate["restore"])})
		}
	}
	sec.Blocks = []Block{
		{Table: table},
		{Chart: ptr(barChart("Seconds per backup and restore", "storbench's timing of each transfer", "cycle", "s", cats, bars))},
		{Picker: picker},
	}
	return sec
}

// transferRate turns the bytes done at each second into MB/s per second.
func transferRate(progress []int64) (x, y []float64) {
	var prev int64
	for i, b := range progress {
		x, y = append(x, float64(i+1)), append(y, float64(b-prev)/1e6)
		prev = b
	}
	return x, y
}
