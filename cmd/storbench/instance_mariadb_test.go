package main

import (
	"database/sql"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/go-sql-driver/mysql"

	enginemysql "github.com/storbench/storbench/internal/engine/mysql"
	"github.com/storbench/storbench/internal/instance/mariadb/mariadbserver"
)

// TestInstanceMariaDB creates a managed MariaDB instance from the command line: its
// DSN connects, list shows its buffer pool, a replica of it is refused, destroy
// removes it.
func TestInstanceMariaDB(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a MariaDB server")
	}
	if _, _, err := mariadbserver.Binaries(); err != nil {
		t.Skipf("%v (apt-get install mariadb-server)", err)
	}
	t.Setenv("STORBENCH_HOME", t.TempDir())
	dir := filepath.Join(t.TempDir(), "target")
	code, out, errOut := storbench(t, "instance", "create", "--engine", "mariadb", "--path", dir, "--memory", "256MB", "--name", "m1")
	if code != 0 {
		t.Fatalf("instance create: exit %d\n%s%s", code, out, errOut)
	}
	t.Cleanup(func() { storbench(t, "instance", "destroy", "--name", "m1") })
	dsn := instanceDSN(t, "m1")
	if !strings.HasPrefix(dsn, "mysql://storbench:") || !strings.Contains(out, "dsn: mysql://storbench:xxxxx@") || !strings.Contains(out, "innodb_buffer_pool_size=128M") ||
		!strings.Contains(out, "(mariadb, mariadbd Ver ") {
		t.Fatalf("create output lacks the DSN, the buffer pool or the version:\n%s", out)
	}
	cfg, err := enginemysql.DriverConfig(dsn)
	if err != nil {
		t.Fatal(err)
	}
	c, err := mysql.NewConnector(cfg)
	if err != nil {
		t.Fatal(err)
	}
	db := sql.OpenDB(c)
	var one int
	err = db.QueryRow("SELECT 1").Scan(&one)
	db.Close()
	if err != nil {
		t.Fatalf("connect with the DSN instance dsn printed: %v", err)
	}
	if code, out, _ := storbench(t, "instance", "list"); code != 0 || !strings.Contains(out, "mariadb") || !strings.Contains(out, "128M") {
		t.Errorf("instance list: exit %d\n%s", code, out)
	}
	replica := filepath.Join(t.TempDir(), "replica")
	if code, _, errOut := storbench(t, "instance", "create", "--engine", "mariadb", "--path", replica, "--replica-of", "m1"); code != 2 ||
		!strings.Contains(errOut, "postgres-only") || strings.Count(strings.TrimRight(errOut, "\n"), "\n") != 0 {
		t.Errorf("create --replica-of on mariadb: exit %d, %q; want 2 and one line", code, errOut)
	}
	if _, err := os.Stat(replica); !os.IsNotExist(err) {
		t.Errorf("a refused replica created %s", replica)
	}
	if code, out, _ := storbench(t, "instance", "destroy", "--name", "m1"); code != 0 {
		t.Fatalf("instance destroy: exit %d\n%s", code, out)
	}
	if _, err := os.Stat(dir); !os.IsNotExist(err) {
		t.Errorf("%s still exists after destroy", dir)
	}
}
