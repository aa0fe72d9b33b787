package postgres

import (
	"errors"

	"github.com/jackc/pgx/v5/pgconn"
)

// Sessions run the five transactions in one of two modes:
//
//   - procedures (procedures.go): one call of a PL/pgSQL function of sql/functions.sql
//     per transaction, one round trip, the call its own transaction;
//   - sql (sqlmode.go): client-side statements of sql/sqlmode/*.sql between BEGIN and
//     COMMIT, sent in batches of several statements (batch.go), one round trip each.
//
// Both speak the wire protocol themselves over a connection pgconn opened (wire.go):
// through pgx, the client's CPU per transaction was three times higher in procedures
// mode and twice in sql mode. In both, every statement is prepared once per connection
// and then runs with binary parameters and results. Both leave the same rows.

// errUnusedItem is the SQLSTATE storbench_new_order raises for an unused item id: the
// call rolls back as a whole and the session reports a rolled-back New-Order (2.4.2.3).
const errUnusedItem = "SB001"

// isPgCode reports whether err is a server error with SQLSTATE code.
func isPgCode(err error, code string) bool {
	var pgErr *pgconn.PgError
	return errors.As(err, &pgErr) && pgErr.Code == code
}
