// Command engines measures storbench's three engines side by side on this machine:
// the load time of one schema, then NOPM and the client's CPU per transaction at a
// few user counts in each transaction mode the engine has, in one table. Each server
// is a throwaway one in -dir (on the disk to measure), with durable commits.
// -pg-bindirs measures several PostgreSQL builds instead of the default one, each
// named by its version: the same run on each major (bench/versions.sh).
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"path/filepath"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/storbench/storbench/internal/driver"
	"github.com/storbench/storbench/internal/engine"
	_ "github.com/storbench/storbench/internal/engine/all" // every engine registers itself
	"github.com/storbench/storbench/internal/input"
	"github.com/storbench/storbench/internal/instance/mariadb/mariadbserver"
	"github.com/storbench/storbench/internal/instance/postgres/pgserver"
	"github.com/storbench/storbench/internal/load"
)

func main() {
	if err := run(); err != nil {
		fmt.Fprintln(os.Stderr, "engines:", err)
		os.Exit(1)
	}
}

// run measures; it returns rather than exits, so the servers are always stopped.
func run() error {
	dir := flag.String("dir", "", "scratch directory on the disk to measure (created, removed after)")
	warehouses := flag.Int("warehouses", 4, "warehouses")
	usersFlag := flag.String("users", "1,2,4,8", "user counts")
	ramp := flag.Duration("ramp", 2*time.Second, "ramp-up per step")
	duration := flag.Duration("duration", 10*time.Second, "timed window per step")
	enginesFlag := flag.String("engines", "postgres,mariadb,sqlite", "engines to measure")
	pgBinDirs := flag.String("pg-bindirs", "", "PostgreSQL bin directories, comma-separated (default: the one pg_config names)")
	flag.Parse()
	var users []int
	for _, u := range strings.Split(*usersFlag, ",") {
		n, err := strconv.Atoi(u)
		if err != nil || n < 1 {
			return fmt.Errorf("-users %q: give user counts like 1,2,4,8", *usersFlag)
		}
		users = append(users, n)
	}
	if *dir == "" {
		return errors.New("-dir is required: a scratch directory on the disk to measure")
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	if err := os.MkdirAll(*dir, 0o755); err != nil {
		return err
	}
	defer os.RemoveAll(*dir)

	var bins []string
	if *pgBinDirs != "" {
		bins = strings.Split(*pgBinDirs, ",")
	}
	targets, cleanup, err := servers(ctx, *dir, strings.Split(*enginesFlag, ","), bins)
	defer cleanup()
	if err != nil {
		return err
	}
	tw := tabwriter.NewWriter(os.Stdout, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintf(tw, "engine\tmode\tload s (%d wh)\tusers\tNOPM (database)\tTPM (database)\tclient µs/txn\tnew-order p95 ms\terrors\t\n", *warehouses)
	for _, t := range targets {
		db, err := engine.OpenOrCreate(ctx, t.dsn)
		if err != nil {
			return fmt.Errorf("%s: %w", t.name, err)
		}
		start := time.Now()
		if _, err := load.Build(ctx, db, load.Options{Warehouses: *warehouses, Workers: 2, Seed: 1, Version: "bench"}); err != nil {
			return fmt.Errorf("%s: build: %w", t.name, err)
		}
		loadS := time.Since(start).Seconds()
		for _, mode := range []engine.Mode{engine.Procedures, engine.SQL} {
			for _, u := range users {
				res, err := driver.Run(ctx, db, driver.Config{Users: u, Ramp: *ramp, Duration: *duration, Seed: uint64(u), ClientCPUs: 2, Workload: driver.Workload{Mode: mode, MaxRetries: driver.DefaultRetries}})
				if errors.Is(err, input.ErrInvalid) && mode == engine.Procedures {
					fmt.Fprintf(tw, "%s\t%s\t%.1f\t-\t-\t-\t-\t-\tnot available\t\n", t.name, mode, loadS)
					break
				}
				if err != nil {
					return fmt.Errorf("%s %s %d users: %w", t.name, mode, u, err)
				}
				var errs int64
				for _, n := range res.ErrorsByKind {
					errs += n
				}
				fmt.Fprintf(tw, "%s\t%s\t%.1f\t%d\t%.0f\t%.0f\t%.0f\t%.2f\t%d\t\n", t.name, mode, loadS, u, res.NOPMDB, res.TPMDB,
					res.ClientCPU.PerTransactionMicros, res.Transactions.NewOrder.P95Ms, errs)
				fmt.Fprintf(os.Stderr, "%s %s %d users: NOPM %.0f\n", t.name, mode, u, res.NOPMDB)
			}
		}
		db.Close()
	}
	tw.Flush()
	fmt.Println("NOPM (database): sum(d_next_o_id) per minute; TPM (database): pg_stat_database (PostgreSQL), Com_commit+Com_rollback (MariaDB, server-wide), the client's count (SQLite, which has no counter)")
	return nil
}

type target struct{ name, dsn string }

// servers starts a throwaway server of each engine named in dir (a PostgreSQL of each
// of pgBins, or of the default build when none), or names an SQLite file there;
// cleanup stops the servers.
func servers(ctx context.Context, dir string, engines, pgBins []string) ([]target, func(), error) {
	var stops []func()
	cleanup := func() {
		for _, s := range stops {
			s()
		}
	}
	var targets []target
	for _, e := range engines {
		var t []target
		var err error
		switch e {
		case "postgres":
			t, err = postgresServers(ctx, dir, pgBins, &stops)
		case "mariadb":
			t, err = mariadbServer(ctx, dir, &stops)
		case "sqlite":
			if err = os.MkdirAll(filepath.Join(dir, "sqlite"), 0o755); err == nil {
				t = []target{{"sqlite", "sqlite://" + filepath.Join(dir, "sqlite", "tpcc.db")}}
			}
		default:
			err = fmt.Errorf("-engines: no engine %q (postgres, mariadb, sqlite)", e)
		}
		if err != nil {
			return nil, cleanup, err
		}
		targets = append(targets, t...)
	}
	return targets, cleanup, nil
}

// postgresServers starts a PostgreSQL of each build in bins (the default build when
// none), each named by its version when there are several.
func postgresServers(ctx context.Context, dir string, bins []string, stops *[]func()) ([]target, error) {
	if len(bins) == 0 {
		bins = []string{""}
	}
	var targets []target
	for i, bin := range bins {
		pg, err := pgserver.Start(ctx, pgserver.Options{Dir: filepath.Join(dir, fmt.Sprintf("pg%d", i)), BinDir: bin,
			Settings: map[string]string{"shared_buffers": "512MB", "max_connections": "100"}})
		if err != nil {
			return nil, fmt.Errorf("start PostgreSQL %s: %w", bin, err)
		}
		*stops = append(*stops, func() { pg.Stop(context.Background()) })
		if err := pg.CreateDatabase(ctx, "tpcc"); err != nil {
			return nil, err
		}
		name := "postgres"
		if len(bins) > 1 {
			v, err := pg.Version(ctx)
			if err != nil {
				return nil, err
			}
			name += " " + strings.TrimPrefix(v, "postgres (PostgreSQL) ")
		}
		targets = append(targets, target{name, pg.DSN("tpcc")})
	}
	return targets, nil
}

// mariadbServer starts a throwaway MariaDB with a database and a user for the run.
func mariadbServer(ctx context.Context, dir string, stops *[]func()) ([]target, error) {
	my, err := mariadbserver.Init(ctx, mariadbserver.Options{Dir: filepath.Join(dir, "mariadb"),
		Settings: map[string]string{"innodb_buffer_pool_size": "512M", "innodb_log_file_size": "256M",
			"innodb_flush_log_at_trx_commit": "1", "max_connections": "100"}})
	if err != nil {
		return nil, fmt.Errorf("create MariaDB: %w", err)
	}
	*stops = append(*stops, func() { my.Stop(context.Background()) })
	if err := my.Start(ctx); err != nil {
		return nil, fmt.Errorf("start MariaDB: %w", err)
	}
	const password = "bench-only-password"
	if err := my.CreateDatabase(ctx, "tpcc"); err != nil {
		return nil, err
	}
	if err := my.CreateUser(ctx, "storbench", password, "tpcc"); err != nil {
		return nil, err
	}
	return []target{{"mariadb", my.URL("storbench", password, "tpcc")}}, nil
}
