// Package cost is the cost model at the end of the papers: each configuration's
// hardware and per-core licences, its total, what it saves against a baseline and,
// with the measured peaks, what it costs per 1,000 NOPM. A model is a study file's
// costs: block or a file of its own (--costs FILE); the result is a table of labelled
// cells that the report renders as HTML, text or Markdown.
package cost

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"math"
	"regexp"
	"slices"
	"strings"
	"unicode/utf8"

	"github.com/storbench/storbench/internal/infile"
	"github.com/storbench/storbench/internal/input"
	"github.com/storbench/storbench/internal/yamlfile"
)

// Model is a cost model: the licences on offer and the configurations compared.
type Model struct {
	// Currency is an ISO 4217 code (default USD).
	Currency string `yaml:"currency"`
	// Baseline names the configuration savings are measured against (default: the
	// first).
	Baseline       string          `yaml:"baseline"`
	Licences       []Licence       `yaml:"licences"`
	Configurations []Configuration `yaml:"configurations"`
}

// Licence is a per-core licence sold in packs: a configuration pays
// ceil(max(cores, MinCores) / PackCores) × PackPrice, on its server's cores once
// (per server) or on each instance's cores for every instance (per instance).
type Licence struct {
	Name      string  `yaml:"name"`
	Per       string  `yaml:"per"` // PerServer or PerInstance
	PackCores int     `yaml:"pack_cores"`
	PackPrice float64 `yaml:"pack_price"`
	MinCores  int     `yaml:"min_cores"` // 0: no minimum
}

// Configuration is one column of the table: a server, its database instances and
// the licences they take.
type Configuration struct {
	Name string `yaml:"name"`
	// Series names the measured series whose peak NOPM judges this configuration
	// (matched by the report; optional).
	Series        string `yaml:"series"`
	ServerCores   int    `yaml:"server_cores"`
	Instances     int    `yaml:"instances"` // default 1
	InstanceCores int    `yaml:"instance_cores"`
	// Licences names licences of the model; left out, all of them; [] for none.
	Licences []string   `yaml:"licences"`
	Hardware []Hardware `yaml:"hardware"`
}

// Hardware is one priced item of a configuration's server.
type Hardware struct {
	Item  string  `yaml:"item"`
	Price float64 `yaml:"price"`
}

// Licence kinds, and the default currency.
const (
	PerServer       = "server"
	PerInstance     = "instance"
	DefaultCurrency = "USD"
)

// Bounds past which a value is a typo, and which keep the sums in cents exact.
const (
	maxPrice     = 1e9
	maxCores     = 10000
	maxInstances = 1000
)

// FieldError is a problem in a model, at Path (e.g. "configurations[1].licences[0]")
// so a file's loader can name the line; it wraps input.ErrInvalid.
type FieldError struct {
	Path string
	Msg  string // what is wrong (the fix)
}

func (e *FieldError) Error() string { return e.Path + ": " + e.Msg }

func (e *FieldError) Unwrap() error { return input.ErrInvalid }

var currencyRE = regexp.MustCompile(`^[A-Z]{3}$`)

// Validate checks the model and fills in its defaults (currency, baseline, instances,
// the licences a configuration takes). It returns the first problem, a *FieldError.
func (m *Model) Validate() error {
	if p := m.problems(); len(p) > 0 {
		return p[0]
	}
	return nil
}

