package report

import (
	"fmt"
	"strings"

	"github.com/storbench/storbench/internal/cost"
	"github.com/storbench/storbench/internal/input"
)

// costSection is the papers' cost table: each configuration's hardware and
// licences, its savings against the baseline, and its cost per 1,000 NOPM at the
// peak of the measured series it names.
// A study's own costs block may name series not measured yet (the study is
// running): those are notes, and their configurations have no peak; --costs naming
// a series the results lack is an error.
func costSection(m *cost.Model, owner *Source, series []*Series) (*Section, []string, error) {
	if m == nil {
		return nil, nil, nil
	}
	peaks := map[string]float64{}
	var notes []string
	for _, c := range m.Configurations {
		if c.Series == "" {
			continue
		}
		s, err := costSeries(c.Name, c.Series, owner, series)
		if err != nil && owner != nil {
			notes = append(notes, fmt.Sprintf("costs: configuration %q has no peak NOPM yet: series %q is not in the results", c.Name, c.Series))
			continue
		}
		if err != nil {
			return nil, nil, err
		}
		if p := s.peak(); p != nil && p.NOPMDB.N > 0 {
			peaks[c.Series] = p.NOPMDB.Mean
		}
	}
	ct := m.Evaluate(peaks)
	t := &Table{Title: "Cost per configuration (" + ct.Currency + ")", Columns: append([]string{"component"}, ct.Columns...),
		Notes: []string{"licence cost = packs of cores × pack price, cores = max(licensed cores, the licence's minimum) per server or per instance; savings are against " + ct.Baseline + "; peak NOPM is the database counter at the series' best user step"}}
	section := ""
	for i, r := range ct.Rows {
		// A heading row before each part, unless the part is one row of that name.
		lone := r.Label == r.Section && (i+1 == len(ct.Rows) || ct.Rows[i+1].Section != r.Section)
		if r.Section != section && !lone {
			t.Rows = append(t.Rows, append([]string{r.Section}, make([]string, len(ct.Columns))...))
		}
		section = r.Section
		t.Rows = append(t.Rows, append([]string{r.Label}, r.Cells...))
	}
	return &Section{ID: "costs", Title: "Costs",
		Intro:  []string{"What each configuration costs and what its measured peak costs per 1,000 NOPM, from the prices given in the study's costs block or --costs."},
		Blocks: []Block{{Table: t}}}, notes, nil
}

// costSeries finds the series a cost configuration names: by its name in the
// report, or by its ID within the study whose costs block it is (owner).
func costSeries(config, name string, owner *Source, series []*Series) (*Series, error) {
	var found []*Series
	for _, s := range series {
		if s.Name == name {
			return s, nil
		}
		if s.ID == name && (owner == nil || s.Source == owner) {
			found = append(found, s)
		}
	}
	names := make([]string, len(series))
	for i, s := range series {
		names[i] = s.Name
	}
	switch len(found) {
	case 1:
		return found[0], nil
	case 0:
		return nil, fmt.Errorf("%w: costs: configuration %q names series %q, which the results do not have: give one of %s, or leave series out",
			input.ErrInvalid, config, name, quoteAll(names))
	}
	return nil, fmt.Errorf("%w: costs: configuration %q names series %q, which more than one input has: give one of %s",
		input.ErrInvalid, config, name, quoteAll(names))
}

func quoteAll(names []string) string {
	if len(names) == 0 {
		return "(no series: the results have no user sweep)"
	}
	q := make([]string, len(names))
	for i, n := range names {
		q[i] = fmt.Sprintf("%q", n)
	}
	return strings.Join(q, ", ")
}
