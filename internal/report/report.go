package report

import (
	"encoding/json"
	"fmt"
	"slices"
	"time"

	"github.com/storbench/storbench/internal/cost"
)

// Report is everything the HTML page shows, built from the sources by pure
// functions: sections appear only when the data they need is there.
type Report struct {
	Title     string
	Generated time.Time
	Version   string
	Sources   []*Source
	// Notes are shown at the top: what the report could not show, and why.
	Notes    []string
	Sections []Section
}

// Section is one part of the report, a chapter of the white paper.
type Section struct {
	ID, Title string
	// Intro paragraphs say what the section's figures are and where they come from.
	Intro  []string
	Blocks []Block
}

// Block is one table, chart, picker of per-run charts or preformatted text.
type Block struct {
	Table  *Table
	Chart  *Chart
	Picker *Picker
	Pre    string
}

// Picker shows one of many runs' second-by-second charts, chosen from a list: a
// study of a hundred runs gets one set of charts, not three hundred.
type Picker struct {
	ID      string
	Label   string
	Choices []string
	// Charts holds, per choice, the same number of charts (one per slot).
	Charts [][]Chart
}

// Options are the report's settings.
type Options struct {
	Title   string
	Version string
	// Costs is the cost model (--costs FILE); without it the first study's costs
	// block, if any, is used.
	Costs *cost.Model
	Now   func() time.Time
}

// Build computes the report from the sources.
func Build(srcs []*Source, o Options) (*Report, error) {
	now := time.Now
	if o.Now != nil {
		now = o.Now
	}
	r := &Report{Title: o.Title, Generated: now(), Version: o.Version, Sources: srcs}
	if r.Title == "" {
		r.Title = defaultTitle(srcs)
	}
	series := sweeps(srcs)
	// --costs names series as the report does; a study's own costs block names
	// them as its steps do.
	model, owner := o.Costs, (*Source)(nil)
	if model == nil {
		for _, s := range srcs {
			if s.Spec != nil && s.Spec.Costs != nil {
				model, owner = s.Spec.Costs, s
				break
			}
		}
	}
	costs, missing, err := costSection(model, owner, series)
	if err != nil {
		return nil, err
	}
	for _, s := range srcs {
		r.Notes = append(r.Notes, s.Notes...)
	}
	r.Notes = append(r.Notes, missing...)
	single := singleConfiguration(srcs, series)
	add := func(ss ...*Section) {
		for _, s := range ss {
			if s != nil && single {
				s.Blocks = slices.DeleteFunc(s.Blocks, func(b Block) bool { return b.Chart != nil && singleCategory(b.Chart) })
			}
			if s != nil && len(s.Blocks) > 0 {
				r.Sections = append(r.Sections, *s)
			}
		}
	}
	add(findingsSection(srcs, series))
	// One configuration's headline is one row, which the findings say in words.
	if !single {
		add(headlineSection(series))
	}
	add(sweepSections(series)...)
	add(openLoopSection(srcs))
	add(capacitySections(srcs)...)
	add(timelineSection(srcs))
	add(profilesSection(srcs))
	add(backupSection(srcs))
	add(withConsolidationRoles(consolidationSection(srcs), srcs))
	add(costs)
	add(auditSection(srcs))
	add(environmentSection(srcs))
	return r, nil
}

// singleConfiguration tells a report in which no experiment compares
// configurations (quick's): one target's user sweep, its backups, its fio profile.
func singleConfiguration(srcs []*Source, series []*Series) bool {
	for _, g := range sweepGroups(series) {
		if len(g.Series) > 1 {
			return false
		}
	}
	for _, e := range transferExperiments(srcs) {
		if len(e.Configs) > 1 {
			return false
		}
	}
	runs := fioRuns(srcs)
	for _, prof := range profileNames(runs) {
		if len(configsOf(runsOf(runs, prof))) > 1 {
			return false
		}
	}
	// Consolidated instances are compared with each other and with the noise.
	return len(consolidationPairs(srcs)) == 0
}

// singleCategory tells a bar chart of one category (one cycle, one fio point):
// with one configuration it is a bar or two that the table beside it gives as
// numbers, so a single-configuration report leaves it out.
func singleCategory(c *Chart) bool {
	var o struct {
		XAxis []struct {
			Type string `json:"type"`
			Data []any  `json:"data"`
		} `json:"xAxis"`
		Series []struct {
			Type string `json:"type"`
		} `json:"series"`
	}
	if json.Unmarshal([]byte(c.Option), &o) != nil || len(o.XAxis) == 0 || len(o.Series) == 0 {
		return false
	}
	for _, s := range o.Series {
		if s.Type != "bar" {
			return false
		}
	}
	return o.XAxis[0].Type == "category" && len(o.XAxis[0].Data) <= 1
}

func defaultTitle(srcs []*Source) string {
	if len(srcs) == 1 && srcs[0].Study != "" {
		return "storbench study " + srcs[0].Study
	}
	if len(srcs) == 1 {
		return "storbench result " + srcs[0].Label
	}
	return fmt.Sprintf("storbench: %d results compared", len(srcs))
}

// SectionIDs lists the report's sections in order.
func (r *Report) SectionIDs() []string {
	ids := make([]string, len(r.Sections))
	for i, s := range r.Sections {
		ids[i] = s.ID
	}
	return ids
}