// problems lists every problem, roughly in file order, and fills in the defaults.
func (m *Model) problems() []*FieldError {
	var errs []*FieldError
	errf := func(path, what, hint string, args ...any) {
		errs = append(errs, &FieldError{path, fmt.Sprintf(what+" ("+hint+")", args...)})
	}

	if m.Currency == "" {
		m.Currency = DefaultCurrency
	} else if !currencyRE.MatchString(m.Currency) {
		errf("currency", "currency %q is not a currency code", "use an ISO 4217 code such as USD, EUR or CNY", m.Currency)
	}

	configNames := m.configNames()
	if m.Baseline == "" && len(m.Configurations) > 0 {
		m.Baseline = m.Configurations[0].Name
	} else if m.Baseline != "" && !slices.Contains(configNames, m.Baseline) {
		errf("baseline", "baseline %q is not a configuration", "use one of the names under configurations: %s", m.Baseline, strings.Join(configNames, ", "))
	}

	licences := map[string]*Licence{}
	var licenceNames []string
	for i := range m.Licences {
		l := &m.Licences[i]
		p := func(key string) string { return fmt.Sprintf("licences[%d].%s", i, key) }
		switch {
		case strings.TrimSpace(l.Name) == "":
			errf(p("name"), "licence %d has no name", "add name: e.g. SQL Server 2017 Standard; configurations name it", i+1)
		case licences[l.Name] != nil:
			errf(p("name"), "licence name %q is used twice", "give each licence its own name", l.Name)
		default:
			licences[l.Name] = l
			licenceNames = append(licenceNames, l.Name)
		}
		if l.Per != PerServer && l.Per != PerInstance {
			what := fmt.Sprintf("per %q of licence %q is unknown", l.Per, l.Name)
			if l.Per == "" {
				what = fmt.Sprintf("licence %q has no per", l.Name)
			}
			errf(p("per"), "%s", "use per: server, counted once on server_cores, or per: instance, counted for each instance on instance_cores", what)
		}
		switch {
		case l.PackCores < 1:
			errf(p("pack_cores"), "pack_cores %d of licence %q is too few", "give the cores one pack licenses, 1 or more, e.g. 2 or 16", l.PackCores, l.Name)
		case l.PackCores > maxCores:
			errf(p("pack_cores"), "pack_cores %d of licence %q is too many", "give at most %d", l.PackCores, l.Name, maxCores)
		}
		if msg := priceProblem(l.PackPrice); msg != "" {
			errf(p("pack_price"), "pack_price %v of licence %q %s", "give the price of one pack, 0 or more, with at most 2 decimals, e.g. 3717", l.PackPrice, l.Name, msg)
		}
		if l.MinCores < 0 || l.MinCores > maxCores {
			errf(p("min_cores"), "min_cores %d of licence %q is out of range", "give 0 to %d, the least cores licensed per %s", l.MinCores, l.Name, maxCores, l.Per)
		}
	}

	if len(m.Configurations) == 0 {
		errf("configurations", "the cost model has no configurations", "add configurations: with at least one, each with a name, hardware and cores")
	}
	seen := map[string]bool{}
	for i := range m.Configurations {
		c := &m.Configurations[i]
		p := func(key string) string { return fmt.Sprintf("configurations[%d].%s", i, key) }
		switch {
		case strings.TrimSpace(c.Name) == "":
			errf(p("name"), "configuration %d has no name", "add name: e.g. ssd-4vcores; it heads the configuration's column", i+1)
		case seen[c.Name]:
			errf(p("name"), "configuration name %q is used twice", "give each configuration its own name", c.Name)
		default:
			seen[c.Name] = true
		}
		if c.Instances == 0 {
			c.Instances = 1
		}
		for _, f := range []struct {
			key string
			v   int
			max int
		}{{"server_cores", c.ServerCores, maxCores}, {"instances", c.Instances, maxInstances}, {"instance_cores", c.InstanceCores, maxCores}} {
			if f.v < 0 || f.v > f.max {
				errf(p(f.key), "%s %d of configuration %q is out of range", "give 1 to %d, or leave it out", f.key, f.v, c.Name, f.max)
			}
		}

		if c.Licences == nil {
			c.Licences = slices.Clone(licenceNames)
		}
		taken := map[string]bool{}
		for j, name := range c.Licences {
			lp := fmt.Sprintf("configurations[%d].licences[%d]", i, j)
			l := licences[name]
			switch {
			case l == nil && len(licenceNames) == 0:
				errf(lp, "configuration %q takes licence %q, and the model has no licences", "add it under licences: with per, pack_cores and pack_price", c.Name, name)
				continue
			case l == nil:
				errf(lp, "configuration %q takes licence %q, which the model does not have", "use one of the names under licences: %s", c.Name, name, strings.Join(licenceNames, ", "))
				continue
			case taken[name]:
				errf(lp, "configuration %q takes licence %q twice", "list each licence once; instances counts the instances", c.Name, name)
				continue
			}
			taken[name] = true
			if l.Per == PerServer && c.ServerCores == 0 {
				errf(p("server_cores"), "configuration %q has no server_cores, which licence %q counts", "add server_cores: the server's physical cores, e.g. 20", c.Name, name)
			}
			if l.Per == PerInstance && c.InstanceCores == 0 {
				errf(p("instance_cores"), "configuration %q has no instance_cores, which licence %q counts", "add instance_cores: the cores (vCores) of each instance, e.g. 4", c.Name, name)
			}
		}

		items := map[string]bool{}
		for j, h := range c.Hardware {
			hp := fmt.Sprintf("configurations[%d].hardware[%d]", i, j)
			switch {
			case strings.TrimSpace(h.Item) == "":
				errf(hp+".item", "hardware %d of configuration %q has no item", "add item: what it is, e.g. Dell PowerEdge R740XD", j+1, c.Name)
			case items[h.Item]:
				errf(hp+".item", "hardware item %q is listed twice in configuration %q", "list it once with the price of all of them, e.g. item: KTD-PE426/32G x24", h.Item, c.Name)
			default:
				items[h.Item] = true
			}
			if msg := priceProblem(h.Price); msg != "" {
				errf(hp+".price", "price %v of %q in configuration %q %s", "give the price, 0 or more, with at most 2 decimals, e.g. 7595.62", h.Price, h.Item, c.Name, msg)
			}
		}
	}
	return errs
}

