package report

import (
	"math"
	"slices"
	"strings"

	"github.com/storbench/storbench/internal/driver"
	"github.com/storbench/storbench/internal/metrics"
)

// timelineSection is the second-by-second view of any run: throughput as the client
// counted it, and what the disks did on the same timeline (T = 0 is the start of the
// timed window; ramp-up is before it).
func timelineSection(srcs []*Source) *Section {
	p := &Picker{ID: "runs", Label: "run"}
	// Writes by process role: a fourth chart for every run when any has them (each
	// choice of a picker has the same charts), saying so where a run has none.
	var runs []*driver.Result
	roles, waits := false, false
	for _, src := range srcs {
		for i := range src.Steps {
			r := &src.Steps[i]
			if r.Run == nil {
				continue
			}
			p.Choices = append(p.Choices, qualified(srcs, src, r.Step.ID))
			runs = append(runs, r.Run)
			roles = roles || hasProcessIO(r.Run.System)
			waits = waits || hasWaits(r.Run.System)
		}
	}
	for _, run := range runs {
		p.Charts = append(p.Charts, runCharts(run, roles, waits))
	}
	if len(p.Choices) == 0 {
		return nil
	}
	return &Section{ID: "timeline", Title: "Second by second",
		Intro:  []string{timelineIntro},
		Blocks: []Block{{Picker: p}}}
}

// runCharts are one run's charts: throughput, disk rates, latency (and writes by
// process role when roles, where the time went when waits). They cover
// the ramp-up (shaded) and the timed window, and stop at its end: what follows is
// the users stopping, a drop to zero that says nothing of the storage.
func runCharts(run *driver.Result, roles, waits bool) []Chart {
	var t, tpm, nopm, errs, offered, skipped []float64
	anyErrors, anySkipped := false, false
	end := windowSeconds(run)
	if end <= 0 {
		end = math.Inf(1) // a result that does not say: all of it
	}
	for _, s := range run.Timeline {
		if float64(s.T) > end {
			continue
		}
		t = append(t, float64(s.T))
		tpm, nopm, errs = append(tpm, s.TPM), append(nopm, s.NOPM), append(errs, float64(s.Errors))
		offered, skipped = append(offered, s.OfferedTPM), append(skipped, float64(s.Skipped))
		anyErrors = anyErrors || s.Errors > 0
		anySkipped = anySkipped || s.Skipped > 0
	}
	// A run read from another tool's report has that tool's timeline, named by its
	// source, without what it did not measure.
	subtitle, tpmName := "storbench's client count per second × 60", "TPM (client)"
	if src := run.Sources["timeline"]; src != "" {
		subtitle, tpmName = src, "TPM"
	}
	series := []xySeries{{Name: tpmName, X: t, Y: tpm}}
	if run.Measured("timeline_nopm") {
		series = append(series, xySeries{Name: "NOPM (client)", X: t, Y: nopm})
	}
	if run.Rate != nil {
		// Open loop: what arrived beside what was done; the gap is the backlog
		// growing or the arrivals skipped.
		series = append(series, xySeries{Name: "TPM offered (arrivals)", X: t, Y: offered})
	}
	var y2s []string
	if anyErrors {
		series = append(series, xySeries{Name: "errors per second", X: t, Y: errs, YAxis: 1})
		y2s = append(y2s, "errors/s")
	}
	if anySkipped {
		series = append(series, xySeries{Name: "arrivals skipped per second (latency limit)", X: t, Y: skipped, YAxis: 1})
		y2s = append(y2s, "skipped/s")
	}
	y2 := strings.Join(y2s, ", ")
	var ramp []window
	if run.Config.RampSeconds > 0 {
		ramp = []window{{Name: "ramp-up", Start: -run.Config.RampSeconds, End: 0}}
	}
	spans := ramp
	if v := run.Steadiness; v != nil && run.UntilSteadyEnded != "" {
		spans = append(slices.Clone(ramp), window{Name: "judged", Start: end - float64(v.Seconds), End: end})
	}
	throughput := lineChart("Throughput second by second", subtitle+"; shaded: ramp-up"+steadinessSubtitle(run), "s", "per minute", y2, series, spans)
	disks, latency := diskCharts(within(run.System, end), ramp)
	out := []Chart{throughput, disks, latency}
	if roles {
		out = append(out, roleChart(within(run.System, end)))
	}
	if waits {
		out = append(out, waitChart(run, within(run.System, end)))
	}
	return out
}

