package tpcc

import (
	"bytes"
	"crypto/sha256"
	"errors"
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
)

const (
	genSeed = 20240517
	genWID  = 1
)

// genTime is deliberately not UTC: the stamps must be written in UTC.
var genTime = time.Date(2024, 5, 17, 14, 45, 30, 0, time.FixedZone("CEST", 2*3600))

const genStamp = "2024-05-17 12:45:30"

// generatedData is the item table and one warehouse, generated once per test binary.
type generatedData struct {
	g      *Generator
	raw    [numTables][]byte
	n      [numTables]int64 // row counts returned by the writers
	rows   [numTables][][]string
	colIdx [numTables]map[string]int
}

var (
	genOnce sync.Once
	genData *generatedData
	genErr  error
)

func generated(t testing.TB) *generatedData {
	t.Helper()
	genOnce.Do(func() {
		d := &generatedData{g: NewGenerator(genSeed, genTime)}
		wh := d.g.Warehouse(genWID)
		var wg sync.WaitGroup
		errs := make([]error, numTables)
		for _, tb := range Tables {
			wg.Go(func() {
				var buf bytes.Buffer
				var err error
				if tb == ItemTable {
					d.n[tb], err = d.g.WriteItems(&buf)
				} else {
					d.n[tb], err = wh.Write(tb, &buf)
				}
				d.raw[tb] = buf.Bytes()
				if err == nil {
					d.rows[tb], err = splitRows(tb, buf.String())
				}
				errs[tb] = err
			})
		}
		wg.Wait()
		genErr = errors.Join(errs...)
		for _, tb := range Tables {
			d.colIdx[tb] = map[string]int{}
			for i, c := range tb.Columns() {
				d.colIdx[tb][c] = i
			}
		}
		genData = d
	})
	if genErr != nil {
		t.Fatal(genErr)
	}
	return genData
}

// splitRows splits COPY text into rows of fields, checking the framing: every row
// ends with a newline and has exactly len(Columns()) tab-separated fields.
func splitRows(tb Table, s string) ([][]string, error) {
	if s != "" && !strings.HasSuffix(s, "\n") {
		return nil, fmt.Errorf("%s: output does not end with a newline", tb)
	}
	lines := strings.Split(strings.TrimSuffix(s, "\n"), "\n")
	rows := make([][]string, len(lines))
	want := len(tb.Columns())
	for i, l := range lines {
		rows[i] = strings.Split(l, "\t")
		if len(rows[i]) != want {
			return nil, fmt.Errorf("%s row %d has %d fields, want %d: %q", tb, i+1, len(rows[i]), want, l)
		}
	}
	return rows, nil
}

// col returns column name of row r of table tb.
func (d *generatedData) col(t testing.TB, tb Table, r []string, name string) string {
	i, ok := d.colIdx[tb][name]
	if !ok {
		t.Fatalf("%s has no column %q", tb, name)
	}
	return r[i]
}

func (d *generatedData) int(t testing.TB, tb Table, r []string, name string) int {
	s := d.col(t, tb, r, name)
	v, err := strconv.Atoi(s)
	if err != nil || strconv.Itoa(v) != s {
		t.Fatalf("%s.%s = %q, not a plain integer", tb, name, s)
	}
	return v
}

// money parses an exact two-decimal amount into cents, rejecting any other format.
func parseMoney(s string) (int64, bool) {
	neg := strings.HasPrefix(s, "-")
	u := strings.TrimPrefix(s, "-")
	whole, frac, ok := strings.Cut(u, ".")
	if !ok || len(frac) != 2 || !isDigits(frac) || !isDigits(whole) || len(whole) > 1 && whole[0] == '0' {
		return 0, false
	}
	w, _ := strconv.ParseInt(whole, 10, 64)
	f, _ := strconv.ParseInt(frac, 10, 64)
	c := w*100 + f
	if neg {
		if c == 0 {
			return 0, false // "-0.00"
		}
		c = -c
	}
	return c, true
}

func (d *generatedData) money(t testing.TB, tb Table, r []string, name string) int64 {
	s := d.col(t, tb, r, name)
	c, ok := parseMoney(s)
	if !ok {
		t.Fatalf("%s.%s = %q, not money with exactly two decimals", tb, name, s)
	}
	return c
}

// fraction4 parses "0.dddd" (numeric(4,4)) into ten-thousandths.
func (d *generatedData) fraction4(t testing.TB, tb Table, r []string, name string) int {
	s := d.col(t, tb, r, name)
	if len(s) != 6 || s[:2] != "0." || !isDigits(s[2:]) {
		t.Fatalf("%s.%s = %q, want 0.dddd", tb, name, s)
	}
	v, _ := strconv.Atoi(s[2:])
	return v
}

