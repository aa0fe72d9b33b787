package engine

import (
	"context"
	"fmt"
	"slices"
	"strings"

	"github.com/storbench/storbench/internal/tpcc"
)

// RequireSchema refuses, as bad input, a database without the TPC-C tables that run
// and check need: a database not built yet, or a --dsn naming the wrong one.
func RequireSchema(ctx context.Context, db Database, dsn string) error {
	have, err := db.ExistingTables(ctx)
	if err != nil {
		return err
	}
	var missing []string
	for _, t := range tpcc.Tables {
		if !slices.Contains(have, t.String()) {
			missing = append(missing, t.String())
		}
	}
	switch {
	case len(missing) == len(tpcc.Tables):
		return fmt.Errorf("%w: %s has no TPC-C tables: run storbench build --dsn … --warehouses N first, or name the built database in --dsn",
			ErrInput, RedactDSN(dsn))
	case len(missing) > 0:
		return fmt.Errorf("%w: %s lacks the TPC-C tables %s: run storbench drop, then storbench build",
			ErrInput, RedactDSN(dsn), strings.Join(missing, ", "))
	}
	return nil
}