func priceProblem(v float64) string {
	switch {
	case math.IsNaN(v) || math.IsInf(v, 0):
		return "is not a number"
	case v < 0:
		return "is negative"
	case v >= maxPrice:
		return "is too large"
	case math.Abs(v*100-math.Round(v*100)) > 1e-6:
		return "has fractions of a cent"
	}
	return ""
}

func (m *Model) configNames() []string {
	var out []string
	for _, c := range m.Configurations {
		out = append(out, c.Name)
	}
	return out
}

// Money is an amount in cents, so sums of prices come out exact.
type Money int64

func cents(v float64) Money { return Money(math.Round(v * 100)) }

// Format writes m with thousands separators and 2 decimals: "$34,075.30" for USD,
// "34,075.30 EUR" for the others.
func (m Money) Format(currency string) string {
	sign := ""
	v := int64(m)
	if v < 0 {
		sign, v = "-", -v
	}
	num := fmt.Sprintf("%s.%02d", thousands(v/100), v%100)
	if currency == "" || currency == DefaultCurrency {
		return sign + "$" + num
	}
	return sign + num + " " + currency
}

func thousands(v int64) string {
	s := fmt.Sprint(v)
	var b strings.Builder
	for i, r := range s {
		if i > 0 && (len(s)-i)%3 == 0 {
			b.WriteByte(',')
		}
		b.WriteRune(r)
	}
	return b.String()
}

// Costs are one configuration's figures. The float fields are NaN when they are not
// known: no peak, or a baseline that pays nothing for what they compare.
type Costs struct {
	Name     string
	Hardware Money            // the hardware subtotal
	Licences map[string]Money // by licence name, the licences the configuration takes
	Licence  Money            // the licence subtotal
	Total    Money
	// Savings is the baseline's total less this one's; SavingsPct is it in % of
	// the baseline's total.
	Savings    Money
	SavingsPct float64
	// LicenceSavingsPct is the saving on all licences, in % of the baseline's licence
	// subtotal; LicenceSavings the saving on each licence the baseline pays for, in %
	// of what it pays (the paper's "savings in SQL Server licensing costs").
	LicenceSavingsPct float64
	LicenceSavings    map[string]float64
	// PeakNOPM is the configuration's series' peak; PerKNOPM the total per 1,000 NOPM
	// at that peak (in the currency's units), and PerKNOPMRatio it over the
	// baseline's.
	PeakNOPM      float64
	PerKNOPM      float64
	PerKNOPMRatio float64
}

// Table is a model evaluated: the figures, and rows of labelled cells with one cell
// per configuration, as in the papers' cost tables.
type Table struct {
	Currency string
	Baseline string
	Columns  []string // the configurations' names
	Rows     []Row
	Costs    []Costs // the figures behind each column
}

// Row is one line of a Table.
type Row struct {
	// Section groups rows: SectionHardware, SectionLicences, SectionTotal,
	// SectionSavings or SectionPerformance.
	Section string
	Label   string
	Cells   []string // one per column; NoValue where there is none
}

// Table sections, and the cell of a value that does not exist or is not known.
const (
	SectionHardware    = "Hardware"
	SectionLicences    = "Licences"
	SectionTotal       = "Total"
	SectionSavings     = "Savings"
	SectionPerformance = "Performance"
	NoValue            = "-"
)

