package cost

import (
	"bytes"
	"errors"
	"flag"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/storbench/storbench/internal/input"
	"github.com/storbench/storbench/internal/yamlfile/yamlfiletest"
)

var update = flag.Bool("update", false, "rewrite the golden files in testdata/")

const paperFile = "../../examples/costs/hdd-vs-ssd.yaml"

// paperPeaks are made-up peaks (the paper gives none): the 4-vCore SSD server's and
// the HDD baseline's, and none for the 8-vCore one.
var paperPeaks = map[string]float64{
	"ssd/ssd-cpus/cpus=0": 60000,
	"hdd/hdd-4cpu":        50000,
	"another/series":      1,
}

func loadPaper(t *testing.T) *Model {
	t.Helper()
	m, err := Load(paperFile)
	if err != nil {
		t.Fatalf("Load: %v", err)
	}
	return m
}

// The paper's figures 22 to 24, to the cent.
func TestPaper(t *testing.T) {
	tb := loadPaper(t).Evaluate(paperPeaks)
	const win, sql = "Windows Server Datacenter", "SQL Server 2017 Standard"
	cases := []struct {
		name                 string
		hardware, winC, sqlC Money
		licence, total       Money
		savings              Money
		savingsPct           string
		sqlSavingsPct        string
	}{
		{"SQL Server 2017 4 vCores", 1433130, 1231000, 743400, 1974400, 3407530, 2204608, "39%", "75%"},
		{"SQL Server 2017 8 vCores", 1433130, 1231000, 1486800, 2717800, 4150930, 1461208, "26%", "50%"},
		{"SQL Server 2008 R2 16 vCores", 1407538, 1231000, 2973600, 4204600, 5612138, 0, "0%", "0%"},
	}
	if tb.Baseline != "SQL Server 2008 R2 16 vCores" || tb.Currency != "USD" {
		t.Errorf("baseline %q currency %q", tb.Baseline, tb.Currency)
	}
	for i, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			k := tb.Costs[i]
			if tb.Columns[i] != c.name || k.Name != c.name {
				t.Fatalf("column %d is %q (%q), want %q", i, tb.Columns[i], k.Name, c.name)
			}
			for _, f := range []struct {
				what      string
				got, want Money
			}{
				{"hardware", k.Hardware, c.hardware},
				{win, k.Licences[win], c.winC},
				{sql, k.Licences[sql], c.sqlC},
				{"licence subtotal", k.Licence, c.licence},
				{"total", k.Total, c.total},
				{"savings", k.Savings, c.savings},
			} {
				if f.got != f.want {
					t.Errorf("%s %s, want %s", f.what, f.got.Format("USD"), f.want.Format("USD"))
				}
			}
			if got := percent(k.SavingsPct); got != c.savingsPct {
				t.Errorf("savings %s, want %s", got, c.savingsPct)
			}
			if got := percent(k.LicenceSavings[sql]); got != c.sqlSavingsPct {
				t.Errorf("%s savings %s, want %s", sql, got, c.sqlSavingsPct)
			}
			if got := k.LicenceSavings[win]; got != 0 {
				t.Errorf("%s savings %v%%, want 0", win, got)
			}
		})
	}
	// The cells, as the paper prints them.
	for _, want := range []struct{ label, cells string }{
		{"Hardware subtotal", "$14,331.30 $14,331.30 $14,075.38"},
		{win, "$12,310.00 $12,310.00 $12,310.00"},
		{sql, "$7,434.00 $14,868.00 $29,736.00"},
		{"Total", "$34,075.30 $41,509.30 $56,121.38"},
		{"Savings vs SQL Server 2008 R2 16 vCores", "$22,046.08 $14,612.08 $0.00"},
		{"Savings %", "39% 26% 0%"},
		{sql + " savings %", "75% 50% 0%"},
		{"DELL 400-AJPI 1.2 TB SAS 1.2Gb/s", "- - $1,560.00"},
	} {
		if got := cells(t, tb, want.label); got != want.cells {
			t.Errorf("row %q: %s, want %s", want.label, got, want.cells)
		}
	}
}

