package pgtest

import (
	"context"
	"testing"

	"github.com/jackc/pgx/v5"
)

// Exec runs statements on the database dsn names, on a connection of their own, and
// fails the test on an error.
func Exec(t testing.TB, dsn, sql string, args ...any) {
	t.Helper()
	conn := connect(t, dsn)
	defer conn.Close(context.Background())
	if _, err := conn.Exec(context.Background(), sql, args...); err != nil {
		t.Fatalf("%s: %v", sql, err)
	}
}

// Scalar is the one value a query of the database dsn names returns, on a connection
// of its own; an error or no row fails the test.
func Scalar[T any](t testing.TB, dsn, sql string, args ...any) T {
	t.Helper()
	conn := connect(t, dsn)
	defer conn.Close(context.Background())
	var v T
	if err := conn.QueryRow(context.Background(), sql, args...).Scan(&v); err != nil {
		t.Fatalf("%s: %v", sql, err)
	}
	return v
}

func connect(t testing.TB, dsn string) *pgx.Conn {
	t.Helper()
	conn, err := pgx.Connect(context.Background(), dsn)
	if err != nil {
		t.Fatalf("connect %s: %v", dsn, err)
	}
	return conn
}
