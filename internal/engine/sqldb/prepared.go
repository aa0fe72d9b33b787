package sqldb

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"io/fs"
	"strings"
)

// prepared is what a session of either mode holds: its connection, its statements
// prepared once, and the argument and destination slices every statement reuses (no
// slice is allocated per statement).
type prepared struct {
	conn      *sql.Conn
	stmt      []*sql.Stmt
	args, dst []any
}

// prepare prepares the dialect's files on conn, in order; a missing file the
// optional function accepts leaves its statement nil. On error nothing stays
// prepared and the caller still owns conn.
func prepare(ctx context.Context, conn *sql.Conn, d *Dialect, files []string, optional func(i int) bool) (prepared, error) {
	p := prepared{conn: conn, stmt: make([]*sql.Stmt, len(files)), args: make([]any, 0, 16), dst: make([]any, 0, 16)}
	for i, file := range files {
		text, err := fs.ReadFile(d.SQL, file)
		if errors.Is(err, fs.ErrNotExist) && optional(i) {
			continue
		}
		if err == nil {
			p.stmt[i], err = conn.PrepareContext(ctx, strings.TrimSpace(string(text)))
		}
		if err != nil {
			p.closeStmts()
			return prepared{}, fmt.Errorf("prepare %s: %w", file, err)
		}
	}
	return p, nil
}

// Close implements engine.Session: it closes the statements and the connection.
func (p *prepared) Close() {
	p.closeStmts()
	p.conn.Close()
}

func (p *prepared) closeStmts() {
	for i, st := range p.stmt {
		if st != nil {
			st.Close()
			p.stmt[i] = nil
		}
	}
}

// a sets the scratch arguments.
func (p *prepared) a(v ...any) []any {
	p.args = append(p.args[:0], v...)
	return p.args
}

// to sets the scratch destinations.
func (p *prepared) to(v ...any) []any {
	p.dst = append(p.dst[:0], v...)
	return p.dst
}