func (d *generatedData) str(t testing.TB, tb Table, r []string, name string, lo, hi int, digits bool) string {
	s := d.col(t, tb, r, name)
	ok := len(s) >= lo && len(s) <= hi
	if digits {
		ok = ok && isDigits(s)
	} else {
		ok = ok && isAlnum(s)
	}
	if !ok {
		t.Fatalf("%s.%s = %q, want a %d..%d character string (digits only: %v)", tb, name, s, lo, hi, digits)
	}
	return s
}

// letters checks a column 4.3.3.1 gives as "a-string of n letters".
func (d *generatedData) letters(t testing.TB, tb Table, r []string, name string, n int) {
	s := d.col(t, tb, r, name)
	if len(s) != n || strings.Trim(s, letters) != "" {
		t.Fatalf("%s.%s = %q, want %d letters (4.3.3.1)", tb, name, s, n)
	}
}

func (d *generatedData) zip(t testing.TB, tb Table, r []string, name string) {
	s := d.col(t, tb, r, name)
	if len(s) != 9 || !isDigits(s[:4]) || s[4:] != "11111" {
		t.Fatalf("%s.%s = %q, want 4 digits then 11111 (4.3.2.7)", tb, name, s)
	}
}

// address checks the street_1, street_2, city, state, zip of a prefix (4.3.3.1).
func (d *generatedData) address(t testing.TB, tb Table, r []string, p string) {
	d.str(t, tb, r, p+"street_1", 10, 20, false)
	d.str(t, tb, r, p+"street_2", 10, 20, false)
	d.str(t, tb, r, p+"city", 10, 20, false)
	d.letters(t, tb, r, p+"state", 2)
	d.zip(t, tb, r, p+"zip")
}

func (d *generatedData) eq(t testing.TB, tb Table, r []string, name, want string) {
	if got := d.col(t, tb, r, name); got != want {
		t.Fatalf("%s.%s = %q, want %q", tb, name, got, want)
	}
}

func TestTableColumns(t *testing.T) {
	// 1.3.1: table names and column counts.
	want := map[Table]struct {
		name string
		cols int
	}{
		ItemTable: {"item", 5}, WarehouseTable: {"warehouse", 9}, DistrictTable: {"district", 11},
		CustomerTable: {"customer", 21}, HistoryTable: {"history", 8}, OrdersTable: {"orders", 8},
		NewOrderTable: {"new_order", 3}, OrderLineTable: {"order_line", 10}, StockTable: {"stock", 17},
	}
	if len(Tables) != len(want) || Tables[0] != ItemTable || !slices.Equal(WarehouseTables, Tables[1:]) {
		t.Fatalf("Tables = %v, WarehouseTables = %v", Tables, WarehouseTables)
	}
	for tb, w := range want {
		if tb.String() != w.name || len(tb.Columns()) != w.cols {
			t.Errorf("%v: name %q with %d columns, want %q with %d", int(tb), tb.String(), len(tb.Columns()), w.name, w.cols)
		}
		seen := map[string]bool{}
		for _, c := range tb.Columns() {
			if seen[c] {
				t.Errorf("%s: column %s twice", tb, c)
			}
			seen[c] = true
		}
	}
}

func TestAppendCents(t *testing.T) {
	for _, tc := range []struct {
		c    int64
		want string
	}{
		{0, "0.00"}, {5, "0.05"}, {10, "0.10"}, {99, "0.99"}, {100, "1.00"}, {101, "1.01"},
		{123456, "1234.56"}, {999999, "9999.99"}, {30000000, "300000.00"},
		{-1, "-0.01"}, {-5, "-0.05"}, {-1000, "-10.00"}, {-123456, "-1234.56"},
	} {
		if got := string(AppendCents([]byte("$"), tc.c)); got != "$"+tc.want {
			t.Errorf("AppendCents(%d) = %q, want %q", tc.c, got, "$"+tc.want)
		}
		if back, ok := parseMoney(tc.want); !ok || back != tc.c {
			t.Errorf("parseMoney(%q) = %d, %v", tc.want, back, ok)
		}
	}
}

func TestGeneratedRowCounts(t *testing.T) {
	d := generated(t)
	want := [numTables]int{
		ItemTable: 100000, WarehouseTable: 1, DistrictTable: 10, CustomerTable: 30000, HistoryTable: 30000,
		OrdersTable: 30000, NewOrderTable: 9000, StockTable: 100000,
	}
	olCnt := 0
	for _, r := range d.rows[OrdersTable] {
		olCnt += d.int(t, OrdersTable, r, "o_ol_cnt")
	}
	want[OrderLineTable] = olCnt
	for _, tb := range Tables {
		if len(d.rows[tb]) != want[tb] || d.n[tb] != int64(want[tb]) {
			t.Errorf("%s: %d rows parsed, %d reported, want %d", tb, len(d.rows[tb]), d.n[tb], want[tb])
		}
		if tb != ItemTable && tb != OrderLineTable && RowsPerWarehouse[tb] != int64(want[tb]) {
			t.Errorf("RowsPerWarehouse[%s] = %d, want %d", tb, RowsPerWarehouse[tb], want[tb])
		}
	}
	if RowsPerWarehouse[ItemTable] != 0 || RowsPerWarehouse[OrderLineTable] != 300000 {
		t.Errorf("RowsPerWarehouse item %d (want 0), order_line %d (want the expected 300000)",
			RowsPerWarehouse[ItemTable], RowsPerWarehouse[OrderLineTable])
	}
}

