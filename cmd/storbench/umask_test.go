package main

import (
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/storbench/storbench/internal/instance/mariadb/mariadbserver"
)

// TestFilesUnderUmask000: storbench started with umask 000 writes nothing that other
// users may change: no file or directory of a run's --json and its metrics CSV, a
// report, a study's results store and its CSV export, STORBENCH_HOME, managed
// PostgreSQL and MariaDB instances (their data directories) and their backups,
// physical and logical (a MariaDB dump's tpcc.sql), is group- or world-writable; and
// the directories holding data files or backups are closed to other users.
func TestFilesUnderUmask000(t *testing.T) {
	t.Parallel() // its own servers, directories and names: see docs/architecture.md#tests
	if testing.Short() {
		t.Skip("builds storbench and starts PostgreSQL and MariaDB instances")
	}
	work := diskTempDir(t, "umask-")
	b := binaryIn{dir: work, env: []string{"STORBENCH_HOME=" + filepath.Join(work, "home")}, umask: "000"}
	cli := func(args ...string) {
		t.Helper()
		if code, out, errOut := b.run(t, args...); code != 0 {
			t.Fatalf("storbench %s: exit %d\n%s%s", strings.Join(args, " "), code, out, errOut)
		}
	}
	db := "sqlite://" + filepath.Join(work, "tpcc.db")
	cli("build", "--dsn", db, "--warehouses", "1")
	cli("run", "--dsn", db, "--users", "1", "--ramp", "0s", "--duration", "1s", "--mode", "sql", "--io-latency", "off", "--json", "run.json")
	cli("report", "run.json", "-o", "report.html")
	must(t, os.WriteFile(filepath.Join(work, "study.yaml"), []byte("name: umask\ntargets:\n  - name: lite\n    kind: external\n    dsn: "+db+
		"\nworkload:\n  warehouses: 1\n  mode: sql\nexperiments:\n  - kind: user-sweep\n    users: [1]\n    ramp: 0s\n    duration: 1s\n"), 0o644))
	cli("study", "run", "study.yaml", "--results", "results")
	cli("results", "export", "results", "--csv", "steps.csv")

	// Directories of data files and backups: closed to other users.
	closed := []string{filepath.Join(work, "pg", "data")}
	engines := []string{"postgres"}
	if _, _, err := mariadbserver.Binaries(); err == nil {
		engines = append(engines, "mariadb")
		closed = append(closed, filepath.Join(work, "mariadb", "data"), filepath.Join(work, "mariadb", "data", "db"))
	} else {
		t.Logf("no MariaDB instance: %v", err)
	}
	for _, engine := range engines {
		name := map[string]string{"postgres": "pg", "mariadb": "mariadb"}[engine]
		cli("instance", "create", "--engine", engine, "--path", filepath.Join(work, name), "--name", name, "--memory", "256MB", "--max-connections", "10")
		t.Cleanup(func() { b.run(t, "instance", "destroy", "--name", name) })
		for _, method := range []string{"physical", "logical"} {
			dir := filepath.Join(work, name+"-"+method)
			cli("backup", "--instance", name, "--to", dir, "--method", method, "--no-metrics")
			closed = append(closed, filepath.Join(dir, "base"))
		}
	}
	for _, want := range []string{"run.json", "run.metrics.csv", "report.html", "steps.csv", "mariadb-logical/base/tpcc.sql"} {
		if _, err := os.Stat(filepath.Join(work, want)); err != nil && (want != "mariadb-logical/base/tpcc.sql" || len(engines) == 2) {
			t.Errorf("%s was not written: %v", want, err)
		}
	}

	mariadbData := filepath.Join(work, "mariadb", "data", "db") + "/"
	checked := 0
	err := filepath.WalkDir(work, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if !d.IsDir() && !d.Type().IsRegular() {
			return nil // a server's socket, a symbolic link: their modes are not access
		}
		info, err := d.Info()
		if err != nil {
			return err
		}
		checked++
		if info.Mode().Perm()&0o022 != 0 {
			t.Errorf("%s is writable by others: %v", path, info.Mode().Perm())
		}
		// MariaDB's own default would give its group its data files (0660); the
		// version line mariadb-install-db's shell writes follows the umask alone.
		if strings.HasPrefix(path, mariadbData) && d.Name() != "mysql_upgrade_info" && info.Mode().Perm()&0o077 != 0 {
			t.Errorf("%s is not its owner's alone: %v", path, info.Mode().Perm())
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	for _, dir := range closed {
		info, err := os.Stat(dir)
		if err != nil {
			t.Errorf("%v", err)
		} else if info.Mode().Perm()&0o007 != 0 {
			t.Errorf("%s: %v; want it closed to other users", dir, info.Mode().Perm())
		}
	}
	t.Logf("%d files and directories checked", checked)
}
