package tpcc

// Deck deals transaction types as a deck of 23 cards, 10 New-Order, 10 Payment and one
// each of Order-Status, Delivery and Stock-Level, drawn without replacement and
// reshuffled after each pass (5.2.4.2). It meets the minimum mix of 5.2.3 exactly:
// Payment 43.5%, the three others 4.3% each.
type Deck struct {
	r     *Rand
	cards [23]Transaction
	next  int
}

// NewDeck returns a shuffled deck.
func NewDeck(r *Rand) *Deck {
	d := &Deck{r: r}
	i := 0
	for t, n := range [NumTransactions]int{NewOrder: 10, Payment: 10, OrderStatus: 1, Delivery: 1, StockLevel: 1} {
		for range n {
			d.cards[i] = Transaction(t)
			i++
		}
	}
	d.shuffle()
	return d
}

func (d *Deck) shuffle() {
	for i := len(d.cards) - 1; i > 0; i-- {
		j := d.r.Int(0, i)
		d.cards[i], d.cards[j] = d.cards[j], d.cards[i]
	}
	d.next = 0
}

// Next deals the next card.
func (d *Deck) Next() Transaction {
	if d.next == len(d.cards) {
		d.shuffle()
	}
	t := d.cards[d.next]
	d.next++
	return t
}