var loadableByte = func() (ok [256]bool) {
	for _, c := range []byte(alphanumeric + ".-: ") {
		ok[c] = true
	}
	return ok
}()

// TestGeneratedFieldsLoadable: every field is non-empty and needs no escaping for
// COPY text / LOAD DATA (no backslash except the \N null, no tab or newline).
func TestGeneratedFieldsLoadable(t *testing.T) {
	d := generated(t)
	for _, tb := range Tables {
		for i, r := range d.rows[tb] {
			for j, f := range r {
				if f == `\N` {
					continue
				}
				if f == "" || strings.ContainsAny(f, "\\\r\t\n") {
					t.Fatalf("%s row %d column %s = %q", tb, i+1, tb.Columns()[j], f)
				}
				for k := 0; k < len(f); k++ {
					if c := f[k]; !loadableByte[c] {
						t.Fatalf("%s row %d column %s = %q: unexpected byte %q", tb, i+1, tb.Columns()[j], f, c)
					}
				}
			}
		}
	}
}

func TestGeneratedItems(t *testing.T) {
	d := generated(t)
	const tb = ItemTable
	orig := 0
	for i, r := range d.rows[tb] {
		if id := d.int(t, tb, r, "i_id"); id != i+1 {
			t.Fatalf("item row %d has i_id %d", i+1, id)
		}
		if im := d.int(t, tb, r, "i_im_id"); im < 1 || im > 10000 {
			t.Fatalf("i_im_id %d, want 1..10000", im)
		}
		d.str(t, tb, r, "i_name", 14, 24, false)
		if p := d.money(t, tb, r, "i_price"); p < 100 || p > 10000 {
			t.Fatalf("i_price %d cents, want 1.00..100.00", p)
		}
		if strings.Contains(d.str(t, tb, r, "i_data", 26, 50, false), "ORIGINAL") {
			orig++
		}
	}
	within(t, "items with ORIGINAL %", pct(orig, Items), 9.4, 10.6)
}

func TestGeneratedWarehouseAndDistricts(t *testing.T) {
	d := generated(t)
	w := d.rows[WarehouseTable][0]
	if d.int(t, WarehouseTable, w, "w_id") != genWID {
		t.Fatalf("w_id = %s", d.col(t, WarehouseTable, w, "w_id"))
	}
	d.str(t, WarehouseTable, w, "w_name", 6, 10, false)
	d.address(t, WarehouseTable, w, "w_")
	if tax := d.fraction4(t, WarehouseTable, w, "w_tax"); tax > 2000 {
		t.Errorf("w_tax %d, want 0.0000..0.2000", tax)
	}
	d.eq(t, WarehouseTable, w, "w_ytd", "300000.00")

	const tb = DistrictTable
	taxes := map[int]bool{}
	for i, r := range d.rows[tb] {
		if d.int(t, tb, r, "d_id") != i+1 || d.int(t, tb, r, "d_w_id") != genWID {
			t.Fatalf("district row %d: %v", i+1, r)
		}
		d.str(t, tb, r, "d_name", 6, 10, false)
		d.address(t, tb, r, "d_")
		tax := d.fraction4(t, tb, r, "d_tax")
		if tax > 2000 {
			t.Errorf("d_tax %d, want 0.0000..0.2000", tax)
		}
		taxes[tax] = true
		d.eq(t, tb, r, "d_ytd", "30000.00")
		d.eq(t, tb, r, "d_next_o_id", "3001")
	}
	if len(taxes) < 8 {
		t.Errorf("only %d distinct d_tax values in 10 districts", len(taxes))
	}
}

