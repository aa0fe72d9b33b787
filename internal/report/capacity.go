package report

import (
	"cmp"
	"fmt"
	"math"
	"slices"
	"strconv"

	"github.com/storbench/storbench/internal/study"
)

// capacitySearch is one target's capacity search, as a report names it.
type capacitySearch struct {
	// Name is the step's ID (target/experiment), with its source when the report has
	// several.
	Name string
	Run  *study.CapacityRun
}

// capacityExperiment is the searches of one capacity experiment against one SLO
// (the same experiment of two stores is compared when their SLOs agree); the first
// is the reference of its findings.
type capacityExperiment struct {
	Name     string
	SLO      study.SLO
	Searches []capacitySearch
}

func capacityExperiments(srcs []*Source) []*capacityExperiment {
	var out []*capacityExperiment
	for _, src := range srcs {
		for i := range src.Steps {
			r := &src.Steps[i]
			if r.Capacity == nil || len(r.Capacity.Probes) == 0 {
				continue
			}
			// The outcome as the stored probes give it: a step file is not trusted to
			// point at probes it has.
			c := *r.Capacity
			c.Conclude()
			k := slices.IndexFunc(out, func(e *capacityExperiment) bool { return e.Name == r.Step.Experiment && e.SLO == c.SLO })
			if k < 0 {
				out = append(out, &capacityExperiment{Name: r.Step.Experiment, SLO: c.SLO})
				k = len(out) - 1
			}
			out[k].Searches = append(out[k].Searches, capacitySearch{Name: qualified(srcs, src, r.Step.ID), Run: &c})
		}
	}
	return out
}

// capacitySections are the capacity experiments, one section each: per target the
// latency at the SLO's percentile against the throughput achieved, probe by probe
// (the hockey stick), the SLO a line across it and the capacity marked; then every
// probe in a table.
func capacitySections(srcs []*Source) []*Section {
	var out []*Section
	for _, e := range capacityExperiments(srcs) {
		sec := &Section{ID: "capacity-" + sectionID(e.Name), Title: "Capacity: " + e.Name,
			Intro: []string{"Each probe offered a fixed rate of transactions (open-loop: they arrive whether or not the database keeps up), from the base image, and passed when it completed its share of the arrivals within " + e.SLO.String() + ". " +
				"The search doubled the rate while probes passed, then bisected between the highest pass and the lowest failure (docs/capacity.md). The capacity is the highest passing probe's achieved throughput. " +
				"Response times are client-measured from when each transaction was due; throughput is the client's count of transactions completed in the window."}}
		for _, s := range e.Searches {
			sec.Blocks = append(sec.Blocks, Block{Chart: ptr(capacityChart(s))})
		}
		sec.Blocks = append(sec.Blocks, Block{Table: probeTable(e)})
		out = append(out, sec)
	}
	return out
}

// capacityChart is one search's hockey stick: the SLO's latency over the achieved
// throughput of its probes in the order of their rates, the objective as a
// horizontal line, the capacity as a point of its own.
func capacityChart(s capacitySearch) Chart {
	c := s.Run
	probes := slices.Clone(c.Probes)
	slices.SortStableFunc(probes, func(a, b study.CapacityProbe) int { return cmp.Compare(a.RateTPM, b.RateTPM) })
	curve := xySeries{Name: "probes: " + c.SLO.Latency()}
	var right float64
	for _, p := range probes {
		curve.X = append(curve.X, p.AchievedTPM)
		curve.Y = append(curve.Y, probeLatency(p))
		right = max(right, p.AchievedTPM)
	}
	slo := xySeries{Name: "objective " + strconv.FormatFloat(c.SLO.Ms, 'f', -1, 64) + " ms", X: []float64{0, right}, Y: []float64{c.SLO.Ms, c.SLO.Ms}}
	series := []xySeries{curve, slo}
	source := "x: transactions completed a minute in each probe's window (client count); y: " + c.SLO.Latency() + " response time from when each was due (client, HdrHistogram)"
	if c.Best > 0 {
		best := c.Probes[c.Best-1]
		series = append(series, xySeries{Name: "capacity " + num(c.CapacityTPM, 0) + " TPM", X: []float64{best.AchievedTPM}, Y: []float64{probeLatency(best)}})
	} else {
		source += "; no probe passed"
	}
	return lineChart("Capacity of "+s.Name+": "+c.SLO.Latency()+" against throughput", source, "TPM achieved", "ms", "", series, nil)
}

// probeLatency is a probe's latency at the SLO's percentile (NaN: none completed).
func probeLatency(p study.CapacityProbe) float64 {
	if p.LatencyMs == nil {
		return math.NaN()
	}
	return *p.LatencyMs
}