// Evaluate works out every configuration's costs; peakNOPM holds the measured peaks
// by series (a configuration without one gets no cost per NOPM, never a zero). The
// model must be valid (Validate, which Load and the study file's check call).
func (m *Model) Evaluate(peakNOPM map[string]float64) *Table {
	licences := map[string]*Licence{}
	for i := range m.Licences {
		licences[m.Licences[i].Name] = &m.Licences[i]
	}
	t := &Table{Currency: m.Currency, Baseline: m.Baseline}
	if t.Currency == "" {
		t.Currency = DefaultCurrency
	}
	base := 0
	if i := slices.Index(m.configNames(), m.Baseline); i >= 0 {
		base = i
	}
	if len(m.Configurations) > 0 {
		t.Baseline = m.Configurations[base].Name
	}

	for _, c := range m.Configurations {
		k := Costs{Name: c.Name, Licences: map[string]Money{}, LicenceSavings: map[string]float64{}, PeakNOPM: math.NaN()}
		for _, h := range c.Hardware {
			k.Hardware += cents(h.Price)
		}
		names := c.Licences
		if names == nil { // not validated: all of them
			for _, l := range m.Licences {
				names = append(names, l.Name)
			}
		}
		for _, name := range names {
			if l := licences[name]; l != nil {
				k.Licences[name] = l.cost(&c)
				k.Licence += k.Licences[name]
			}
		}
		k.Total = k.Hardware + k.Licence
		if p, ok := peakNOPM[c.Series]; ok && c.Series != "" && p > 0 && !math.IsInf(p, 0) {
			k.PeakNOPM = p
		}
		k.PerKNOPM = float64(k.Total) / 100 / (k.PeakNOPM / 1000) // NaN without a peak
		t.Columns = append(t.Columns, c.Name)
		t.Costs = append(t.Costs, k)
	}

	if len(t.Costs) > 0 {
		b := t.Costs[base]
		for i := range t.Costs {
			k := &t.Costs[i]
			k.Savings = b.Total - k.Total
			k.SavingsPct = pct(k.Savings, b.Total)
			k.LicenceSavingsPct = pct(b.Licence-k.Licence, b.Licence)
			for name, paid := range b.Licences {
				if paid > 0 {
					k.LicenceSavings[name] = pct(paid-k.Licences[name], paid)
				}
			}
			k.PerKNOPMRatio = k.PerKNOPM / b.PerKNOPM
		}
	}
	t.Rows = t.rows(m)
	return t
}

// cost is what a configuration pays for the licence.
func (l *Licence) cost(c *Configuration) Money {
	cores, times := c.ServerCores, 1
	if l.Per == PerInstance {
		cores, times = c.InstanceCores, max(c.Instances, 1)
	}
	packs := (max(cores, l.MinCores) + l.PackCores - 1) / max(l.PackCores, 1)
	return Money(packs*times) * cents(l.PackPrice)
}

func pct(part, whole Money) float64 {
	if whole == 0 {
		return math.NaN()
	}
	return float64(part) / float64(whole) * 100
}

func (t *Table) rows(m *Model) []Row {
	var rows []Row
	add := func(section, label string, cell func(k *Costs) string) {
		r := Row{Section: section, Label: label}
		for i := range t.Costs {
			r.Cells = append(r.Cells, cell(&t.Costs[i]))
		}
		rows = append(rows, r)
	}
	money := func(v Money) string { return v.Format(t.Currency) }

	// Hardware items in the order they first appear, one row each.
	var items []string
	for _, c := range m.Configurations {
		for _, h := range c.Hardware {
			if !slices.Contains(items, h.Item) {
				items = append(items, h.Item)
			}
		}
	}
	for _, item := range items {
		r := Row{Section: SectionHardware, Label: item}
		for _, c := range m.Configurations {
			cell := NoValue
			if j := slices.IndexFunc(c.Hardware, func(h Hardware) bool { return h.Item == item }); j >= 0 {
				cell = money(cents(c.Hardware[j].Price))
			}
			r.Cells = append(r.Cells, cell)
		}
		rows = append(rows, r)
	}
	add(SectionHardware, "Hardware subtotal", func(k *Costs) string { return money(k.Hardware) })

	// The licences some configuration takes, in the model's order.
	var used []string
	for _, l := range m.Licences {
		if slices.ContainsFunc(t.Costs, func(k Costs) bool { _, ok := k.Licences[l.Name]; return ok }) {
			used = append(used, l.Name)
		}
	}
	for _, name := range used {
		add(SectionLicences, name, func(k *Costs) string {
			if v, ok := k.Licences[name]; ok {
				return money(v)
			}
			return NoValue
		})
	}
	add(SectionLicences, "Licence subtotal", func(k *Costs) string { return money(k.Licence) })

	add(SectionTotal, "Total", func(k *Costs) string { return money(k.Total) })

	add(SectionSavings, "Savings vs "+t.Baseline, func(k *Costs) string { return money(k.Savings) })
	add(SectionSavings, "Savings %", func(k *Costs) string { return percent(k.SavingsPct) })
	add(SectionSavings, "Licence savings %", func(k *Costs) string { return percent(k.LicenceSavingsPct) })
	if len(used) > 1 {
		for _, name := range used {
			add(SectionSavings, name+" savings %", func(k *Costs) string {
				if v, ok := k.LicenceSavings[name]; ok {
					return percent(v)
				}
				return NoValue
			})
		}
	}

	add(SectionPerformance, "Peak NOPM", func(k *Costs) string {
		if math.IsNaN(k.PeakNOPM) {
			return NoValue
		}
		return thousands(int64(math.Round(k.PeakNOPM)))
	})
	add(SectionPerformance, "Cost per 1,000 NOPM", func(k *Costs) string {
		if math.IsNaN(k.PerKNOPM) {
			return NoValue
		}
		return money(cents(k.PerKNOPM))
	})
	add(SectionPerformance, "Cost per 1,000 NOPM vs "+t.Baseline, func(k *Costs) string {
		if math.IsNaN(k.PerKNOPMRatio) || math.IsInf(k.PerKNOPMRatio, 0) {
			return NoValue
		}
		return fmt.Sprintf("%.2fx", k.PerKNOPMRatio)
	})
	return rows
}