func TestGeneratedCustomers(t *testing.T) {
	d := generated(t)
	const tb = CustomerTable
	names := map[string]int{}
	for n := range 1000 {
		names[LastName(n)] = n
	}
	bc := 0
	maxDiscount := 0
	nurandNames := make([]int, 1000) // c_last numbers of customers 1001..3000
	for i, r := range d.rows[tb] {
		cid, did := d.int(t, tb, r, "c_id"), d.int(t, tb, r, "c_d_id")
		if cid != i%CustomersPerDistrict+1 || did != i/CustomersPerDistrict+1 || d.int(t, tb, r, "c_w_id") != genWID {
			t.Fatalf("customer row %d is (c_id %d, c_d_id %d)", i+1, cid, did)
		}
		d.str(t, tb, r, "c_first", 8, 16, false)
		d.eq(t, tb, r, "c_middle", "OE")
		last := d.col(t, tb, r, "c_last")
		num, ok := names[last]
		if !ok {
			t.Fatalf("c_last %q is not a generated last name", last)
		}
		if cid <= 1000 {
			// 4.3.2.3: the first 1000 customers take numbers 0..999 in order.
			if last != LastName(cid-1) {
				t.Fatalf("customer %d of district %d has c_last %q, want %q", cid, did, last, LastName(cid-1))
			}
		} else {
			nurandNames[num]++
		}
		d.address(t, tb, r, "c_")
		d.str(t, tb, r, "c_phone", 16, 16, true)
		d.eq(t, tb, r, "c_since", genStamp)
		switch d.col(t, tb, r, "c_credit") {
		case "BC":
			bc++
		case "GC":
		default:
			t.Fatalf("c_credit %q", d.col(t, tb, r, "c_credit"))
		}
		d.eq(t, tb, r, "c_credit_lim", "50000.00")
		disc := d.fraction4(t, tb, r, "c_discount")
		if disc > 5000 {
			t.Fatalf("c_discount 0.%04d, want 0.0000..0.5000", disc)
		}
		maxDiscount = max(maxDiscount, disc)
		d.eq(t, tb, r, "c_balance", "-10.00")
		d.eq(t, tb, r, "c_ytd_payment", "10.00")
		d.eq(t, tb, r, "c_payment_cnt", "1")
		d.eq(t, tb, r, "c_delivery_cnt", "0")
		d.str(t, tb, r, "c_data", 300, 500, false)
	}
	within(t, "customers with BC credit %", pct(bc, len(d.rows[tb])), 9, 11)
	if maxDiscount < 4900 {
		t.Errorf("max c_discount 0.%04d, want up to 0.5000", maxDiscount)
	}
	// Customers 1001..3000 take NURand(255, 0, 999) with the C-Load constant.
	c := d.g.Constants.CLast
	if d := tvd(nurandNames, nurandPMF(t, ALast, 0, 999, c)); d > 0.2 {
		t.Errorf("c_last of customers > 1000: distance to NURand(255, 0, 999, C-Load=%d) = %.3f, want <= 0.2", c, d)
	}
	if d := tvd(nurandNames, uniformPMF(1000)); d < 0.35 {
		t.Errorf("c_last of customers > 1000: distance to uniform %.3f, want >= 0.35", d)
	}
	if d.g.Constants != LoadConstants(genSeed) {
		t.Errorf("generator constants %+v, want LoadConstants(seed) %+v", d.g.Constants, LoadConstants(genSeed))
	}
}

func TestGeneratedHistory(t *testing.T) {
	d := generated(t)
	const tb = HistoryTable
	for i, r := range d.rows[tb] {
		cid, did := d.int(t, tb, r, "h_c_id"), d.int(t, tb, r, "h_c_d_id")
		if cid != i%CustomersPerDistrict+1 || did != i/CustomersPerDistrict+1 {
			t.Fatalf("history row %d is for customer (%d, %d)", i+1, did, cid)
		}
		if d.int(t, tb, r, "h_d_id") != did || d.int(t, tb, r, "h_c_w_id") != genWID || d.int(t, tb, r, "h_w_id") != genWID {
			t.Fatalf("history row %d: %v", i+1, r)
		}
		d.eq(t, tb, r, "h_date", genStamp)
		d.eq(t, tb, r, "h_amount", "10.00")
		d.str(t, tb, r, "h_data", 12, 24, false)
	}
}

