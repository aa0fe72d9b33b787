package tpcc

import (
	"io"
	"strconv"
	"time"
)

// Table names a TPC-C table. Its columns, in Columns order, are the order in which
// the generator writes them.
type Table int

const (
	ItemTable Table = iota
	WarehouseTable
	DistrictTable
	CustomerTable
	HistoryTable
	OrdersTable
	NewOrderTable
	OrderLineTable
	StockTable
	numTables
)

// Tables lists every table in load order.
var Tables = []Table{ItemTable, WarehouseTable, DistrictTable, CustomerTable, HistoryTable,
	OrdersTable, NewOrderTable, OrderLineTable, StockTable}

// WarehouseTables lists the tables that grow with the warehouse count.
var WarehouseTables = Tables[1:]

var tableNames = [numTables]string{"item", "warehouse", "district", "customer", "history",
	"orders", "new_order", "order_line", "stock"}

// String returns the spec's table name (1.3.1).
func (t Table) String() string { return tableNames[t] }

// Columns returns the spec's column names in generation order (1.3.1).
func (t Table) Columns() []string { return tableColumns[t] }

var tableColumns = [numTables][]string{
	ItemTable:      {"i_id", "i_im_id", "i_name", "i_price", "i_data"},
	WarehouseTable: {"w_id", "w_name", "w_street_1", "w_street_2", "w_city", "w_state", "w_zip", "w_tax", "w_ytd"},
	DistrictTable: {"d_id", "d_w_id", "d_name", "d_street_1", "d_street_2", "d_city", "d_state", "d_zip",
		"d_tax", "d_ytd", "d_next_o_id"},
	CustomerTable: {"c_id", "c_d_id", "c_w_id", "c_first", "c_middle", "c_last", "c_street_1", "c_street_2",
		"c_city", "c_state", "c_zip", "c_phone", "c_since", "c_credit", "c_credit_lim", "c_discount",
		"c_balance", "c_ytd_payment", "c_payment_cnt", "c_delivery_cnt", "c_data"},
	HistoryTable:   {"h_c_id", "h_c_d_id", "h_c_w_id", "h_d_id", "h_w_id", "h_date", "h_amount", "h_data"},
	OrdersTable:    {"o_id", "o_d_id", "o_w_id", "o_c_id", "o_entry_d", "o_carrier_id", "o_ol_cnt", "o_all_local"},
	NewOrderTable:  {"no_o_id", "no_d_id", "no_w_id"},
	OrderLineTable: {"ol_o_id", "ol_d_id", "ol_w_id", "ol_number", "ol_i_id", "ol_supply_w_id", "ol_delivery_d", "ol_quantity", "ol_amount", "ol_dist_info"},
	StockTable: {"s_i_id", "s_w_id", "s_quantity", "s_dist_01", "s_dist_02", "s_dist_03", "s_dist_04",
		"s_dist_05", "s_dist_06", "s_dist_07", "s_dist_08", "s_dist_09", "s_dist_10", "s_ytd",
		"s_order_cnt", "s_remote_cnt", "s_data"},
}

// RowsPerWarehouse is each table's initial row count for one warehouse; order_line is
// the expected value (10 lines per order on average).
var RowsPerWarehouse = [numTables]int64{
	ItemTable:      0,
	WarehouseTable: 1,
	DistrictTable:  DistrictsPerWarehouse,
	CustomerTable:  DistrictsPerWarehouse * CustomersPerDistrict,
	HistoryTable:   DistrictsPerWarehouse * CustomersPerDistrict,
	OrdersTable:    DistrictsPerWarehouse * OrdersPerDistrict,
	NewOrderTable:  DistrictsPerWarehouse * NewOrdersPerDistrict,
	OrderLineTable: DistrictsPerWarehouse * OrdersPerDistrict * 10,
	StockTable:     StockPerWarehouse,
}

// Generator writes the initial database (4.3.3.1) as text rows: columns separated by a
// tab, NULL as \N, one row per line. PostgreSQL's COPY and MySQL's LOAD DATA read this
// format as it is, and no generated value needs escaping (alphanumeric strings only).
// The same seed and timestamp give the same bytes.
type Generator struct {
	Seed      uint64
	Constants Constants // C-Load values (LoadConstants(Seed))
	stamp     []byte    // c_since, h_date, o_entry_d, ol_delivery_d
}

// NewGenerator returns a generator whose timestamps are all `now` (the spec's "current
// date and time" of the load).
func NewGenerator(seed uint64, now time.Time) *Generator {
	return &Generator{
		Seed:      seed,
		Constants: LoadConstants(seed),
		stamp:     now.UTC().AppendFormat(nil, "2006-01-02 15:04:05"),
	}
}

// WriteItems writes the item table (once per database).
func (g *Generator) WriteItems(out io.Writer) (int64, error) {
	r := NewRand(g.Seed, streamItem)
	w := newRowWriter(out)
	for i := 1; i <= Items; i++ {
		w.int(i)
		w.int(r.Int(1, 10000))
		w.b = r.AppendAString(w.b, 14, 24)
		w.tab()
		w.cents(int64(r.Int(100, 10000)))
		w.b = r.AppendData(w.b)
		if err := w.endRow(); err != nil {
			return w.rows, err
		}
	}
	return w.rows, w.flush()
}

