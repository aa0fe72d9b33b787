// Package sqldb is the TPC-C engine over database/sql shared by the engines whose
// drivers speak it (SQLite, MySQL/MariaDB): schema, load, SQL-mode transactions,
// checks and counters, with each engine's SQL in its own embedded files (a Dialect).
package sqldb

import (
	"io/fs"

	"github.com/storbench/storbench/internal/engine"
)

// Dialect is what differs between the engines: their SQL files and a few words of
// transaction control.
type Dialect struct {
	// Engine names the engine ("sqlite", "mysql").
	Engine string
	// Driver is the database/sql driver's name.
	Driver string
	// SQL holds the engine's statements: schema.sql and indexes.sql (statements
	// separated by ";" at the end of a line), and sqlmode/NAME.sql, one statement
	// each, with ? placeholders.
	SQL fs.FS
	// Scaled are the columns an engine without exact decimals stores as integers of
	// 1/scale units (money in cents: 100; tax and discount rates: 10000); the loader
	// converts the generator's decimal text into them. Empty: the engine's decimals
	// are exact and take the text as it is.
	Scaled map[string]int64
	// BeginWrite starts a transaction that writes ("BEGIN IMMEDIATE" takes SQLite's
	// one writer lock up front, so a transaction never fails on upgrading its lock);
	// BeginRead one that only reads, in one snapshot.
	BeginWrite, BeginRead string
	// SingleWriter: the engine takes one writer at a time (SQLite), so loaders take
	// turns instead of waiting on its lock.
	SingleWriter bool
	// TransactionsSource names the engine's transaction counter (transactions.sql);
	// an engine without one has no such file and TPM comes from the client's count.
	TransactionsSource string
	// Classify tells the driver what an error of this engine means.
	Classify func(err error) engine.Failure
}