func TestGeneratedOrders(t *testing.T) {
	d := generated(t)
	const tb = OrdersTable
	var perm [DistrictsPerWarehouse][]int
	carriers := map[int]int{}
	olCounts := map[int]int{}
	sum := 0
	for i, r := range d.rows[tb] {
		oid, did := d.int(t, tb, r, "o_id"), d.int(t, tb, r, "o_d_id")
		if oid != i%OrdersPerDistrict+1 || did != i/OrdersPerDistrict+1 || d.int(t, tb, r, "o_w_id") != genWID {
			t.Fatalf("orders row %d is (o_d_id %d, o_id %d)", i+1, did, oid)
		}
		perm[did-1] = append(perm[did-1], d.int(t, tb, r, "o_c_id"))
		d.eq(t, tb, r, "o_entry_d", genStamp)
		carrier := d.col(t, tb, r, "o_carrier_id")
		if oid >= FirstUndeliveredOrder {
			if carrier != `\N` {
				t.Fatalf("order %d: o_carrier_id %q, want null for o_id >= 2101", oid, carrier)
			}
		} else {
			c := d.int(t, tb, r, "o_carrier_id")
			if c < 1 || c > 10 {
				t.Fatalf("order %d: o_carrier_id %d, want 1..10", oid, c)
			}
			carriers[c]++
		}
		n := d.int(t, tb, r, "o_ol_cnt")
		if n < MinOrderLines || n > MaxOrderLines {
			t.Fatalf("order %d: o_ol_cnt %d, want 5..15", oid, n)
		}
		olCounts[n]++
		sum += n
		d.eq(t, tb, r, "o_all_local", "1")
	}
	for di, p := range perm {
		// 4.3.3.1: o_c_id is a random permutation of 1..3000 in each district.
		s := slices.Clone(p)
		slices.Sort(s)
		for i, v := range s {
			if v != i+1 {
				t.Fatalf("district %d: o_c_id is not a permutation of 1..3000", di+1)
			}
		}
		ascending := 0
		for i := 1; i < len(p); i++ {
			if p[i] == p[i-1]+1 {
				ascending++
			}
		}
		if ascending > 30 {
			t.Errorf("district %d: o_c_id has %d consecutive runs: not shuffled", di+1, ascending)
		}
		if di > 0 && slices.Equal(p, perm[0]) {
			t.Errorf("district %d has the same o_c_id permutation as district 1", di+1)
		}
	}
	if len(carriers) != 10 || len(olCounts) != 11 {
		t.Errorf("%d carrier values (want 10), %d o_ol_cnt values (want 11)", len(carriers), len(olCounts))
	}
	within(t, "mean o_ol_cnt", float64(sum)/float64(len(d.rows[tb])), 9.9, 10.1)
}

func TestGeneratedNewOrders(t *testing.T) {
	d := generated(t)
	const tb = NewOrderTable
	seen := map[[2]int]bool{}
	for _, r := range d.rows[tb] {
		oid, did := d.int(t, tb, r, "no_o_id"), d.int(t, tb, r, "no_d_id")
		if oid < FirstUndeliveredOrder || oid > OrdersPerDistrict || did < 1 || did > DistrictsPerWarehouse || d.int(t, tb, r, "no_w_id") != genWID {
			t.Fatalf("new_order row %v", r)
		}
		if seen[[2]int{did, oid}] {
			t.Fatalf("new_order (%d, %d) twice", did, oid)
		}
		seen[[2]int{did, oid}] = true
	}
	if len(seen) != DistrictsPerWarehouse*NewOrdersPerDistrict {
		t.Errorf("%d distinct new_order rows, want 9000 (o_id 2101..3000 of each district)", len(seen))
	}
}

func TestGeneratedOrderLines(t *testing.T) {
	d := generated(t)
	const tb = OrderLineTable
	olCnt := map[[2]int]int{}
	for _, r := range d.rows[OrdersTable] {
		olCnt[[2]int{d.int(t, OrdersTable, r, "o_d_id"), d.int(t, OrdersTable, r, "o_id")}] = d.int(t, OrdersTable, r, "o_ol_cnt")
	}
	lines := map[[2]int]int{}
	items := make([]bool, Items+1)
	distinctItems := 0
	var amountSum int64
	undelivered := 0
	minAmount, maxAmount := int64(1<<62), int64(0)
	for i, r := range d.rows[tb] {
		oid, did := d.int(t, tb, r, "ol_o_id"), d.int(t, tb, r, "ol_d_id")
		key := [2]int{did, oid}
		lines[key]++
		if n := d.int(t, tb, r, "ol_number"); n != lines[key] {
			t.Fatalf("order_line row %d: ol_number %d, want %d", i+1, n, lines[key])
		}
		if d.int(t, tb, r, "ol_w_id") != genWID || d.int(t, tb, r, "ol_supply_w_id") != genWID {
			t.Fatalf("order_line row %d: %v", i+1, r)
		}
		item := d.int(t, tb, r, "ol_i_id")
		if item < 1 || item > Items {
			t.Fatalf("ol_i_id %d, want 1..100000", item)
		}
		if !items[item] {
			items[item] = true
			distinctItems++
		}
		d.eq(t, tb, r, "ol_quantity", "5")
		d.letters(t, tb, r, "ol_dist_info", 24)
		amount := d.money(t, tb, r, "ol_amount")
		if oid < FirstUndeliveredOrder {
			d.eq(t, tb, r, "ol_delivery_d", genStamp)
			if amount != 0 {
				t.Fatalf("delivered order %d: ol_amount %d cents, want 0.00", oid, amount)
			}
		} else {
			d.eq(t, tb, r, "ol_delivery_d", `\N`)
			if amount < 1 || amount > 999999 {
				t.Fatalf("undelivered order %d: ol_amount %d cents, want 0.01..9999.99", oid, amount)
			}
			undelivered++
			amountSum += amount
			minAmount, maxAmount = min(minAmount, amount), max(maxAmount, amount)
		}
	}
	if len(lines) != len(olCnt) {
		t.Errorf("order_line covers %d orders, orders has %d", len(lines), len(olCnt))
	}
	for k, n := range olCnt {
		if lines[k] != n {
			t.Fatalf("order (d %d, o %d): %d order_line rows, o_ol_cnt %d", k[0], k[1], lines[k], n)
		}
	}
	within(t, "mean undelivered ol_amount (cents)", float64(amountSum)/float64(undelivered), 490000, 510000)
	if minAmount > 1000 || maxAmount < 999000 {
		t.Errorf("undelivered ol_amount spans [%d, %d] cents, want about [1, 999999]", minAmount, maxAmount)
	}
	// ol_i_id is uniform at load (4.3.3.1): k draws over 100000 items leave about
	// 100000·(1-e^(-k/100000)) distinct items (~95000 for 300k); NURand leaves far fewer.
	want := float64(Items) * (1 - math.Exp(-float64(len(d.rows[tb]))/Items))
	within(t, "distinct ol_i_id", float64(distinctItems), want-1000, want+1000)
}

