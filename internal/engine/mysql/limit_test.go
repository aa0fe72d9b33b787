package mysql

import (
	"context"
	"database/sql"
	"testing"

	"github.com/storbench/storbench/internal/engine"
	"github.com/storbench/storbench/internal/testsupport/mariadbtest"
)

// TestConnectionLimit: on a real MariaDB (max_connections = 200) the open database's
// own connections count as available, and another client's connections do not.
func TestConnectionLimit(t *testing.T) {
	srv := mariadbtest.Start(t)
	ctx := context.Background()
	d, err := engine.Open(ctx, srv.URL)
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	cl, ok := d.(engine.ConnectionLimiter)
	if !ok {
		t.Fatal("the mysql engine is no engine.ConnectionLimiter")
	}
	first, err := cl.ConnectionLimit(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if first.Max != 200 || first.Available < 195 || first.Available > 200 {
		t.Fatalf("ConnectionLimit = %+v, want max 200 and about 200 available", first)
	}
	other, err := sql.Open("mysql", srv.DSN)
	if err != nil {
		t.Fatal(err)
	}
	defer other.Close()
	var conns []*sql.Conn
	for range 3 {
		c, err := other.Conn(ctx)
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close()
		conns = append(conns, c)
	}
	second, err := cl.ConnectionLimit(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if second.Available != first.Available-len(conns) {
		t.Errorf("with %d other connections: %d available, want %d", len(conns), second.Available, first.Available-len(conns))
	}
}
