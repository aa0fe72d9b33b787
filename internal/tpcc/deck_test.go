package tpcc

import (
	"fmt"
	"testing"
)

var deckCards = [NumTransactions]int{NewOrder: 10, Payment: 10, OrderStatus: 1, Delivery: 1, StockLevel: 1}

// TestDeckPasses deals many passes of 23 cards: each pass holds exactly 10/10/1/1/1
// (5.2.4.2), and the order changes from pass to pass.
func TestDeckPasses(t *testing.T) {
	for _, seed := range []uint64{1, 2, 3} {
		d := NewDeck(NewRand(seed, 1))
		orders := map[string]int{}
		const passes = 500
		for p := range passes {
			var counts [NumTransactions]int
			order := make([]byte, 23)
			for i := range 23 {
				tx := d.Next()
				if tx < 0 || tx >= NumTransactions {
					t.Fatalf("seed %d pass %d: card %d out of range", seed, p, tx)
				}
				counts[tx]++
				order[i] = byte('0' + tx)
			}
			if counts != deckCards {
				t.Fatalf("seed %d pass %d: cards %v, want %v", seed, p, counts, deckCards)
			}
			orders[string(order)]++
		}
		if len(orders) < passes*9/10 {
			t.Errorf("seed %d: only %d distinct orders in %d passes: the deck is not reshuffled", seed, len(orders), passes)
		}
	}
}

// TestDeckFirstPassShuffled: the first pass is not the unshuffled 10 New-Orders then
// 10 Payments, and the position of the single cards varies.
func TestDeckFirstPassShuffled(t *testing.T) {
	var firstAt [NumTransactions]map[int]bool
	for i := range firstAt {
		firstAt[i] = map[int]bool{}
	}
	for seed := range uint64(200) {
		d := NewDeck(NewRand(seed, 7))
		for i := range 23 {
			firstAt[d.Next()][i] = true
		}
	}
	for tx := Transaction(0); tx < NumTransactions; tx++ {
		if len(firstAt[tx]) < 20 {
			t.Errorf("%s occupies only %d of 23 positions in first passes", tx, len(firstAt[tx]))
		}
	}
}

// TestDeckMix checks the long-run shares against the minimum mix of 5.2.3.
func TestDeckMix(t *testing.T) {
	d := NewDeck(NewRand(99, 1))
	const n = 23 * 10000
	var counts [NumTransactions]int
	for range n {
		counts[d.Next()]++
	}
	minimum := [NumTransactions]float64{NewOrder: 0, Payment: 43, OrderStatus: 4, Delivery: 4, StockLevel: 4}
	for tx := Transaction(0); tx < NumTransactions; tx++ {
		share := pct(counts[tx], n)
		if share < minimum[tx] {
			t.Errorf("%s share %.2f%%, below the 5.2.3 minimum %.0f%%", tx, share, minimum[tx])
		}
		// Whole passes: the shares are exact.
		if want := float64(deckCards[tx]) / 23 * 100; fmt.Sprintf("%.6f", share) != fmt.Sprintf("%.6f", want) {
			t.Errorf("%s share %.4f%%, want exactly %.4f%% over whole passes", tx, share, want)
		}
	}
	if share := pct(counts[NewOrder], n); share < 43 || share > 45 {
		t.Errorf("new_order share %.2f%%, want about 43.5%%", share)
	}
}

func TestDeckDeterministic(t *testing.T) {
	a, b := NewDeck(NewRand(5, 5)), NewDeck(NewRand(5, 5))
	for i := range 1000 {
		if x, y := a.Next(), b.Next(); x != y {
			t.Fatalf("card %d: %s vs %s from the same seed", i, x, y)
		}
	}
}