// percent writes a whole percentage, as the papers do.
func percent(v float64) string {
	if math.IsNaN(v) {
		return NoValue
	}
	r := math.Round(v)
	if r == 0 {
		r = 0 // no "-0%"
	}
	return fmt.Sprintf("%.0f%%", r)
}

// WriteText writes t as aligned text: labels on the left, figures on the right, a
// blank line between sections.
func WriteText(w io.Writer, t *Table) error {
	widths := make([]int, len(t.Columns)+1)
	grow := func(i int, s string) { widths[i] = max(widths[i], utf8.RuneCountInString(s)) }
	for j, c := range t.Columns {
		grow(j+1, c)
	}
	for _, r := range t.Rows {
		grow(0, r.Label)
		for j, c := range r.Cells {
			grow(j+1, c)
		}
	}
	var b strings.Builder
	line := func(label string, cells []string) {
		s := label + strings.Repeat(" ", widths[0]-utf8.RuneCountInString(label))
		for j, c := range cells {
			s += "  " + strings.Repeat(" ", widths[j+1]-utf8.RuneCountInString(c)) + c
		}
		b.WriteString(strings.TrimRight(s, " ") + "\n")
	}
	line("", t.Columns)
	for i, r := range t.Rows {
		if i > 0 && r.Section != t.Rows[i-1].Section {
			b.WriteString("\n")
		}
		line(r.Label, r.Cells)
	}
	_, err := io.WriteString(w, b.String())
	return err
}

// Load reads and checks a cost model file (--costs FILE): strict YAML, errors as
// "costs.yaml:12: what is wrong (the fix)", wrapping input.ErrInvalid.
func Load(path string) (*Model, error) {
	data, err := modelKind.Read(path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, fmt.Errorf("%w: cost model %s does not exist (check the path; examples/costs/hdd-vs-ssd.yaml is an example)", input.ErrInvalid, path)
	}
	if err != nil {
		return nil, err
	}
	return Parse(path, data)
}

// modelKind is a cost model file as read: a file a person writes.
var modelKind = infile.Kind{What: "cost model", Limit: infile.HandWrittenLimit}

// Parse checks a cost model's text and fills in its defaults; name is how errors
// name the file.
func Parse(name string, data []byte) (*Model, error) {
	var m Model
	doc, err := yamlfile.Decode(name, data, &m, modelFile)
	if err != nil {
		return nil, err
	}
	var errs []*yamlfile.LineError
	for _, p := range m.problems() {
		errs = append(errs, &yamlfile.LineError{File: name, Line: doc.Line(p.Path), Msg: p.Msg})
	}
	if err := yamlfile.Earliest(errs); err != nil {
		return nil, err
	}
	return &m, nil
}

// modelFile is how a cost model file's messages name its parts.
var modelFile = yamlfile.Options{
	Empty:       "a cost model needs configurations: and, for licence costs, licences:",
	OneDocument: "a file holds one cost model; split it into two files",
	Example:     "examples/costs/hdd-vs-ssd.yaml",
	Places: []yamlfile.Place{
		{Type: Model{}, Name: "costs"},
		{Type: Licence{}, Name: "a licence"},
		{Type: Configuration{}, Name: "a configuration"},
		{Type: Hardware{}, Name: "a hardware item"},
	},
}
