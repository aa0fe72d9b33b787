package tpcc

import "strings"

// The inputs of each transaction, drawn by Inputs per the spec so that every engine
// and mode executes exactly the same work; the engine only runs them.

// OrderLine is one line of a New-Order (2.4.1.5).
type OrderLine struct {
	ItemID, SupplyWID, Quantity int
	// BrandGeneric is an output, set by the engine when the New-Order commits (2.4.2.2):
	// 'B' when both i_data and s_data contain "ORIGINAL", else 'G'.
	BrandGeneric byte
}

// Original is the marker whose presence in both i_data and s_data makes a line's
// brand-generic 'B' (2.4.2.2).
const Original = "ORIGINAL"

// BrandGeneric is a line's brand-generic from its item's and stock's data (2.4.2.2).
func BrandGeneric(iData, sData string) byte {
	if strings.Contains(iData, Original) && strings.Contains(sData, Original) {
		return 'B'
	}
	return 'G'
}

// SetBrands sets the lines' brand-generic from a bit mask, bit i for line i: the form
// the stored procedures return it in.
func (in *NewOrderInput) SetBrands(mask int64) {
	for i := range in.Lines {
		in.Lines[i].BrandGeneric = 'G'
		if mask&(1<<i) != 0 {
			in.Lines[i].BrandGeneric = 'B'
		}
	}
}

// NewOrderInput is a New-Order's input (2.4.1).
type NewOrderInput struct {
	WID, DID, CID int
	Lines         []OrderLine
	// Rollback is set when the last line carries an unused item id: the transaction
	// must roll back (2.4.1.4) and still counts as a completed New-Order.
	Rollback bool
	AllLocal bool
	Remote   int // lines supplied by another warehouse
}

// LockOrder appends to order the indexes of the lines sorted by (supply warehouse,
// item, position): every New-Order touches its stock rows in this one order, so
// concurrent New-Orders cannot deadlock on engines with row locks. The lines keep
// their input position as ol_number.
func (in *NewOrderInput) LockOrder(order []int) []int {
	start := len(order)
	for i := range in.Lines {
		order = append(order, i)
	}
	sorted := order[start:]
	less := func(a, b int) bool {
		la, lb := &in.Lines[a], &in.Lines[b]
		if la.SupplyWID != lb.SupplyWID {
			return la.SupplyWID < lb.SupplyWID
		}
		if la.ItemID != lb.ItemID {
			return la.ItemID < lb.ItemID
		}
		return a < b
	}
	for i := 1; i < len(sorted); i++ { // insertion sort: at most 15 lines
		for j := i; j > 0 && less(sorted[j], sorted[j-1]); j-- {
			sorted[j], sorted[j-1] = sorted[j-1], sorted[j]
		}
	}
	return order
}

// PaymentInput is a Payment's input (2.5.1).
type PaymentInput struct {
	WID, DID   int // home warehouse and district, where the payment is recorded
	CWID, CDID int // the customer's warehouse and district
	CID        int // when !ByName
	CLast      string
	ByName     bool
	Amount     int64 // cents, 1.00..5000.00
}

// Remote reports whether the customer belongs to another warehouse.
func (p *PaymentInput) Remote() bool { return p.CWID != p.WID }

// OrderStatusInput is an Order-Status's input (2.6.1).
type OrderStatusInput struct {
	WID, DID int
	CID      int
	CLast    string
	ByName   bool
}

// DeliveryInput is a Delivery's input (2.7.1).
type DeliveryInput struct {
	WID, CarrierID int
}

// StockLevelInput is a Stock-Level's input (2.8.1).
type StockLevelInput struct {
	WID, DID, Threshold int
}

// UnusedItemID is the item id of the New-Orders that must roll back (2.4.1.5: "an
// unused value").
const UnusedItemID = Items + 1

// Inputs draws transaction inputs for one virtual user.
type Inputs struct {
	r          *Rand
	c          Constants
	warehouses int
	rules      *InputRules
}

// lastNames is c_last by number, built once and shared by every user (strings are
// immutable): a table of its own in each user cost ~37 KB, most of the driver's heap
// at 1000 users (max RSS 98 MB, 46 MB with the shared table; bench/users.sh).
var lastNames = func() (names [1000]string) {
	for i := range names {
		names[i] = LastName(i)
	}
	return names
}()

// NewInputs returns an input source following the spec. Constants are the run's C
// values (RunConstants), shared by all users; warehouses is the database's warehouse
// count.
func NewInputs(r *Rand, c Constants, warehouses int) *Inputs {
	return NewInputsOf(inputRules[0], r, c, warehouses)
}

