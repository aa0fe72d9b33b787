package tpcc

import (
	"fmt"
	"regexp"
	"strings"
	"testing"
)

// sqlBody strips "--" comment lines and surrounding space.
func sqlBody(q string) string {
	var b strings.Builder
	for _, l := range strings.Split(q, "\n") {
		if strings.HasPrefix(strings.TrimSpace(l), "--") {
			continue
		}
		b.WriteString(l)
		b.WriteByte('\n')
	}
	return strings.TrimSpace(b.String())
}

// firstSelectItem returns the first item of the outer SELECT list (up to the first
// comma or FROM outside parentheses).
func firstSelectItem(body string) (string, bool) {
	rest, ok := strings.CutPrefix(body, "SELECT")
	if !ok {
		return "", false
	}
	depth := 0
	for i := 0; i < len(rest); i++ {
		switch rest[i] {
		case '(':
			depth++
		case ')':
			depth--
		case ',':
			if depth == 0 {
				return strings.TrimSpace(rest[:i]), true
			}
		}
		if depth == 0 && strings.HasPrefix(strings.ToUpper(rest[i:]), "\nFROM") {
			return strings.TrimSpace(rest[:i]), true
		}
	}
	return "", false
}

var violationsColumn = regexp.MustCompile(`(?is)^count\(\*\)\s+OVER\s*\(\s*\)\s+AS\s+violations$`)

func TestChecks(t *testing.T) {
	for _, tc := range []struct {
		all  bool
		want []int
	}{
		{false, []int{1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 12}},
		{true, []int{1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12}},
	} {
		checks := Checks(tc.all)
		if len(checks) != len(tc.want) {
			t.Fatalf("Checks(%v) returned %d conditions, want %d", tc.all, len(checks), len(tc.want))
		}
		names := map[string]bool{}
		for i, c := range checks {
			n := tc.want[i]
			if want := fmt.Sprintf("3.3.2.%d", n); c.ID != want {
				t.Errorf("Checks(%v)[%d].ID = %q, want %q", tc.all, i, c.ID, want)
			}
			if c.BeforeDeliveryOnly != (n == 11) {
				t.Errorf("%s: BeforeDeliveryOnly = %v", c.ID, c.BeforeDeliveryOnly)
			}
			if c.Name == "" || names[c.Name] {
				t.Errorf("%s: empty or duplicate name %q", c.ID, c.Name)
			}
			names[c.Name] = true
			if strings.TrimSpace(c.Query) == "" {
				t.Fatalf("%s: empty query", c.ID)
			}
			// The file's own header names the same clause: the files are not shifted.
			if !strings.HasPrefix(c.Query, "-- "+c.ID+":") {
				t.Errorf("%s: query does not start with its clause header: %q", c.ID, strings.SplitN(c.Query, "\n", 2)[0])
			}
			body := sqlBody(c.Query)
			// The outer SELECT follows the violation CTE, on a line of its own.
			outer := body[strings.LastIndex(body, "\nSELECT ")+1:]
			first, ok := firstSelectItem(outer)
			if !ok || !violationsColumn.MatchString(first) {
				t.Errorf("%s: the first result column must be the violation count, got %q", c.ID, first)
			}
			if strings.Contains(body, ";") {
				t.Errorf("%s: query contains a ';' (drivers send it as one statement)", c.ID)
			}
			if !strings.Contains(body, "LIMIT 5") {
				t.Errorf("%s: query does not limit the reported keys to 5", c.ID)
			}
		}
	}
}

// TestCheckTables: each condition reads the tables its clause is about, by the spec's
// names (1.3.1), so other tools' databases can be checked.
func TestCheckTables(t *testing.T) {
	tables := map[string][]string{
		"3.3.2.1":  {"warehouse", "district", "w_ytd", "d_ytd"},
		"3.3.2.2":  {"district", "orders", "new_order", "d_next_o_id", "o_id", "no_o_id"},
		"3.3.2.3":  {"new_order", "no_o_id"},
		"3.3.2.4":  {"orders", "order_line", "o_ol_cnt"},
		"3.3.2.5":  {"orders", "new_order", "o_carrier_id"},
		"3.3.2.6":  {"orders", "order_line", "o_ol_cnt"},
		"3.3.2.7":  {"orders", "order_line", "ol_delivery_d", "o_carrier_id"},
		"3.3.2.8":  {"warehouse", "history", "w_ytd", "h_amount"},
		"3.3.2.9":  {"district", "history", "d_ytd", "h_amount"},
		"3.3.2.10": {"customer", "orders", "order_line", "history", "c_balance", "ol_amount", "h_amount", "ol_delivery_d"},
		"3.3.2.11": {"orders", "new_order", "2100"},
		"3.3.2.12": {"customer", "orders", "order_line", "c_balance", "c_ytd_payment", "ol_amount", "ol_delivery_d"},
	}
	for _, c := range Checks(true) {
		body := sqlBody(c.Query)
		for _, w := range tables[c.ID] {
			if !regexp.MustCompile(`\b` + w + `\b`).MatchString(body) {
				t.Errorf("%s: query does not mention %s", c.ID, w)
			}
		}
	}
}