// Warehouse holds what several tables of one warehouse must agree on: each district's
// o_c_id permutation and o_ol_cnt per order (orders and order_line must match).
type Warehouse struct {
	g     *Generator
	id    int
	cIDs  [DistrictsPerWarehouse][]int
	lines [DistrictsPerWarehouse][OrdersPerDistrict]uint8
}

// Warehouse prepares warehouse w for generation.
func (g *Generator) Warehouse(w int) *Warehouse {
	wh := &Warehouse{g: g, id: w}
	r := wh.rand(numTables) // its own stream, after the per-table ones
	for d := range wh.cIDs {
		wh.cIDs[d] = r.Perm(CustomersPerDistrict)
		for o := range wh.lines[d] {
			wh.lines[d][o] = uint8(r.Int(MinOrderLines, MaxOrderLines))
		}
	}
	return wh
}

func (wh *Warehouse) rand(t Table) *Rand {
	return NewRand(wh.g.Seed, streamWarehouseBase+uint64(wh.id)*(uint64(numTables)+1)+uint64(t))
}

// Write writes table t's rows of this warehouse and returns how many it wrote.
func (wh *Warehouse) Write(t Table, out io.Writer) (int64, error) {
	w := newRowWriter(out)
	r := wh.rand(t)
	var err error
	switch t {
	case WarehouseTable:
		err = wh.writeWarehouse(w, r)
	case DistrictTable:
		err = wh.writeDistricts(w, r)
	case CustomerTable:
		err = wh.writeCustomers(w, r)
	case HistoryTable:
		err = wh.writeHistory(w, r)
	case OrdersTable:
		err = wh.writeOrders(w, r)
	case NewOrderTable:
		err = wh.writeNewOrders(w)
	case OrderLineTable:
		err = wh.writeOrderLines(w, r)
	case StockTable:
		err = wh.writeStock(w, r)
	default:
		panic("tpcc: " + t.String() + " is not a warehouse table")
	}
	if err != nil {
		return w.rows, err
	}
	return w.rows, w.flush()
}

// address appends street_1, street_2, city, state, zip (4.3.3.1).
func address(w *rowWriter, r *Rand) {
	for range 3 {
		w.b = r.AppendAString(w.b, 10, 20)
		w.tab()
	}
	w.b = r.AppendLetters(w.b, 2)
	w.tab()
	w.b = r.AppendZip(w.b)
	w.tab()
}

func (wh *Warehouse) writeWarehouse(w *rowWriter, r *Rand) error {
	w.int(wh.id)
	w.b = r.AppendAString(w.b, 6, 10)
	w.tab()
	address(w, r)
	w.fraction4(r.Int(0, 2000))
	w.cents(WarehouseYTDCents)
	return w.endRow()
}

func (wh *Warehouse) writeDistricts(w *rowWriter, r *Rand) error {
	for d := 1; d <= DistrictsPerWarehouse; d++ {
		w.int(d)
		w.int(wh.id)
		w.b = r.AppendAString(w.b, 6, 10)
		w.tab()
		address(w, r)
		w.fraction4(r.Int(0, 2000))
		w.cents(DistrictYTDCents)
		w.b = strconv.AppendInt(w.b, OrdersPerDistrict+1, 10)
		if err := w.endRow(); err != nil {
			return err
		}
	}
	return nil
}

func (wh *Warehouse) writeCustomers(w *rowWriter, r *Rand) error {
	for d := 1; d <= DistrictsPerWarehouse; d++ {
		for c := 1; c <= CustomersPerDistrict; c++ {
			w.int(c)
			w.int(d)
			w.int(wh.id)
			w.b = r.AppendAString(w.b, 8, 16)
			w.b = append(w.b, "\tOE\t"...)
			// 4.3.2.3: the first 1000 customers take every name once, the rest NURand.
			name := c - 1
			if c > 1000 {
				name = r.NURand(ALast, 0, 999, wh.g.Constants.CLast)
			}
			w.b = AppendLastName(w.b, name)
			w.tab()
			address(w, r)
			w.b = r.AppendNString(w.b, 16, 16)
			w.tab()
			w.stamp(wh.g.stamp)
			if r.Percent(10) { // 4.3.3.1: 10% bad credit
				w.b = append(w.b, "BC\t"...)
			} else {
				w.b = append(w.b, "GC\t"...)
			}
			w.cents(5000000)
			w.fraction4(r.Int(0, 5000))
			w.cents(-1000) // c_balance -10.00
			w.cents(1000)  // c_ytd_payment 10.00
			w.b = append(w.b, "1\t0\t"...)
			w.b = r.AppendAString(w.b, 300, 500)
			if err := w.endRow(); err != nil {
				return err
			}
		}
	}
	return nil
}

