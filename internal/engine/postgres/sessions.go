package postgres

import (
	"errors"

	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgtype"
)

// Sessions run the five transactions in one of two modes:
//
//   - procedures (procedures.go): one call of a PL/pgSQL function of sql/functions.sql
//     per transaction, one round trip, the call its own transaction, over a connection
//     that speaks the wire protocol itself (wire.go: through pgx, the client's CPU per
//     transaction was three times higher);
//   - sql (sqlmode.go): client-side statements of sql/sqlmode/*.sql between BEGIN and
//     COMMIT, sent in pgx batches (one round trip per batch), with pgx's default
//     statement cache.
//
// In both, every statement is prepared once per connection and then runs with binary
// parameters and results. Both leave the same rows.

// errUnusedItem is the SQLSTATE storbench_new_order raises for an unused item id: the
// call rolls back as a whole and the session reports a rolled-back New-Order (2.4.2.3).
const errUnusedItem = "SB001"

// isPgCode reports whether err is a server error with SQLSTATE code.
func isPgCode(err error, code string) bool {
	var pgErr *pgconn.PgError
	return errors.As(err, &pgErr) && pgErr.Code == code
}

// Arguments and results of pgx calls (the sql mode) without allocations. pgx takes
// arguments as []any, and boxing an int into an interface allocates on every call.
// Sessions therefore build their argument slices once, holding pointers to session
// fields, and a call only sets the fields. The pointer types below implement pgx's
// valuer (and scanner) interfaces, so pgx encodes them directly with a memoized plan (a
// plain *int32 would be dereferenced through reflection, which boxes again).

// int4Arg is an integer argument (an int2, int4 or int8 parameter) or result.
type int4Arg int32

func (v *int4Arg) Int64Value() (pgtype.Int8, error) {
	return pgtype.Int8{Int64: int64(*v), Valid: true}, nil
}

func (v *int4Arg) ScanInt64(n pgtype.Int8) error {
	if !n.Valid {
		return errors.New("unexpected NULL integer")
	}
	*v = int4Arg(n.Int64)
	return nil
}

// int8Arg is a bigint argument or result: amounts in cents.
type int8Arg int64

func (v *int8Arg) Int64Value() (pgtype.Int8, error) {
	return pgtype.Int8{Int64: int64(*v), Valid: true}, nil
}

func (v *int8Arg) ScanInt64(n pgtype.Int8) error {
	if !n.Valid {
		return errors.New("unexpected NULL integer")
	}
	*v = int8Arg(n.Int64)
	return nil
}

// textArg is a text argument, or a scanned text value passed back as one.
type textArg string

func (v *textArg) TextValue() (pgtype.Text, error) {
	return pgtype.Text{String: string(*v), Valid: true}, nil
}

func (v *textArg) ScanText(t pgtype.Text) error {
	if !t.Valid {
		return errors.New("unexpected NULL text")
	}
	*v = textArg(t.String)
	return nil
}

// args builds an argument (or scan destination) slice once, from pointers to fields.
func args(vs ...any) []any { return vs }
