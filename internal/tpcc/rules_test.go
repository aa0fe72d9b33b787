package tpcc

import (
	"strings"
	"testing"
)

// idDraws draws the ids the rules decide: New-Order's customers and items, and the
// by-id customers of Payment and Order-Status, as histograms indexed by id-1.
func idDraws(rules *InputRules, newOrders, others int) (noCID, items, payCID, osCID []int) {
	in := NewInputsOf(rules, NewRand(77, 1), testRunConstants, 4)
	noCID, items = make([]int, CustomersPerDistrict), make([]int, Items)
	payCID, osCID = make([]int, CustomersPerDistrict), make([]int, CustomersPerDistrict)
	var no NewOrderInput
	for range newOrders {
		in.NewOrder(1, &no)
		noCID[no.CID-1]++
		for _, l := range no.Lines {
			if l.ItemID != UnusedItemID {
				items[l.ItemID-1]++
			}
		}
	}
	var p PaymentInput
	var o OrderStatusInput
	for range others {
		in.Payment(1, &p)
		if !p.ByName {
			payCID[p.CID-1]++
		}
		in.OrderStatus(1, &o)
		if !o.ByName {
			osCID[o.CID-1]++
		}
	}
	return noCID, items, payCID, osCID
}

// TestHammerDBIDsUniform checks HammerDB's rules draw customer and item ids uniformly
// where the spec's draw them with NURand: each histogram is near the uniform law and
// far from the NURand law of the run's C, and the spec's the other way round.
func TestHammerDBIDsUniform(t *testing.T) {
	hammerdb, err := ParseInputs(HammerDBInputs)
	if err != nil {
		t.Fatal(err)
	}
	spec, err := ParseInputs(SpecInputs)
	if err != nil {
		t.Fatal(err)
	}
	// 100000 New-Orders give about a million item ids: 10 per id, so a uniform
	// histogram's distance to the uniform law is about 0.13 from sampling alone.
	const newOrders, others = 100000, 500000
	cidLaw := nurandPMF(t, ACID, 1, CustomersPerDistrict, testRunConstants.CID)
	itemLaw := nurandPMF(t, AItemID, 1, Items, testRunConstants.ItemID)
	hNO, hItems, hPay, hOS := idDraws(hammerdb, newOrders, others)
	sNO, sItems, sPay, sOS := idDraws(spec, newOrders, others)
	for _, c := range []struct {
		name     string
		hdb, spc []int
		law      []float64
		noise    float64
	}{
		{"new-order c_id", hNO, sNO, cidLaw, 0.08},
		{"ol_i_id", hItems, sItems, itemLaw, 0.15},
		{"payment c_id (by id)", hPay, sPay, cidLaw, 0.08},
		{"order-status c_id (by id)", hOS, sOS, cidLaw, 0.08},
	} {
		uniform := uniformPMF(len(c.law))
		if d := tvd(c.hdb, uniform); d > c.noise {
			t.Errorf("hammerdb %s: distance to uniform %.3f, want <= %.2f", c.name, d, c.noise)
		}
		if d := tvd(c.hdb, c.law); d < 0.3 {
			t.Errorf("hammerdb %s: distance to NURand %.3f, want >= 0.3 (HammerDB draws it uniformly)", c.name, d)
		}
		if d := tvd(c.spc, uniform); d < 0.3 {
			t.Errorf("spec %s: distance to uniform %.3f, want >= 0.3 (NURand, 2.1.6)", c.name, d)
		}
	}
}