func cells(t *testing.T, tb *Table, label string) string {
	t.Helper()
	for _, r := range tb.Rows {
		if r.Label == label {
			if len(r.Cells) != len(tb.Columns) {
				t.Fatalf("row %q has %d cells for %d columns", label, len(r.Cells), len(tb.Columns))
			}
			return strings.Join(r.Cells, " ")
		}
	}
	t.Fatalf("no row %q", label)
	return ""
}

func TestCostPerNOPM(t *testing.T) {
	m := loadPaper(t)
	cases := []struct {
		name  string
		peaks map[string]float64
		peak  string // the "Peak NOPM" row
		per   string // "Cost per 1,000 NOPM"
		ratio string // "... vs baseline"
	}{
		{"paper peaks", paperPeaks, "60,000 - 50,000", "$567.92 - $1,122.43", "0.51x - 1.00x"},
		{"no peaks", nil, "- - -", "- - -", "- - -"},
		{"no baseline peak", map[string]float64{"ssd/ssd-cpus/cpus=0": 60000, "ssd/ssd-cpus/cpus=0-1": 80000}, "60,000 80,000 -", "$567.92 $518.87 -", "- - -"},
		{"zero and NaN are no peak", map[string]float64{"ssd/ssd-cpus/cpus=0": 0, "ssd/ssd-cpus/cpus=0-1": math.NaN(), "hdd/hdd-4cpu": 50000}, "- - 50,000", "- - $1,122.43", "- - 1.00x"},
		{"fractional peak", map[string]float64{"hdd/hdd-4cpu": 12345.6}, "- - 12,346", "- - $4,545.86", "- - 1.00x"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			tb := m.Evaluate(c.peaks)
			if got := cells(t, tb, "Peak NOPM"); got != c.peak {
				t.Errorf("peak %s, want %s", got, c.peak)
			}
			if got := cells(t, tb, "Cost per 1,000 NOPM"); got != c.per {
				t.Errorf("cost per 1,000 NOPM %s, want %s", got, c.per)
			}
			if got := cells(t, tb, "Cost per 1,000 NOPM vs SQL Server 2008 R2 16 vCores"); got != c.ratio {
				t.Errorf("ratio %s, want %s", got, c.ratio)
			}
		})
	}
	k := m.Evaluate(paperPeaks).Costs
	if math.Abs(k[0].PerKNOPM-34075.30/60) > 1e-9 || !math.IsNaN(k[1].PerKNOPM) || !math.IsNaN(k[1].PeakNOPM) {
		t.Errorf("per 1,000 NOPM %v, %v (peak %v), want 567.92…, NaN (NaN)", k[0].PerKNOPM, k[1].PerKNOPM, k[1].PeakNOPM)
	}
}

