package engine

import (
	"context"
	"fmt"
	"slices"
	"strings"

	"github.com/storbench/storbench/internal/dburl"
	"github.com/storbench/storbench/internal/input"
	"github.com/storbench/storbench/internal/tpcc"
)

// The tables storbench keeps its records in, beside the spec's.
const (
	// BuildTable holds a build's record: one row, written once the build is complete.
	BuildTable = "storbench_build"
	// ObjectsTable lists what a build created, one row per table and routine: it is
	// created first and each object is entered before (or, where the engine's DDL is
	// transactional, with) its creation, so that an interrupted build lists all it left.
	ObjectsTable = "storbench_objects"
)

// OwnTables are the tables storbench creates: the spec's and its records.
func OwnTables() []string {
	names := make([]string, 0, len(tpcc.Tables)+2)
	for _, t := range tpcc.Tables {
		names = append(names, t.String())
	}
	return append(names, BuildTable, ObjectsTable)
}

// The kinds of Object.
const (
	Table   = "table"
	Routine = "routine" // a function or stored procedure
)

// Object is a table or a routine of a database: its kind and name are what it is.
type Object struct {
	Kind string
	// Name is a table's name, or a routine's as its engine drops it (PostgreSQL:
	// name(argument types)).
	Name string
	// Short is a routine's name alone, where its engine's Name carries more (its
	// argument types): how messages name it. Not stored in ObjectsTable.
	Short string `db:"-"`
}

// Routines are the routines of names, as an engine that names a routine by its name
// alone lists them.
func Routines(names []string) []Object {
	objs := make([]Object, len(names))
	for i, n := range names {
		objs[i] = Object{Kind: Routine, Name: n}
	}
	return objs
}

// is tells whether o is the kind and name of p, however either is shown.
func (o Object) is(p Object) bool { return o.Kind == p.Kind && o.Name == p.Name }

// String names o in messages: a routine as name().
func (o Object) String() string {
	switch {
	case o.Kind != Routine:
		return o.Name
	case o.Short != "":
		return o.Short + "()"
	}
	return o.Name + "()"
}

// Inventory is what a database holds that storbench may drop.
type Inventory struct {
	// Database is the database's own name, which drop's --force must repeat: the
	// database of a server, the absolute path of a SQLite file.
	Database string
	// TPCC are the TPC-C-named objects present, whoever made them: the spec's tables
	// and storbench's (OwnTables), storbench's routines (storbench_…), and HammerDB's
	// routines when all of them are there.
	TPCC []Object
	// Record is what ObjectsTable lists (nil without that table); it may name objects
	// an interrupted build never created, or (rows the user wrote) anything at all:
	// Drop takes only those of TPCC.
	Record []Object
	// HammerDB: HammerDB's routines are all here.
	HammerDB bool
}

func (inv Inventory) has(table string) bool {
	return slices.ContainsFunc(inv.TPCC, Object{Kind: Table, Name: table}.is)
}

// Storbench's: the database holds storbench's record of a build, finished or not:
// its list of objects, or (a build of a storbench before that list) its build table,
// which those builds created together with the spec's tables.
func (inv Inventory) Storbench() bool { return inv.has(ObjectsTable) || inv.has(BuildTable) }

// ownByName are the objects of TPCC that storbench creates, known by their names.
func (inv Inventory) ownByName() []Object {
	own := OwnTables()
	var objs []Object
	for _, o := range inv.TPCC {
		if o.Kind == Table && slices.Contains(own, o.Name) || o.Kind == Routine && strings.HasPrefix(o.Name, "storbench_") {
			objs = append(objs, o)
		}
	}
	return objs
}

// tables names the tables of objs, for messages.
func tables(objs []Object) []string {
	var names []string
	for _, o := range objs {
		if o.Kind == Table {
			names = append(names, o.Name)
		}
	}
	return names
}

// complete: every table of the spec is here.
func (inv Inventory) complete() bool {
	for _, t := range tpcc.Tables {
		if !inv.has(t.String()) {
			return false
		}
	}
	return true
}

// NewInventory is what an engine read of a database: its name, its TPC-C tables
// (ExistingTables), storbench's routines, HammerDB's (all of them or none), and what
// ObjectsTable lists (nil without that table).
func NewInventory(database string, tables []string, own, hammerDB, record []Object) Inventory {
	inv := Inventory{Database: database, Record: record, HammerDB: len(hammerDB) > 0}
	for _, t := range tables {
		inv.TPCC = append(inv.TPCC, Object{Kind: Table, Name: t})
	}
	inv.TPCC = slices.Concat(inv.TPCC, own, hammerDB)
	return inv
}

