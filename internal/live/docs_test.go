package live

import (
	"encoding/json"
	"os"
	"regexp"
	"slices"
	"strings"
	"testing"
)

var metricName = regexp.MustCompile(`\bstorbench_[a-z_]+`)

// exposed is a name as a query or a scrape writes it, back to its metric's: a
// histogram's series add _bucket, _sum and _count.
func exposed(name string) string {
	for _, suffix := range []string{"_bucket", "_sum", "_count"} {
		if base := strings.TrimSuffix(name, suffix); base != name && slices.Contains(Names(), base) {
			return base
		}
	}
	return name
}

// TestDashboardQueriesExposedMetrics: every metric the Grafana dashboard in examples/
// queries is one the endpoint serves, and it shows every one of them.
func TestDashboardQueriesExposedMetrics(t *testing.T) {
	b, err := os.ReadFile("../../examples/grafana-storbench.json")
	if err != nil {
		t.Fatal(err)
	}
	var dash struct {
		Panels []struct {
			Title   string `json:"title"`
			Targets []struct {
				Expr string `json:"expr"`
			} `json:"targets"`
		} `json:"panels"`
	}
	if err := json.Unmarshal(b, &dash); err != nil {
		t.Fatalf("the dashboard is not JSON Grafana imports: %v", err)
	}
	queried := map[string]bool{}
	for _, p := range dash.Panels {
		for _, target := range p.Targets {
			for _, name := range metricName.FindAllString(target.Expr, -1) {
				name = exposed(name)
				if !slices.Contains(Names(), name) {
					t.Errorf("panel %q queries %s, which storbench does not serve", p.Title, name)
				}
				queried[name] = true
			}
		}
	}
	for _, name := range Names() {
		if !queried[name] {
			t.Errorf("the dashboard shows no panel of %s", name)
		}
	}
}

// TestDocsListEveryMetric: docs/live.md's table lists every metric served, and none
// that is not.
func TestDocsListEveryMetric(t *testing.T) {
	b, err := os.ReadFile("../../docs/live.md")
	if err != nil {
		t.Fatal(err)
	}
	var listed []string
	for _, line := range strings.Split(string(b), "\n") {
		if m := regexp.MustCompile("^\\| `(storbench_[a-z_]+)` \\|").FindStringSubmatch(line); m != nil {
			listed = append(listed, m[1])
		}
	}
	for _, name := range Names() {
		if !slices.Contains(listed, name) {
			t.Errorf("docs/live.md does not list %s", name)
		}
	}
	for _, name := range listed {
		if !slices.Contains(Names(), name) {
			t.Errorf("docs/live.md lists %s, which storbench does not serve", name)
		}
	}
	for _, name := range metricName.FindAllString(string(b), -1) {
		if !slices.Contains(Names(), exposed(name)) {
			t.Errorf("docs/live.md names %s, which storbench does not serve", name)
		}
	}
}