func TestGeneratedStock(t *testing.T) {
	d := generated(t)
	const tb = StockTable
	orig := 0
	qty := map[int]bool{}
	for i, r := range d.rows[tb] {
		if d.int(t, tb, r, "s_i_id") != i+1 || d.int(t, tb, r, "s_w_id") != genWID {
			t.Fatalf("stock row %d: %v", i+1, r[:2])
		}
		q := d.int(t, tb, r, "s_quantity")
		if q < 10 || q > 100 {
			t.Fatalf("s_quantity %d, want 10..100", q)
		}
		qty[q] = true
		for k := 1; k <= DistrictsPerWarehouse; k++ {
			d.letters(t, tb, r, fmt.Sprintf("s_dist_%02d", k), 24)
		}
		d.eq(t, tb, r, "s_ytd", "0")
		d.eq(t, tb, r, "s_order_cnt", "0")
		d.eq(t, tb, r, "s_remote_cnt", "0")
		if strings.Contains(d.str(t, tb, r, "s_data", 26, 50, false), "ORIGINAL") {
			orig++
		}
	}
	within(t, "stock with ORIGINAL %", pct(orig, StockPerWarehouse), 9.4, 10.6)
	if len(qty) != 91 {
		t.Errorf("%d distinct s_quantity values, want all 91 of 10..100", len(qty))
	}
}