// within is the system report with the samples up to end seconds only.
func within(sys *metrics.Report, end float64) *metrics.Report {
	if sys == nil {
		return nil
	}
	cut := *sys
	cut.Samples = slices.DeleteFunc(slices.Clone(sys.Samples), func(s metrics.Sample) bool { return s.T > end })
	return &cut
}

// diskCharts draw the sampled disks' rates and latencies over time; windows shade
// spans such as backups.
func diskCharts(sys *metrics.Report, windows []window) (Chart, Chart) {
	if sys == nil || len(sys.Samples) == 0 {
		empty := func(title string) Chart {
			return lineChart(title, "no system metrics were sampled for this run", "s", "", "", nil, nil)
		}
		return empty("Disk IOPS and MB/s"), empty("I/O latency")
	}
	var rates, lat []xySeries
	for _, dev := range sampledDevices(sys.Samples) {
		x, get := diskSeries(sys.Samples, dev.name)
		label := dev.name
		if dev.roles != "" {
			label += " (" + dev.roles + ")"
		}
		rates = append(rates,
			xySeries{Name: label + " read IOPS", X: x, Y: get(func(d metrics.Disk) float64 { return d.ReadIOPS })},
			xySeries{Name: label + " write IOPS", X: x, Y: get(func(d metrics.Disk) float64 { return d.WriteIOPS })},
			xySeries{Name: label + " MB/s", X: x, Y: get(func(d metrics.Disk) float64 { return d.ReadMBps + d.WriteMBps }), YAxis: 1})
		lat = append(lat,
			xySeries{Name: label + " read ms (avg per I/O)", X: x, Y: get(func(d metrics.Disk) float64 { return awaitOrGap(d.ReadAwaitMs, d.ReadIOPS) })},
			xySeries{Name: label + " write ms (avg per I/O)", X: x, Y: get(func(d metrics.Disk) float64 { return awaitOrGap(d.WriteAwaitMs, d.WriteIOPS) })})
		if lx, ly := latencySeries(sys.Samples, dev.name); len(lx) > 0 {
			lat = append(lat, xySeries{Name: label + " p99 ms (per I/O, bpftrace)", X: lx, Y: ly})
		}
	}
	return lineChart("Disk IOPS and MB/s", "/proc/diskstats per sampling interval", "s", "IOPS", "MB/s", rates, windows),
		lineChart("I/O latency", "average per I/O per interval (/proc/diskstats); p99 per I/O where traced (bpftrace)", "s", "ms", "", lat, windows)
}

// awaitOrGap leaves a gap where a second had no I/O of that kind, rather than a
// misleading zero latency.
func awaitOrGap(await, iops float64) float64 {
	if iops == 0 {
		return math.NaN()
	}
	return await
}

type sampledDevice struct{ name, roles string }

// sampledDevices lists the disks the samples cover, in their first order.
func sampledDevices(samples []metrics.Sample) []sampledDevice {
	var out []sampledDevice
	var seen []string
	for _, s := range samples {
		for _, d := range s.Disks {
			if !slices.Contains(seen, d.Device) {
				seen = append(seen, d.Device)
				out = append(out, sampledDevice{d.Device, strings.Join(d.Roles, "+")})
			}
		}
	}
	return out
}

// diskSeries returns the sample times and a getter of one figure of one device per
// sample (NaN where the device is missing from a sample).
func diskSeries(samples []metrics.Sample, device string) ([]float64, func(func(metrics.Disk) float64) []float64) {
	x := make([]float64, len(samples))
	for i, s := range samples {
		x[i] = s.T
	}
	return x, func(f func(metrics.Disk) float64) []float64 {
		y := make([]float64, len(samples))
		for i, s := range samples {
			y[i] = math.NaN()
			for _, d := range s.Disks {
				if d.Device == device {
					y[i] = f(d)
				}
			}
		}
		return y
	}
}

func latencySeries(samples []metrics.Sample, device string) (x, y []float64) {
	for _, s := range samples {
		for _, l := range s.Latency {
			if l.Device == device && l.IOs > 0 {
				x, y = append(x, s.T), append(y, l.P99Ms)
			}
		}
	}
	return x, y
}
