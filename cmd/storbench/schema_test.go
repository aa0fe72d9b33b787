package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/storbench/storbench/internal/testsupport/pgtest"
)

// stockKeySQL lists the columns of stock's primary key in key order.
const stockKeySQL = `SELECT string_agg(a.attname, ', ' ORDER BY k.ord)
FROM pg_index i CROSS JOIN unnest(i.indkey) WITH ORDINALITY AS k(attnum, ord)
JOIN pg_attribute a ON a.attrelid = i.indrelid AND a.attnum = k.attnum
WHERE i.indrelid = 'stock'::regclass AND i.indisprimary`

// TestBuildHammerDBSchema builds HammerDB's schema and the default one side by side
// on a real PostgreSQL: HammerDB's keys stock by item then warehouse and ends the build
// with ANALYZE alone (no VACUUM of stock, no requested checkpoint), the default keeps
// its key and its VACUUM FREEZE and CHECKPOINT; the hammerdb database passes every
// consistency check and runs in both modes, each result naming its schema.
func TestBuildHammerDBSchema(t *testing.T) {
	t.Parallel() // its own servers, directories and names: see docs/architecture.md#tests
	srv := pgtest.Start(t)
	ctx := t.Context()
	must(t, srv.CreateDatabase(ctx, "spec"))
	checkpoints := func() int64 {
		t.Helper()
		c, err := srv.Connect(ctx, "postgres")
		must(t, err)
		defer c.Close(ctx)
		var n int64
		must(t, c.QueryRow(ctx, "SELECT checkpoints_req FROM pg_stat_bgwriter").Scan(&n))
		return n
	}
	built := func(db string, args ...string) (key string, vacuums, analyzes int64) {
		t.Helper()
		args = append([]string{"build", "--dsn", srv.DSN(db), "--warehouses", "1", "--workers", "2"}, args...)
		code, out, errOut := storbench(t, args...)
		if code != 0 {
			t.Fatalf("%v: exit %d\n%s%s", args, code, out, errOut)
		}
		c, err := srv.Connect(ctx, db)
		must(t, err)
		defer c.Close(ctx)
		must(t, c.QueryRow(ctx, stockKeySQL).Scan(&key))
		must(t, c.QueryRow(ctx, "SELECT vacuum_count, analyze_count FROM pg_stat_user_tables WHERE relname = 'stock'").Scan(&vacuums, &analyzes))
		return key, vacuums, analyzes
	}

	before := checkpoints()
	key, vacuums, analyzes := built("tpcc", "--schema", "hammerdb")
	if after := checkpoints(); after != before {
		t.Errorf("hammerdb build: checkpoints requested %d before, %d after; want none requested", before, after)
	}
	if key != "s_i_id, s_w_id" || vacuums != 0 || analyzes < 1 {
		t.Errorf("hammerdb build: stock key (%s), %d vacuums, %d analyzes; want (s_i_id, s_w_id), ANALYZE only", key, vacuums, analyzes)
	}
	before = checkpoints()
	key, vacuums, _ = built("spec")
	if after := checkpoints(); after <= before || key != "s_w_id, s_i_id" || vacuums < 1 {
		t.Errorf("default build: stock key (%s), %d vacuums, checkpoints requested %d to %d; want (s_w_id, s_i_id), VACUUM and CHECKPOINT", key, vacuums, before, after)
	}

	code, out, errOut := storbench(t, "check", "--dsn", srv.DSN("tpcc"), "--all")
	if code != 0 || strings.Count(out, " PASS ") != 12 {
		t.Fatalf("check --all on the hammerdb schema: exit %d, want 12 PASS\n%s%s", code, out, errOut)
	}
	for _, c := range []struct{ db, mode, schema string }{{"tpcc", "procedures", "hammerdb"}, {"tpcc", "sql", "hammerdb"}, {"spec", "sql", "spec"}} {
		jsonPath := filepath.Join(t.TempDir(), "result.json")
		args := []string{"run", "--dsn", srv.DSN(c.db), "--users", "2", "--mode", c.mode, "--ramp", "0s", "--duration", "2s", "--no-metrics", "--json", jsonPath}
		code, out, errOut := storbench(t, args...)
		if code != 0 {
			t.Fatalf("%v: exit %d\n%s%s", args, code, out, errOut)
		}
		b, err := os.ReadFile(jsonPath)
		must(t, err)
		var res struct {
			Config struct {
				Schema string `json:"schema"`
			} `json:"config"`
			NOPMClient float64 `json:"nopm_client"`
		}
		must(t, json.Unmarshal(b, &res))
		if res.Config.Schema != c.schema || !strings.Contains(out, "schema "+c.schema+",") || res.NOPMClient <= 0 {
			t.Errorf("%v: config.schema %q, NOPM %v; want %q in the JSON and the text, and New-Orders:\n%s", args, res.Config.Schema, res.NOPMClient, c.schema, out)
		}
	}
}