func TestGolden(t *testing.T) {
	var b bytes.Buffer
	if err := WriteText(&b, loadPaper(t).Evaluate(paperPeaks)); err != nil {
		t.Fatal(err)
	}
	golden := filepath.Join("testdata", "zh-paper.txt")
	if *update {
		if err := os.WriteFile(golden, b.Bytes(), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(golden)
	if err != nil {
		t.Fatalf("%v (go test ./internal/cost -run Golden -update writes it)", err)
	}
	if b.String() != string(want) {
		t.Errorf("WriteText differs from %s (-update rewrites it):\n%s", golden, b.String())
	}
}

func TestLicenceCost(t *testing.T) {
	cases := []struct {
		name string
		l    Licence
		c    Configuration
		want Money
	}{
		{"per server, 2 packs of 16 for 20 cores", Licence{Per: PerServer, PackCores: 16, PackPrice: 6155}, Configuration{ServerCores: 20}, 1231000},
		{"per server, exact packs", Licence{Per: PerServer, PackCores: 16, PackPrice: 6155}, Configuration{ServerCores: 32}, 1231000},
		{"per server, minimum", Licence{Per: PerServer, PackCores: 2, PackPrice: 769.38, MinCores: 16}, Configuration{ServerCores: 8}, 615504},
		{"per instance, minimum 4 for 2 vCores", Licence{Per: PerInstance, PackCores: 2, PackPrice: 3717, MinCores: 4}, Configuration{InstanceCores: 2, Instances: 1}, 743400},
		{"per instance, odd cores round up", Licence{Per: PerInstance, PackCores: 2, PackPrice: 3717, MinCores: 4}, Configuration{InstanceCores: 5, Instances: 1}, 1115100},
		{"per instance, times instances", Licence{Per: PerInstance, PackCores: 2, PackPrice: 3717, MinCores: 4}, Configuration{InstanceCores: 4, Instances: 3, ServerCores: 20}, 2230200},
		{"per instance ignores server cores", Licence{Per: PerInstance, PackCores: 2, PackPrice: 100}, Configuration{InstanceCores: 2, Instances: 1, ServerCores: 64}, 10000},
		{"free", Licence{Per: PerServer, PackCores: 1, PackPrice: 0}, Configuration{ServerCores: 20}, 0},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if got := c.l.cost(&c.c); got != c.want {
				t.Errorf("cost %s, want %s", got.Format("USD"), c.want.Format("USD"))
			}
		})
	}
}

func TestMoneyFormat(t *testing.T) {
	cases := []struct {
		m        Money
		currency string
		want     string
	}{
		{3407530, "USD", "$34,075.30"},
		{3407530, "EUR", "34,075.30 EUR"},
		{0, "USD", "$0.00"},
		{5, "USD", "$0.05"},
		{99999, "USD", "$999.99"},
		{100000, "USD", "$1,000.00"},
		{123456789012, "CNY", "1,234,567,890.12 CNY"},
		{-743400, "USD", "-$7,434.00"},
		{-5, "EUR", "-0.05 EUR"},
	}
	for _, c := range cases {
		if got := c.m.Format(c.currency); got != c.want {
			t.Errorf("Money(%d).Format(%q) = %q, want %q", c.m, c.currency, got, c.want)
		}
	}
	// Prices that float64 holds inexactly still come out to the cent.
	var sum Money
	for _, p := range []float64{7595.62, 4919.76, 1815.92} {
		sum += cents(p)
	}
	if sum != 1433130 {
		t.Errorf("sum %d cents, want 1433130", sum)
	}
}

// minimal is the smallest model; the error cases change one line of it, so their
// lines read against it: 1 licences, 2 name, 3 per, 4 pack_cores, 5 pack_price,
// 6 configurations, 7 name, 8 server_cores, 9 hardware, 10 item and price.
const minimal = `licences:
  - name: os
    per: server
    pack_cores: 16
    pack_price: 6155
configurations:
  - name: a
    server_cores: 20
    hardware:
      - {item: server, price: 100}
`

func edit(old, new string) string {
	if !strings.Contains(minimal, old) {
		panic("minimal has no " + old)
	}
	return strings.Replace(minimal, old, new, 1)
}

const second = "  - name: b\n    server_cores: 20\n"

