package engine

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/storbench/storbench/internal/dburl"
	"github.com/storbench/storbench/internal/input"
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
		return input.Errorf("dsn", "%s has no TPC-C tables: run storbench build --dsn … --warehouses N first, or name the built database in {dsn}",
			dburl.Redact(dsn))
	case len(missing) > 0:
		return partialSchema(ctx, db, dsn, missing)
	}
	return nil
}

// partialSchema refuses a database that lacks some TPC-C tables: storbench's own
// build is to be dropped and built again; tables that only share TPC-C's names (a
// user's warehouse table) are not storbench's to drop.
func partialSchema(ctx context.Context, db Dropper, dsn string, missing []string) error {
	inv, err := db.Inventory(ctx)
	if err != nil {
		return err
	}
	shown := dburl.Redact(dsn)
	if inv.Storbench() {
		return input.Errorf("dsn", "%s lacks the TPC-C tables %s: run storbench drop --dsn … %s, then storbench build",
			shown, strings.Join(missing, ", "), DSNYouGave)
	}
	return input.Errorf("dsn", "%s is not a TPC-C database (it holds %s but not %s, and no storbench build): storbench will not touch it; name the built database in {dsn}, or build one in another database",
		shown, strings.Join(tables(inv.TPCC), ", "), strings.Join(missing, ", "))
}

// RequireBuild refuses, as bad input, a database a run cannot measure: one without the
// TPC-C tables (RequireSchema), or one whose storbench build did not finish
// (ErrBuildUnfinished), whose tables hold part of the data: a run there counts the
// failures of transactions on missing rows as a result. Another tool's build passes.
func RequireBuild(ctx context.Context, db Database, dsn string) error {
	if err := RequireSchema(ctx, db, dsn); err != nil {
		return err
	}
	_, err := db.BuildInfo(ctx)
	switch {
	case errors.Is(err, ErrBuildUnfinished):
		return input.Errorf("dsn", "%s holds a storbench build that did not finish (interrupted, or failed before it recorded itself): remove it with storbench drop --dsn … %s, then build again",
			dburl.Redact(dsn), DSNYouGave)
	case err != nil && !errors.Is(err, ErrNoBuildInfo):
		return fmt.Errorf("read build information: %w", err)
	}
	return nil
}

// Schema is a build's variant of the schema and of its finishing, as data the
// engines read: the spec's, or HammerDB 4.12's so that a run can be compared with
// figures published from HammerDB builds (README, "How the workload follows the spec").
type Schema struct {
	Name string
	What string // whose it is, for the error that lists the choices
	// StockKey are the columns of stock's primary key, in order: {stock_key} in an
	// engine's schema.sql or indexes.sql.
	StockKey string
	// Settle ends the build by freezing the loaded rows and writing out the dirty
	// pages (PostgreSQL's VACUUM FREEZE and CHECKPOINT), so that the first run does
	// not pay for them; false: statistics only, as HammerDB leaves its build.
	Settle bool
}

// SpecSchema names the schema of a build that names none; HammerDBSchema, HammerDB
// 4.12's.
const (
	SpecSchema     = "spec"
	HammerDBSchema = "hammerdb"
)

var schemas = []Schema{
	{Name: SpecSchema, What: "storbench's: stock keyed by warehouse then item, frozen and checkpointed after the load", StockKey: "s_w_id, s_i_id", Settle: true},
	{Name: HammerDBSchema, What: "HammerDB 4.12's: stock keyed by item then warehouse, only analyzed after the load", StockKey: "s_i_id, s_w_id"},
}

// ParseSchema returns the schema variant of that name.
func ParseSchema(name string) (Schema, error) {
	var choices []string
	for _, s := range schemas {
		if s.Name == name {
			return s, nil
		}
		choices = append(choices, s.Name+", "+s.What)
	}
	return Schema{}, input.Errorf("schema", "{schema} %q is unknown (use %s)", name, strings.Join(choices, "; or "))
}

// Expand fills an engine's SQL with the schema's choices.
func (s Schema) Expand(sql string) string {
	return strings.ReplaceAll(sql, "{stock_key}", s.StockKey)
}