// Dropper is what Drop needs of a database.
type Dropper interface {
	// Inventory reads what the database holds that storbench may drop.
	Inventory(ctx context.Context) (Inventory, error)
	// DropObjects drops objects of the database's Inventory (in one transaction where
	// the engine's DDL allows; else each leaves the record as it goes).
	DropObjects(ctx context.Context, objs []Object) error
}

// DSNYouGave follows "--dsn …" in a command a message offers: the DSN the message
// shows is redacted (a managed instance's password as xxxxx), which pasted would not
// connect.
const DSNYouGave = "(with the DSN you gave, or $STORBENCH_DSN)"

// Drop removes what storbench's builds created in a database, and nothing else: the
// objects its record lists, of those present (an unfinished build's too), with the
// record itself and the build table, which are storbench's whatever the record lists
// (a MariaDB build cut off before it entered its objects leaves the record empty);
// or, in a database an older storbench built, its tables and routines by their names. A
// database without storbench's record is refused as bad input, naming what is there
// and how to remove it: with force equal to the database's name (Inventory.Database),
// it drops the TPC-C-named objects (a HammerDB build), never another table.
// It returns the names of what it dropped.
func Drop(ctx context.Context, db Dropper, dsn, force string) ([]string, error) {
	inv, err := db.Inventory(ctx)
	if err != nil {
		return nil, err
	}
	shown := dburl.Redact(dsn)
	if force != "" && force != inv.Database {
		return nil, input.Errorf("force", "{force} %s does not name the database of %s (%s): nothing dropped; {force} must repeat the name of the database to drop",
			force, shown, inv.Database)
	}
	var drop []Object
	switch {
	case force != "":
		drop = inv.TPCC
	case inv.has(ObjectsTable):
		for _, o := range inv.TPCC {
			if slices.ContainsFunc(inv.Record, o.is) || o.Kind == Table && (o.Name == ObjectsTable || o.Name == BuildTable) {
				drop = append(drop, o)
			}
		}
	case inv.has(BuildTable):
		drop = inv.ownByName()
	case len(inv.TPCC) > 0:
		whose := "TPC-C tables of HammerDB or another tool"
		if inv.HammerDB && inv.complete() {
			whose = "the HammerDB build"
		}
		return nil, input.Errorf("dsn", "%s holds %s and no record of a storbench build: nothing dropped (storbench drops only what its builds created); if these are %s and you mean to remove them, run storbench drop --dsn … --force %s %s, which drops only the TPC-C tables and routines",
			shown, shortNames(inv.TPCC), whose, inv.Database, DSNYouGave)
	}
	if len(drop) == 0 {
		return nil, nil
	}
	// Routines first (a routine may refer to a table), the record last: what an
	// interrupted drop leaves is still recorded.
	slices.SortStableFunc(drop, func(a, b Object) int {
		rank := func(o Object) int {
			switch {
			case o.Kind == Routine:
				return 0
			case o.Name == ObjectsTable:
				return 2
			}
			return 1
		}
		return rank(a) - rank(b)
	})
	if err := db.DropObjects(ctx, drop); err != nil {
		return nil, err
	}
	return names(drop), nil
}

// names lists objects by name.
func names(objs []Object) []string {
	n := make([]string, len(objs))
	for i, o := range objs {
		n[i] = o.Name
	}
	return n
}

// shortNames lists objects for a message.
func shortNames(objs []Object) string {
	n := make([]string, len(objs))
	for i, o := range objs {
		n[i] = o.String()
	}
	return strings.Join(n, ", ")
}

// Occupied is the refusal of a build into a database that already holds TPC-C-named
// tables: it advises storbench drop only for storbench's own build; another tool's
// or the user's tables it will not touch.
func Occupied(ctx context.Context, db Dropper) error {
	inv, err := db.Inventory(ctx)
	if err != nil {
		return fmt.Errorf("inspect database: %w", err)
	}
	list := strings.Join(tables(inv.TPCC), ", ")
	switch {
	case inv.Storbench():
		return fmt.Errorf("%w: the database already holds a storbench build (%s): remove it with storbench drop first, or use another database",
			input.ErrInvalid, list)
	case inv.HammerDB && inv.complete():
		return input.Errorf("dsn", "the database holds a HammerDB build (%s): storbench runs it as it is (storbench run), or name another database in {dsn} to build one there",
			list)
	}
	return input.Errorf("dsn", "the database holds tables storbench did not create (%s): storbench will not touch them; name another database in {dsn} to build there",
		list)
}