func TestParseDefaults(t *testing.T) {
	m, err := Parse("costs.yaml", []byte(minimal+second+"    licences: []\n"))
	if err != nil {
		t.Fatal(err)
	}
	if m.Currency != "USD" || m.Baseline != "a" {
		t.Errorf("currency %q baseline %q, want USD a", m.Currency, m.Baseline)
	}
	a, b := m.Configurations[0], m.Configurations[1]
	if a.Instances != 1 || len(a.Licences) != 1 || a.Licences[0] != "os" {
		t.Errorf("configuration a: instances %d licences %q, want 1 [os]", a.Instances, a.Licences)
	}
	if len(b.Licences) != 0 {
		t.Errorf("licences: [] became %q", b.Licences)
	}
	tb := m.Evaluate(nil)
	if got := cells(t, tb, "os"); got != "$12,310.00 -" {
		t.Errorf("os row %s", got)
	}
	if got := cells(t, tb, "Licence savings %"); got != "0% 100%" {
		t.Errorf("licence savings %s", got)
	}
	// One licence: no per-licence savings rows.
	for _, r := range tb.Rows {
		if r.Label == "os savings %" {
			t.Errorf("a per-licence savings row with one licence")
		}
	}
	// A baseline that pays nothing leaves its percentages empty, and another currency.
	m, err = Parse("costs.yaml", []byte("currency: EUR\nbaseline: b\n"+minimal+second+"    licences: []\n"))
	if err != nil {
		t.Fatal(err)
	}
	tb = m.Evaluate(nil)
	if got := cells(t, tb, "Licence savings %"); got != "- -" {
		t.Errorf("licence savings against a free baseline: %s", got)
	}
	if got := cells(t, tb, "Savings vs b"); got != "-12,410.00 EUR 0.00 EUR" {
		t.Errorf("savings %s", got)
	}
	if got := cells(t, tb, "Savings %"); got != "- -" {
		t.Errorf("savings %% against a free baseline: %s", got)
	}
}

// parseFails parses text, expecting an error at line that contains want, in the
// form yamlfiletest.CheckError checks.
func parseFails(t *testing.T, text string, line int, want string) {
	t.Helper()
	_, err := Parse("costs.yaml", []byte(text))
	t.Log(err)
	yamlfiletest.CheckError(t, err, "costs.yaml", line, want)
}

func TestParseErrors(t *testing.T) {
	cases := []struct {
		name string
		text string
		line int
		want string
	}{
		// Strict YAML.
		{"unknown key", edit("    server_cores: 20\n", "    server_cores: 20\n    vcores: 4\n"), 9, `unknown key "vcores" in a configuration (known keys: name, series`},
		{"misspelt key", edit("    pack_price: 6155", "    pack_prize: 6155"), 5, `unknown key "pack_prize" in a licence (did you mean "pack_price"?)`},
		{"unknown top key", "currancy: EUR\n" + minimal, 1, `unknown key "currancy" in costs (did you mean "currency"?)`},
		{"unknown hardware key", edit("{item: server, price: 100}", "{item: server, cost: 100}"), 10, `unknown key "cost" in a hardware item`},
		{"price as text", edit("pack_price: 6155", `pack_price: "6,155"`), 5, `pack_price: expected a number, got text "6,155" (e.g. 7595.62, without quotes`},
		{"price as text beside an item", edit("price: 100}", `price: "$100.00 (list)"}`), 10, `price: expected a number, got text "$100.00 (list)"`},
		{"cores as text", edit("server_cores: 20", "server_cores: twenty"), 8, `server_cores: expected a whole number, got text "twenty"`},
		{"key twice", edit("    pack_cores: 16\n", "    pack_cores: 16\n    pack_cores: 2\n"), 5, `"pack_cores" given twice, first at line 4`},
		{"syntax", edit("    per: server\n", "    per: [server\n"), 3, "not valid YAML"},
		{"empty file", "# nothing\n", 1, "the file is empty"},
		{"second document", minimal + "---\ncurrency: EUR\n", 11, "a second YAML document"},

		// The model.
		{"unknown licence name", minimal + "    licences: [os, sql]\n", 11, `configuration "a" takes licence "sql", which the model does not have (use one of the names under licences: os)`},
		{"licence twice", minimal + "    licences: [os, os]\n", 11, `takes licence "os" twice`},
		{"duplicate configuration", minimal + "  - name: a\n    server_cores: 4\n", 11, `configuration name "a" is used twice (give each configuration its own name)`},
		{"duplicate licence", edit("configurations:", "  - name: os\n    per: instance\n    pack_cores: 2\n    pack_price: 1\nconfigurations:"), 6, `licence name "os" is used twice`},
		{"missing baseline", "baseline: hdd\n" + minimal, 1, `baseline "hdd" is not a configuration (use one of the names under configurations: a)`},
		{"negative price", edit("price: 100}", "price: -100}"), 10, `price -100 of "server" in configuration "a" is negative (give the price, 0 or more`},
		{"negative pack price", edit("pack_price: 6155", "pack_price: -1"), 5, `pack_price -1 of licence "os" is negative`},
		{"fractions of a cent", edit("price: 100}", "price: 99.999}"), 10, "has fractions of a cent"},
		{"price too large", edit("price: 100}", "price: 1e12}"), 10, "is too large"},
		{"no pack cores", strings.Replace(minimal, "    pack_cores: 16\n", "", 1), 2, `pack_cores 0 of licence "os" is too few (give the cores one pack licenses`},
		{"no per", strings.Replace(minimal, "    per: server\n", "", 1), 2, `licence "os" has no per (use per: server`},
		{"unknown per", edit("per: server", "per: socket"), 3, `per "socket" of licence "os" is unknown`},
		{"negative min cores", edit("    pack_price: 6155\n", "    pack_price: 6155\n    min_cores: -4\n"), 6, "min_cores -4"},
		{"no server cores", strings.Replace(minimal, "    server_cores: 20\n", "", 1), 7, `configuration "a" has no server_cores, which licence "os" counts (add server_cores:`},
		{"no instance cores", edit("per: server", "per: instance"), 7, `has no instance_cores, which licence "os" counts`},
		{"negative instances", edit("server_cores: 20", "server_cores: 20\n    instances: -1"), 9, "instances -1 of configuration \"a\" is out of range"},
		{"no configurations", strings.Replace(minimal, minimal[strings.Index(minimal, "configurations:"):], "configurations: []\n", 1), 6, "the cost model has no configurations"},
		{"configuration without name", edit("  - name: a\n", "  - series: x\n"), 7, "configuration 1 has no name"},
		{"hardware without item", edit("{item: server, price: 100}", "{price: 100}"), 10, `hardware 1 of configuration "a" has no item`},
		{"hardware item twice", minimal + "      - {item: server, price: 5}\n", 11, `hardware item "server" is listed twice`},
		{"bad currency", "currency: $\n" + minimal, 1, `currency "$" is not a currency code`},
		{"licence not in an empty model", strings.Replace(minimal, minimal[:strings.Index(minimal, "configurations:")], "", 1) + "    licences: [os]\n", 6, "the model has no licences"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) { parseFails(t, c.text, c.line, c.want) })
	}
}