// TestGeneratedConsistency evaluates the consistency conditions of 3.3.2 (all 12,
// since no Delivery has run) on the generated rows.
func TestGeneratedConsistency(t *testing.T) {
	d := generated(t)
	w := d.rows[WarehouseTable][0]
	wYTD := d.money(t, WarehouseTable, w, "w_ytd")

	type dk = int // district
	type ok = [2]int
	type ck = [2]int // (district, customer)
	dYTD := map[dk]int64{}
	nextO := map[dk]int{}
	var sumDYTD int64
	for _, r := range d.rows[DistrictTable] {
		di := d.int(t, DistrictTable, r, "d_id")
		dYTD[di] = d.money(t, DistrictTable, r, "d_ytd")
		sumDYTD += dYTD[di]
		nextO[di] = d.int(t, DistrictTable, r, "d_next_o_id")
	}
	maxO, olSum, orders := map[dk]int{}, map[dk]int{}, map[dk]int{}
	carrierNull := map[ok]bool{}
	olCnt := map[ok]int{}
	owner := map[ok]int{}
	for _, r := range d.rows[OrdersTable] {
		di, o := d.int(t, OrdersTable, r, "o_d_id"), d.int(t, OrdersTable, r, "o_id")
		maxO[di] = max(maxO[di], o)
		n := d.int(t, OrdersTable, r, "o_ol_cnt")
		olSum[di] += n
		orders[di]++
		carrierNull[ok{di, o}] = d.col(t, OrdersTable, r, "o_carrier_id") == `\N`
		olCnt[ok{di, o}] = n
		owner[ok{di, o}] = d.int(t, OrdersTable, r, "o_c_id")
	}
	maxNO, minNO, countNO := map[dk]int{}, map[dk]int{}, map[dk]int{}
	hasNO := map[ok]bool{}
	for _, r := range d.rows[NewOrderTable] {
		di, o := d.int(t, NewOrderTable, r, "no_d_id"), d.int(t, NewOrderTable, r, "no_o_id")
		if countNO[di] == 0 || o < minNO[di] {
			minNO[di] = o
		}
		maxNO[di] = max(maxNO[di], o)
		countNO[di]++
		hasNO[ok{di, o}] = true
	}
	olRows := map[dk]int{}
	olPerOrder := map[ok]int{}
	delivered := map[ck]int64{}
	for _, r := range d.rows[OrderLineTable] {
		di, o := d.int(t, OrderLineTable, r, "ol_d_id"), d.int(t, OrderLineTable, r, "ol_o_id")
		olRows[di]++
		olPerOrder[ok{di, o}]++
		isNull := d.col(t, OrderLineTable, r, "ol_delivery_d") == `\N`
		if isNull != carrierNull[ok{di, o}] {
			t.Errorf("3.3.2.7: order (%d, %d) ol_delivery_d null %v, o_carrier_id null %v", di, o, isNull, carrierNull[ok{di, o}])
		}
		if !isNull {
			delivered[ck{di, owner[ok{di, o}]}] += d.money(t, OrderLineTable, r, "ol_amount")
		}
	}
	paidW := int64(0)
	paidD := map[dk]int64{}
	paidC := map[ck]int64{}
	for _, r := range d.rows[HistoryTable] {
		a := d.money(t, HistoryTable, r, "h_amount")
		paidW += a
		paidD[d.int(t, HistoryTable, r, "h_d_id")] += a
		paidC[ck{d.int(t, HistoryTable, r, "h_c_d_id"), d.int(t, HistoryTable, r, "h_c_id")}] += a
	}

	if wYTD != sumDYTD {
		t.Errorf("3.3.2.1: w_ytd %d != sum(d_ytd) %d", wYTD, sumDYTD)
	}
	if wYTD != paidW {
		t.Errorf("3.3.2.8: w_ytd %d != sum(h_amount) %d", wYTD, paidW)
	}
	for di := 1; di <= DistrictsPerWarehouse; di++ {
		if nextO[di]-1 != maxO[di] || maxO[di] != maxNO[di] {
			t.Errorf("3.3.2.2 district %d: d_next_o_id-1 %d, max(o_id) %d, max(no_o_id) %d", di, nextO[di]-1, maxO[di], maxNO[di])
		}
		if maxNO[di]-minNO[di]+1 != countNO[di] {
			t.Errorf("3.3.2.3 district %d: new_order ids %d..%d, %d rows", di, minNO[di], maxNO[di], countNO[di])
		}
		if olSum[di] != olRows[di] {
			t.Errorf("3.3.2.4 district %d: sum(o_ol_cnt) %d, order_line rows %d", di, olSum[di], olRows[di])
		}
		if dYTD[di] != paidD[di] {
			t.Errorf("3.3.2.9 district %d: d_ytd %d, sum(h_amount) %d", di, dYTD[di], paidD[di])
		}
		if orders[di]-countNO[di] != 2100 {
			t.Errorf("3.3.2.11 district %d: orders %d - new_orders %d != 2100", di, orders[di], countNO[di])
		}
	}
	for k, isNull := range carrierNull {
		if isNull != hasNO[k] {
			t.Errorf("3.3.2.5: order %v o_carrier_id null %v, new_order row %v", k, isNull, hasNO[k])
		}
		if olCnt[k] != olPerOrder[k] {
			t.Errorf("3.3.2.6: order %v o_ol_cnt %d, %d lines", k, olCnt[k], olPerOrder[k])
		}
	}
	for _, r := range d.rows[CustomerTable] {
		k := ck{d.int(t, CustomerTable, r, "c_d_id"), d.int(t, CustomerTable, r, "c_id")}
		bal, ytd := d.money(t, CustomerTable, r, "c_balance"), d.money(t, CustomerTable, r, "c_ytd_payment")
		if bal != delivered[k]-paidC[k] {
			t.Fatalf("3.3.2.10: customer %v c_balance %d, delivered %d - paid %d", k, bal, delivered[k], paidC[k])
		}
		if bal+ytd != delivered[k] {
			t.Fatalf("3.3.2.12: customer %v c_balance %d + c_ytd_payment %d != delivered %d", k, bal, ytd, delivered[k])
		}
	}
}

func hashItems(t *testing.T, g *Generator) [32]byte {
	h := sha256.New()
	if _, err := g.WriteItems(h); err != nil {
		t.Fatal(err)
	}
	return [32]byte(h.Sum(nil))
}

func hashTable(t *testing.T, wh *Warehouse, tb Table) [32]byte {
	h := sha256.New()
	if _, err := wh.Write(tb, h); err != nil {
		t.Fatal(err)
	}
	return [32]byte(h.Sum(nil))
}

