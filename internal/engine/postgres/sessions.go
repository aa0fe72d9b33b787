package postgres

import (
	"context"
	"errors"

	"github.com/jackc/pgx/v5"

	"github.com/storbench/storbench/internal/engine"
)

// Placeholders, replaced by the procedures and sql sessions.
func newProcedureSession(ctx context.Context, conn *pgx.Conn) (engine.Session, error) {
	return nil, errors.New("not yet")
}

func newSQLSession(ctx context.Context, conn *pgx.Conn) (engine.Session, error) {
	return nil, errors.New("not yet")
}