// The earliest problem in the file is the one reported, whatever the order of checks
// (the baseline is checked before the licences).
func TestParseFirstProblem(t *testing.T) {
	text := edit("pack_price: 6155", "pack_price: -1") + "baseline: nope\n"
	parseFails(t, text, 5, `pack_price -1 of licence "os" is negative`)
}

func TestValidate(t *testing.T) {
	m := &Model{Configurations: []Configuration{{Name: "a", Licences: []string{"os"}}}}
	err := m.Validate()
	var fe *FieldError
	if !errors.As(err, &fe) || !errors.Is(err, input.ErrInvalid) {
		t.Fatalf("Validate: %v, want a *FieldError wrapping input.ErrInvalid", err)
	}
	if fe.Path != "configurations[0].licences[0]" || err.Error() != fe.Path+": "+fe.Msg {
		t.Errorf("error %q at %q", err, fe.Path)
	}
	if err := (&Model{}).Validate(); err == nil || !strings.Contains(err.Error(), "configurations: the cost model has no configurations") {
		t.Errorf("empty model: %v", err)
	}
	m = loadPaper(t)
	if err := m.Validate(); err != nil {
		t.Errorf("Validate of a loaded model: %v", err)
	}
}

func TestLoadMissing(t *testing.T) {
	_, err := Load(filepath.Join(t.TempDir(), "costs.yaml"))
	if !errors.Is(err, input.ErrInvalid) || !strings.Contains(err.Error(), "does not exist") {
		t.Errorf("Load of a missing file: %v", err)
	}
}
