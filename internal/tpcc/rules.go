package tpcc

import (
	"strings"

	"github.com/storbench/storbench/internal/input"
)

// InputRules say where a run's inputs depart from the spec's: not at all (the spec's
// own), or as HammerDB 4.12's TPROC-C does, so that a run can be set beside figures
// published from HammerDB. Each field is one difference; the generator and the driver
// read the fields, never the name.
type InputRules struct {
	Name string
	// What is the one-line description the help and errors give.
	What string
	// UniformIDs: New-Order's customer and item ids and the by-id customer of Payment
	// and Order-Status are uniform over their range instead of NURand (2.1.6). By-name
	// customers keep NURand and the run's C.
	UniformIDs bool
	// RandomHomes: each user's home warehouse is drawn at random when it starts, so
	// several may share one, instead of one per user in turn.
	RandomHomes bool
	// RandomStockLevelDistrict: Stock-Level's district is drawn per call instead of
	// being the user's own (2.8.1.1).
	RandomStockLevelDistrict bool
	// Paces are the keying and mean think times used when they are on; the 90th
	// percentile limits stay the spec's.
	Paces [NumTransactions]Pacing
	// NOPMCountsUnusedItem: the tool's NOPM counts the 1% of New-Orders given an
	// unused item: it commits them (Δ sum(d_next_o_id)) where the spec rolls them back.
	// The run still rolls them back; the result adds the figure the tool would show.
	NOPMCountsUnusedItem bool
}

// Names of the input rules.
const (
	SpecInputs     = "spec"
	HammerDBInputs = "hammerdb"
)

// inputRules are every rule set, the spec's first.
var inputRules = []*InputRules{
	{Name: SpecInputs, What: "the TPC-C spec's", Paces: Paces},
	{
		Name: HammerDBInputs, What: "HammerDB 4.12's TPROC-C",
		UniformIDs: true, RandomHomes: true, RandomStockLevelDistrict: true, NOPMCountsUnusedItem: true,
		// HammerDB swaps the think times of Order-Status and Delivery.
		Paces: [NumTransactions]Pacing{
			NewOrder:    {Keying: 18, MeanThink: 12, P90Limit: Paces[NewOrder].P90Limit},
			Payment:     {Keying: 3, MeanThink: 12, P90Limit: Paces[Payment].P90Limit},
			OrderStatus: {Keying: 2, MeanThink: 5, P90Limit: Paces[OrderStatus].P90Limit},
			Delivery:    {Keying: 2, MeanThink: 10, P90Limit: Paces[Delivery].P90Limit},
			StockLevel:  {Keying: 2, MeanThink: 5, P90Limit: Paces[StockLevel].P90Limit},
		},
	},
}

// ParseInputs returns the input rules called name.
func ParseInputs(name string) (*InputRules, error) {
	var choices []string
	for _, r := range inputRules {
		if r.Name == name {
			return r, nil
		}
		choices = append(choices, r.Name+", "+r.What)
	}
	return nil, input.Errorf("inputs", "{inputs} %q is unknown (use %s)", name, strings.Join(choices, ", or "))
}

// Home is a user's home warehouse and its fixed Stock-Level district: one per user in
// turn (user counts from 0), or, with RandomHomes, a warehouse drawn from r.
func (rules *InputRules) Home(r *Rand, user, warehouses int) (home, district int) {
	home = user%warehouses + 1
	if rules.RandomHomes {
		home = r.Int(1, warehouses)
	}
	return home, (user/warehouses)%DistrictsPerWarehouse + 1
}