func (wh *Warehouse) writeHistory(w *rowWriter, r *Rand) error {
	for d := 1; d <= DistrictsPerWarehouse; d++ {
		for c := 1; c <= CustomersPerDistrict; c++ {
			w.int(c)
			w.int(d)
			w.int(wh.id)
			w.int(d)
			w.int(wh.id)
			w.stamp(wh.g.stamp)
			w.cents(HistoryCents)
			w.b = r.AppendAString(w.b, 12, 24)
			if err := w.endRow(); err != nil {
				return err
			}
		}
	}
	return nil
}

func (wh *Warehouse) writeOrders(w *rowWriter, r *Rand) error {
	for d := 1; d <= DistrictsPerWarehouse; d++ {
		for o := 1; o <= OrdersPerDistrict; o++ {
			w.int(o)
			w.int(d)
			w.int(wh.id)
			w.int(wh.cIDs[d-1][o-1])
			w.stamp(wh.g.stamp)
			if o < FirstUndeliveredOrder {
				w.int(r.Int(1, 10))
			} else {
				w.null()
			}
			w.int(int(wh.lines[d-1][o-1]))
			w.b = append(w.b, '1')
			if err := w.endRow(); err != nil {
				return err
			}
		}
	}
	return nil
}

func (wh *Warehouse) writeNewOrders(w *rowWriter) error {
	for d := 1; d <= DistrictsPerWarehouse; d++ {
		for o := FirstUndeliveredOrder; o <= OrdersPerDistrict; o++ {
			w.int(o)
			w.int(d)
			w.b = strconv.AppendInt(w.b, int64(wh.id), 10)
			if err := w.endRow(); err != nil {
				return err
			}
		}
	}
	return nil
}

func (wh *Warehouse) writeOrderLines(w *rowWriter, r *Rand) error {
	for d := 1; d <= DistrictsPerWarehouse; d++ {
		for o := 1; o <= OrdersPerDistrict; o++ {
			delivered := o < FirstUndeliveredOrder
			for n := 1; n <= int(wh.lines[d-1][o-1]); n++ {
				w.int(o)
				w.int(d)
				w.int(wh.id)
				w.int(n)
				w.int(r.Int(1, Items))
				w.int(wh.id)
				if delivered {
					w.stamp(wh.g.stamp)
				} else {
					w.null()
				}
				w.b = append(w.b, "5\t"...)
				if delivered {
					w.cents(0)
				} else {
					w.cents(int64(r.Int(1, 999999)))
				}
				w.b = r.AppendLetters(w.b, 24)
				if err := w.endRow(); err != nil {
					return err
				}
			}
		}
	}
	return nil
}

func (wh *Warehouse) writeStock(w *rowWriter, r *Rand) error {
	for i := 1; i <= StockPerWarehouse; i++ {
		w.int(i)
		w.int(wh.id)
		w.int(r.Int(10, 100))
		for range DistrictsPerWarehouse {
			w.b = r.AppendLetters(w.b, 24)
			w.tab()
		}
		w.b = append(w.b, "0\t0\t0\t"...)
		w.b = r.AppendData(w.b)
		if err := w.endRow(); err != nil {
			return err
		}
	}
	return nil
}

// rowWriter builds text rows in a buffer and hands the writer large chunks.
type rowWriter struct {
	out  io.Writer
	b    []byte
	rows int64
}

const rowChunk = 256 << 10

func newRowWriter(out io.Writer) *rowWriter {
	return &rowWriter{out: out, b: make([]byte, 0, rowChunk+4096)}
}

func (w *rowWriter) tab() { w.b = append(w.b, '\t') }

func (w *rowWriter) int(v int) {
	w.b = strconv.AppendInt(w.b, int64(v), 10)
	w.tab()
}

func (w *rowWriter) null() { w.b = append(w.b, `\N`+"\t"...) }

func (w *rowWriter) stamp(s []byte) {
	w.b = append(w.b, s...)
	w.tab()
}

// cents writes an exact money value with two decimals.
func (w *rowWriter) cents(c int64) {
	w.b = AppendCents(w.b, c)
	w.tab()
}

// fraction4 writes v/10000 with four decimals (taxes and discounts are numeric(4,4)).
func (w *rowWriter) fraction4(v int) {
	w.b = append(w.b, '0', '.')
	w.b = append(w.b, byte('0'+v/1000%10), byte('0'+v/100%10), byte('0'+v/10%10), byte('0'+v%10))
	w.tab()
}

// endRow replaces the trailing tab with a newline and flushes a full chunk.
func (w *rowWriter) endRow() error {
	if n := len(w.b); n > 0 && w.b[n-1] == '\t' {
		w.b = w.b[:n-1]
	}
	w.b = append(w.b, '\n')
	w.rows++
	if len(w.b) >= rowChunk {
		return w.flush()
	}
	return nil
}

func (w *rowWriter) flush() error {
	if len(w.b) == 0 {
		return nil
	}
	_, err := w.out.Write(w.b)
	w.b = w.b[:0]
	return err
}

// AppendCents appends c/100 with exactly two decimals ("-10.00", "0.05").
func AppendCents(b []byte, c int64) []byte {
	if c < 0 {
		b = append(b, '-')
		c = -c
	}
	b = strconv.AppendInt(b, c/100, 10)
	return append(b, '.', byte('0'+c/10%10), byte('0'+c%10))
}
