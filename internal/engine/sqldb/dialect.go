// Package sqldb is the TPC-C engine over database/sql shared by the engines whose
// drivers speak it (SQLite, MySQL/MariaDB): schema, load, SQL-mode transactions,
// checks and counters, with each engine's SQL in its own embedded files (a Dialect).
package sqldb

import (
	"context"
	"database/sql"
	"io"
	"io/fs"

	"github.com/storbench/storbench/internal/engine"
	"github.com/storbench/storbench/internal/tpcc"
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
	// StockLevelInTransaction runs the sql mode's Stock-Level between BeginRead and
	// COMMIT instead of as one autocommit statement: an engine whose TPM is its count
	// of COMMITs and ROLLBACKs (MySQL's Com_commit) would otherwise leave it out.
	StockLevelInTransaction bool
	// Procedures: the engine runs the procedures mode, with the stored procedures of
	// procedures/*.sql (see procedures.go).
	Procedures bool
	// SingleWriter: the engine takes one writer at a time (SQLite), so loaders take
	// turns instead of waiting on its lock.
	SingleWriter bool
	// TransactionsSource names the engine's transaction counter (transactions.sql:
	// the count, and the server's uptime in seconds or NULL, which tells a restart);
	// an engine without one has no such file and TPM comes from the client's count.
	TransactionsSource string
	// Load, when set, is the engine's own bulk load of one table's text rows (the
	// generator's format) on a loader's connection, in place of the multi-row INSERTs
	// (MySQL: LOAD DATA LOCAL INFILE). It returns the rows loaded.
	Load func(ctx context.Context, conn *sql.Conn, table tpcc.Table, rows io.Reader) (int64, error)
	// Classify tells the driver what an error of this engine means.
	Classify func(err error) engine.Failure
}
