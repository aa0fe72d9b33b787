package postgres_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5"

	"github.com/storbench/storbench/internal/dburl"
	"github.com/storbench/storbench/internal/instance"
	"github.com/storbench/storbench/internal/instance/cgroup"
)

// TestOOMKillExplained: a backend that outgrows the instance's memory cgroup is killed
// by the kernel's OOM killer; the client sees only its connection closed, and the
// lease taken before turns that into one line naming the OOM kill and the limit.
func TestOOMKillExplained(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a PostgreSQL server")
	}
	if _, err := cgroup.Support(); err != nil || os.Geteuid() != 0 {
		t.Skipf("needs root and cgroups: %v", err)
	}
	ctx := context.Background()
	reg := registry(t)
	name := fmt.Sprintf("oom%d", os.Getpid())
	spec := instance.Spec{Name: name, Engine: "postgres", Path: filepath.Join(t.TempDir(), "data"),
		MemoryBytes: 96 << 20, MaxConnections: 10}
	if _, _, err := reg.Create(ctx, spec); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = reg.ForceDestroy(context.Background(), name) })
	st, err := reg.Start(ctx, name)
	if err != nil {
		t.Fatal(err)
	}
	dsn, _ := dburl.Parse(st.DSN())
	lease, err := reg.Use(ctx, dsn, "test")
	if err != nil || lease == nil {
		t.Fatalf("Use(%s) = %v, %v; want a lease on the instance", st.DSN(), lease, err)
	}
	defer lease.Release()
	if why := lease.OOMKilled(); why != "" {
		t.Fatalf("OOMKilled before any kill: %q", why)
	}
	conn, err := pgx.Connect(ctx, st.DSN())
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(ctx)
	// An in-memory sort of 20 million rows needs far more than 96 MB.
	_, qerr := conn.Exec(ctx, "SET work_mem = '4GB'; SELECT count(*) FROM (SELECT g FROM generate_series(1, 20000000) g ORDER BY random()) s")
	if qerr == nil {
		t.Fatal("a 20-million-row in-memory sort fitted in 96 MB")
	}
	got := lease.Explain(qerr).Error()
	t.Logf("%s", got)
	for _, want := range []string{"OOM killer", "instance " + name, "memory limit 96MB", "--memory"} {
		if !strings.Contains(got, want) {
			t.Errorf("explained error lacks %q: %s", want, got)
		}
	}
	if strings.Contains(got, "\n") {
		t.Errorf("explained error is not one line: %q", got)
	}
}
