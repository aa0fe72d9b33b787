package sqldb

import (
	"context"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/storbench/storbench/internal/engine"
	"github.com/storbench/storbench/internal/tpcc"
)

// TestDeliveryRefilledDistrict: MariaDB's Delivery procedure reads under REPEATABLE
// READ. Its snapshot is taken at its first plain read (district 1's order), so a
// district whose queue was empty then and refilled by a New-Order committed since has
// a new_order row its locking read finds; the order and lines must be found too. New-
// Orders refill districts 1 and 2 while Deliveries empty them, for a few seconds: no
// Delivery may fail (a lock wait or deadlock, retried by the driver, is not a failure).
func TestDeliveryRefilledDistrict(t *testing.T) {
	ctx := context.Background()
	db := openTinyMariaDB(t)
	// A customer for district 2, which has none.
	district2 := strings.Replace(mysqlCustomer(1, "DDD", "BARBAR", "GC", "data"), "(1, 1, 1,", "(1, 2, 1,", 1)
	if _, err := db.pool.ExecContext(ctx, district2); err != nil {
		t.Fatal(err)
	}
	connect := func() *procSession {
		s, err := db.Connect(ctx, engine.Procedures)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(s.Close)
		return s.(*procSession)
	}
	orders, deliveries := connect(), connect()
	var (
		wg                         sync.WaitGroup
		newOrders, delivered, runs int
		retried, failures          int
		firstFailure               error
	)
	stop := time.Now().Add(4 * time.Second)
	wg.Add(1)
	go func() {
		defer wg.Done()
		for d := 0; time.Now().Before(stop); d++ {
			in := &tpcc.NewOrderInput{WID: 1, DID: d%2 + 1, CID: 1, Lines: []tpcc.OrderLine{{ItemID: 1, SupplyWID: 1, Quantity: 1}}}
			if _, err := orders.NewOrder(ctx, in); err == nil {
				newOrders++
			} else if !db.dialect.Classify(err).Retry {
				t.Errorf("New-Order: %v", err)
				return
			}
		}
	}()
	for time.Now().Before(stop) {
		skipped, err := deliveries.Delivery(ctx, &tpcc.DeliveryInput{WID: 1, CarrierID: 1})
		runs++
		switch {
		case err == nil:
			delivered += 10 - skipped
		case db.dialect.Classify(err).Retry:
			retried++
		default:
			failures++
			if firstFailure == nil {
				firstFailure = err
			}
		}
	}
	wg.Wait()
	t.Logf("%d new orders, %d deliveries (%d orders delivered, %d retried)", newOrders, runs, delivered, retried)
	if failures > 0 {
		t.Errorf("%d of %d deliveries failed; the first: %v", failures, runs, firstFailure)
	}
	if delivered < 100 {
		t.Errorf("only %d orders delivered: too few to race", delivered)
	}
}