// probeTable lists every probe of an experiment's searches, in the order they ran.
func probeTable(e *capacityExperiment) *Table {
	t := &Table{Title: "Probes", Keys: 2,
		Columns: []string{"configuration", "probe", "offered TPM", "arrived TPM", "achieved TPM (client)", "NOPM (client)",
			e.SLO.Latency() + " ms (client)", "data disk p99 ms (bpftrace)", "result", "why", "bottleneck"}}
	for _, s := range e.Searches {
		c := s.Run
		for i, p := range c.Probes {
			result := "fail"
			if p.Pass {
				result = "pass"
			}
			switch i + 1 {
			case c.Best:
				result += ", capacity"
			case c.Fail:
				result += ", lowest failure"
			}
			disk, verdict := "-", "-"
			if p.DiskP99Ms != nil {
				disk = num(*p.DiskP99Ms, 3)
			}
			if p.Run != nil && p.Run.Bottleneck != nil {
				verdict = p.Run.Bottleneck.String()
			}
			t.Rows = append(t.Rows, []string{s.Name, strconv.Itoa(i + 1), num(p.RateTPM, 0), num(p.ArrivedTPM, 0), num(p.AchievedTPM, 0), num(p.NOPM, 0),
				num(probeLatency(p), 2), disk, result, p.Why, verdict})
		}
		t.Notes = append(t.Notes, s.Name+": "+c.Summary()+".")
	}
	t.Notes = append(t.Notes, fmt.Sprintf("a probe passes with at least %s of its arrivals completed in its window and %s; arrived: the arrivals drawn in the window (Poisson arrivals vary around the rate offered).",
		percentOf(e.Searches[0].Run.MinAchieved, 1), e.SLO))
	return t
}

// findings of a capacity experiment: each target's capacity in NOPM against the
// reference's (the first), with what limited each at its capacity (the verdict of
// its highest passing probe); no winner where a search did not bracket its capacity
// (a probe that passed and one that failed), where the two brackets overlap, or
// where neither side was limited by its storage.
func (e *capacityExperiment) findings() []string {
	ref := e.Searches[0]
	if len(e.Searches) == 1 {
		return []string{ref.Name + ": " + ref.Run.Summary() + capacityVerdict(ref) + "."}
	}
	var out []string
	for _, s := range e.Searches[1:] {
		out = append(out, compareCapacities(s, ref, e.SLO))
	}
	return out
}

// compareCapacities is "B carries 2.4x the NOPM of A within SLO (41,200 vs 17,100)",
// or why no winner is named.
func compareCapacities(b, a capacitySearch, slo study.SLO) string {
	pointB, pointA := capacityPoint(b), capacityPoint(a)
	var stacks string
	b.Name, a.Name, stacks = versioned(b.Name, a.Name, pointRelease(pointB), pointRelease(pointA))
	vs := fmt.Sprintf("%s vs %s within %s", b.Name, a.Name, slo)
	for _, s := range []capacitySearch{b, a} {
		if why := unbracketed(s.Run); why != "" {
			return fmt.Sprintf("%s: no winner named: %s's search ended without a bracket: %s.", vs, s.Name, why)
		}
	}
	cb, ca := b.Run, a.Run
	pb, fb, pa, fa := cb.Probes[cb.Best-1].RateTPM, cb.Probes[cb.Fail-1].RateTPM, ca.Probes[ca.Best-1].RateTPM, ca.Probes[ca.Fail-1].RateTPM
	nopm := fmt.Sprintf("%s vs %s NOPM", num(cb.CapacityNOPM, 0), num(ca.CapacityNOPM, 0))
	if pb < fa && pa < fb {
		return fmt.Sprintf("%s: %s; the searches' brackets overlap (%s passed %s TPM and failed %s, %s passed %s and failed %s): no winner named.",
			vs, nopm, b.Name, num(pb, 0), num(fb, 0), a.Name, num(pa, 0), num(fa, 0))
	}
	limits, storageBound := limitedBy(b.Name, a.Name, pointB, pointA)
	if !storageBound {
		return fmt.Sprintf("%s: %s%s: the difference does not measure the storage, no winner named.", vs, nopm, limits)
	}
	return fmt.Sprintf("%s carries %s the NOPM of %s within %s (%s vs %s, client counts)%s%s.", b.Name, ratio(cb.CapacityNOPM, ca.CapacityNOPM), a.Name, slo,
		num(cb.CapacityNOPM, 0), num(ca.CapacityNOPM, 0), limits, stacks)
}

// unbracketed says why a search found no bracket of its capacity ("": it did).
func unbracketed(c *study.CapacityRun) string {
	switch {
	case c.Best == 0:
		return fmt.Sprintf("no probe passed, down to %s TPM offered, so its capacity is lower (a lower start_rate or more max_probes finds it)", num(c.Probes[c.Fail-1].RateTPM, 0))
	case c.Fail == 0:
		return fmt.Sprintf("every probe passed, up to %s TPM offered, so its capacity is higher (a higher start_rate or more max_probes finds it)", num(c.Probes[c.Best-1].RateTPM, 0))
	}
	return ""
}

// capacityPoint is a search's highest passing probe as a point of one run, for the
// verdicts the findings quote (limitedBy).
func capacityPoint(s capacitySearch) *Point {
	p := &Point{}
	if c := s.Run; c.Best > 0 && c.Probes[c.Best-1].Run != nil {
		p.Steps = []*study.StepResult{{Run: c.Probes[c.Best-1].Run}}
	}
	return p
}

// capacityVerdict is "; limited by storage (…) — …" at a search's capacity, when its
// probe has a verdict.
func capacityVerdict(s capacitySearch) string {
	if v := pointVerdict(capacityPoint(s)); v != "" {
		return "; at its capacity limited by " + v
	}
	return ""
}