// NewInputsOf returns an input source following rules.
func NewInputsOf(rules *InputRules, r *Rand, c Constants, warehouses int) *Inputs {
	return &Inputs{r: r, c: c, warehouses: warehouses, rules: rules}
}

// Rand exposes the user's generator for pacing decisions.
func (in *Inputs) Rand() *Rand { return in.r }

// otherWarehouse picks a warehouse other than home uniformly.
func (in *Inputs) otherWarehouse(home int) int {
	w := in.r.Int(1, in.warehouses-1)
	if w >= home {
		w++
	}
	return w
}

func (in *Inputs) customerID() int {
	if in.rules.UniformIDs {
		return in.r.Int(1, CustomersPerDistrict)
	}
	return in.r.NURand(ACID, 1, CustomersPerDistrict, in.c.CID)
}

func (in *Inputs) itemID() int {
	if in.rules.UniformIDs {
		return in.r.Int(1, Items)
	}
	return in.r.NURand(AItemID, 1, Items, in.c.ItemID)
}

func (in *Inputs) lastName() string { return lastNames[in.r.NURand(ALast, 0, 999, in.c.CLast)] }

// NewOrder fills a New-Order for home warehouse w, reusing in's line slice.
func (in *Inputs) NewOrder(w int, no *NewOrderInput) {
	r := in.r
	no.WID = w
	no.DID = r.Int(1, DistrictsPerWarehouse) // 2.4.1.2
	no.CID = in.customerID()                 // 2.4.1.2
	n := r.Int(MinOrderLines, MaxOrderLines) // 2.4.1.3
	no.Rollback = r.Percent(1)               // 2.4.1.4
	no.Lines = no.Lines[:0]
	no.AllLocal = true
	no.Remote = 0
	for i := range n {
		l := OrderLine{
			ItemID:    in.itemID(), // 2.4.1.5.1
			SupplyWID: w,
			Quantity:  r.Int(1, 10), // 2.4.1.5.3
		}
		if no.Rollback && i == n-1 {
			l.ItemID = UnusedItemID
		}
		// 2.4.1.5.2: 1% of lines come from a remote warehouse, when there is one.
		if in.warehouses > 1 && r.Percent(1) {
			l.SupplyWID = in.otherWarehouse(w)
			no.AllLocal = false
			no.Remote++
		}
		no.Lines = append(no.Lines, l)
	}
}

// Payment fills a Payment for home warehouse w (2.5.1.1, 2.5.1.2).
func (in *Inputs) Payment(w int, p *PaymentInput) {
	r := in.r
	p.WID = w
	p.DID = r.Int(1, DistrictsPerWarehouse)
	// 85% home customer; 15% a random district of a remote warehouse.
	if in.warehouses > 1 && r.Int(1, 100) > 85 {
		p.CWID = in.otherWarehouse(w)
		p.CDID = r.Int(1, DistrictsPerWarehouse)
	} else {
		p.CWID, p.CDID = w, p.DID
	}
	// 60% by last name, 40% by id.
	p.ByName = r.Int(1, 100) <= 60
	p.CID, p.CLast = 0, ""
	if p.ByName {
		p.CLast = in.lastName()
	} else {
		p.CID = in.customerID()
	}
	p.Amount = int64(r.Int(100, 500000))
}

// OrderStatus fills an Order-Status for home warehouse w (2.6.1).
func (in *Inputs) OrderStatus(w int, o *OrderStatusInput) {
	r := in.r
	o.WID = w
	o.DID = r.Int(1, DistrictsPerWarehouse)
	o.ByName = r.Int(1, 100) <= 60
	o.CID, o.CLast = 0, ""
	if o.ByName {
		o.CLast = in.lastName()
	} else {
		o.CID = in.customerID()
	}
}

// Delivery fills a Delivery for home warehouse w (2.7.1).
func (in *Inputs) Delivery(w int, d *DeliveryInput) {
	d.WID = w
	d.CarrierID = in.r.Int(1, 10)
}

// StockLevel fills a Stock-Level for the user's fixed warehouse and district (2.8.1),
// or a district drawn per call when the rules say so.
func (in *Inputs) StockLevel(w, district int, s *StockLevelInput) {
	if in.rules.RandomStockLevelDistrict {
		district = in.r.Int(1, DistrictsPerWarehouse)
	}
	s.WID, s.DID = w, district
	s.Threshold = in.r.Int(10, 20)
}