// TestHammerDBByNameKeepsNURand checks by-name customers stay NURand with the run's
// C under HammerDB's rules: the same draws as the spec's rules would make.
func TestHammerDBByNameKeepsNURand(t *testing.T) {
	hammerdb, _ := ParseInputs(HammerDBInputs)
	in := NewInputsOf(hammerdb, NewRand(5, 5), testRunConstants, 1)
	names := make([]int, 1000)
	num := map[string]int{}
	for n := range 1000 {
		num[LastName(n)] = n
	}
	var p PaymentInput
	for range 200000 {
		in.Payment(1, &p)
		if p.ByName {
			names[num[p.CLast]]++
		}
	}
	if d := tvd(names, nurandPMF(t, ALast, 0, 999, testRunConstants.CLast)); d > 0.08 {
		t.Errorf("by-name c_last: distance to NURand(255) with the run's C %.3f, want <= 0.08", d)
	}
}

// TestStockLevelDistrictRule checks the spec's Stock-Level keeps the user's district
// (2.8.1.1) and HammerDB's draws one per call.
func TestStockLevelDistrictRule(t *testing.T) {
	for _, c := range []struct {
		rules     string
		districts int
	}{{SpecInputs, 1}, {HammerDBInputs, DistrictsPerWarehouse}} {
		rules, _ := ParseInputs(c.rules)
		in := NewInputsOf(rules, NewRand(3, 3), testRunConstants, 2)
		seen := map[int]bool{}
		var s StockLevelInput
		for range 1000 {
			in.StockLevel(2, 7, &s)
			if s.WID != 2 || s.DID < 1 || s.DID > DistrictsPerWarehouse {
				t.Fatalf("%s: stock-level %+v for warehouse 2", c.rules, s)
			}
			seen[s.DID] = true
		}
		if len(seen) != c.districts {
			t.Errorf("%s: %d distinct Stock-Level districts in 1000 calls, want %d", c.rules, len(seen), c.districts)
		}
	}
}

// TestHomeRule checks the spec's homes are one warehouse per user in turn and
// HammerDB's are drawn at random, so that several users can share one and some
// warehouses have none.
func TestHomeRule(t *testing.T) {
	const users, warehouses = 10, 10
	for _, c := range []struct {
		rules  string
		random bool
	}{{SpecInputs, false}, {HammerDBInputs, true}} {
		rules, _ := ParseInputs(c.rules)
		count := map[int]int{}
		inTurn := true
		for u := range users {
			home, district := rules.Home(RunRand(11, u+1), u, warehouses)
			if home < 1 || home > warehouses || district < 1 || district > DistrictsPerWarehouse {
				t.Fatalf("%s: user %d home %d district %d", c.rules, u, home, district)
			}
			count[home]++
			inTurn = inTurn && home == u+1
		}
		if inTurn == c.random || (len(count) < warehouses) != c.random {
			t.Errorf("%s: homes %v of %d users on %d warehouses, want random %v", c.rules, count, users, warehouses, c.random)
		}
	}
}

func TestParseInputs(t *testing.T) {
	for _, name := range []string{SpecInputs, HammerDBInputs} {
		if r, err := ParseInputs(name); err != nil || r.Name != name {
			t.Errorf("ParseInputs(%q) = %v, %v", name, r, err)
		}
	}
	_, err := ParseInputs("tpcc")
	if err == nil || !strings.Contains(err.Error(), `inputs "tpcc" is unknown`) || !strings.Contains(err.Error(), "hammerdb") {
		t.Errorf("ParseInputs(tpcc) error %v, want it unknown with the choices", err)
	}
	// The spec's pacing is 5.2.5.7's; HammerDB's swaps Order-Status's and Delivery's think times.
	spec, _ := ParseInputs(SpecInputs)
	hammerdb, _ := ParseInputs(HammerDBInputs)
	if spec.Paces != Paces {
		t.Errorf("spec paces %v, want %v", spec.Paces, Paces)
	}
	if hammerdb.Paces[OrderStatus].MeanThink != 5 || hammerdb.Paces[Delivery].MeanThink != 10 || hammerdb.Paces[NewOrder].Keying != 18 {
		t.Errorf("hammerdb paces %v, want NO 18/12, P 3/12, D 2/10, SL 2/5, OS 2/5", hammerdb.Paces)
	}
}