// TestGeneratorDeterministic: the same seed and time give the same bytes, also when
// the warehouse is prepared by another Generator and tables are written in another
// order; another seed gives other bytes for every table with random content.
func TestGeneratorDeterministic(t *testing.T) {
	d := generated(t)
	same := NewGenerator(genSeed, genTime.UTC())
	other := NewGenerator(genSeed+1, genTime)
	whSame, whOther := same.Warehouse(genWID), other.Warehouse(genWID)
	t.Run("item", func(t *testing.T) {
		t.Parallel()
		if hashItems(t, same) != sha256.Sum256(d.raw[ItemTable]) {
			t.Error("item: same seed and time, different bytes")
		}
		if hashItems(t, other) == sha256.Sum256(d.raw[ItemTable]) {
			t.Error("item: different seed, same bytes")
		}
	})
	for _, tb := range slices.Backward(WarehouseTables) {
		t.Run(tb.String(), func(t *testing.T) {
			t.Parallel()
			want := sha256.Sum256(d.raw[tb])
			if hashTable(t, whSame, tb) != want {
				t.Errorf("%s: same seed and time, different bytes", tb)
			}
			// Writing twice from the same Warehouse gives the same bytes too.
			if tb == DistrictTable && hashTable(t, whSame, tb) != want {
				t.Errorf("%s: second write differs", tb)
			}
			otherSum := hashTable(t, whOther, tb)
			if tb == NewOrderTable {
				if otherSum != want {
					t.Error("new_order has no random content, yet depends on the seed")
				}
			} else if otherSum == want {
				t.Errorf("%s: different seed, same bytes", tb)
			}
		})
	}
}

// TestGeneratorTimeOnlyChangesStamps: another load time changes the timestamps only.
func TestGeneratorTimeOnlyChangesStamps(t *testing.T) {
	d := generated(t)
	later := NewGenerator(genSeed, genTime.Add(36*time.Hour+time.Second))
	var buf bytes.Buffer
	if _, err := later.Warehouse(genWID).Write(HistoryTable, &buf); err != nil {
		t.Fatal(err)
	}
	rows, err := splitRows(HistoryTable, buf.String())
	if err != nil {
		t.Fatal(err)
	}
	dateCol := d.colIdx[HistoryTable]["h_date"]
	for i, r := range rows {
		for j := range r {
			if j == dateCol {
				if r[j] != "2024-05-19 00:45:31" {
					t.Fatalf("h_date %q, want 2024-05-19 00:45:31", r[j])
				}
			} else if r[j] != d.rows[HistoryTable][i][j] {
				t.Fatalf("history row %d column %d changed with the load time: %q vs %q", i+1, j, r[j], d.rows[HistoryTable][i][j])
			}
		}
	}
}

// TestGeneratorOtherWarehouse: warehouse 2 has its own ids and its own random data.
func TestGeneratorOtherWarehouse(t *testing.T) {
	d := generated(t)
	wh := NewGenerator(genSeed, genTime).Warehouse(2)
	for _, tb := range []Table{WarehouseTable, DistrictTable, NewOrderTable} {
		var buf bytes.Buffer
		if _, err := wh.Write(tb, &buf); err != nil {
			t.Fatal(err)
		}
		rows, err := splitRows(tb, buf.String())
		if err != nil {
			t.Fatal(err)
		}
		if len(rows) != len(d.rows[tb]) {
			t.Fatalf("%s: %d rows for warehouse 2, %d for warehouse 1", tb, len(rows), len(d.rows[tb]))
		}
		wcol := map[Table]string{WarehouseTable: "w_id", DistrictTable: "d_w_id", NewOrderTable: "no_w_id"}[tb]
		for _, r := range rows {
			d.eq(t, tb, r, wcol, "2")
		}
		if tb != NewOrderTable && bytes.Equal(buf.Bytes(), bytes.ReplaceAll(d.raw[tb], []byte("\t1\t"), []byte("\t2\t"))) {
			t.Errorf("%s: warehouse 2 repeats warehouse 1's random data", tb)
		}
	}
}

type failingWriter struct{ n int }

func (w *failingWriter) Write(p []byte) (int, error) {
	w.n++
	return 0, errors.New("disk full")
}

func TestGeneratorWriteErrors(t *testing.T) {
	g := NewGenerator(1, genTime)
	if n, err := g.WriteItems(&failingWriter{}); err == nil || n >= Items {
		t.Errorf("WriteItems to a failing writer: %d rows, err %v", n, err)
	}
	wh := g.Warehouse(1)
	for _, tb := range WarehouseTables {
		fw := &failingWriter{}
		n, err := wh.Write(tb, fw)
		if err == nil || fw.n != 1 {
			t.Errorf("%s to a failing writer: %d rows, err %v, %d writes (want an error after the first)", tb, n, err, fw.n)
		}
	}
}

func TestWarehouseWritePanicsOnItem(t *testing.T) {
	defer func() {
		if recover() == nil {
			t.Error("Warehouse.Write(ItemTable) did not panic")
		}
	}()
	NewGenerator(1, genTime).Warehouse(1).Write(ItemTable, &bytes.Buffer{})
}
