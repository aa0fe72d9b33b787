package main

import (
	"context"
	"errors"
	"fmt"
	"github.com/storbench/storbench/internal/driver"
	"maps"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"

	"github.com/storbench/storbench/internal/blockdev"
	"github.com/storbench/storbench/internal/bytesize"
	"github.com/storbench/storbench/internal/dburl"
	"github.com/storbench/storbench/internal/engine"
	"github.com/storbench/storbench/internal/fsplace"
	"github.com/storbench/storbench/internal/input"
	"github.com/storbench/storbench/internal/instance"
	_ "github.com/storbench/storbench/internal/instance/mariadb"  // registers the mariadb server
	_ "github.com/storbench/storbench/internal/instance/postgres" // registers the postgres server
	"github.com/storbench/storbench/internal/metrics"
)

func instanceCmd() *cobra.Command {
	c := &cobra.Command{
		Use:   "instance",
		Short: "Managed database servers on a storage target: create, start, stop, status, dsn, destroy, list",
	}
	c.AddCommand(instanceCreateCmd(), instanceStartCmd(), instanceStopCmd(), instanceStatusCmd(),
		instanceDSNCmd(), instanceDestroyCmd(), instanceListCmd())
	return c
}

func registry() (instance.Registry, error) { return instance.DefaultRegistry() }

// openDSN opens the database dsn names (a SQLite file that does not exist only with
// create); a managed instance refusing a DSN without its password says how to give it.
func openDSN(ctx context.Context, dsn string, create bool) (engine.Database, dburl.URL, error) {
	u, err := engine.ParseDSN(dsn)
	if err != nil {
		return nil, u, err
	}
	open := engine.OpenURL
	if create {
		open = engine.OpenOrCreateURL
	}
	db, err := open(ctx, u)
	if err != nil {
		return nil, u, explainConnect(u, err)
	}
	return db, u, nil
}

// explainConnect is instance.Registry.ExplainConnect in the default registry.
func explainConnect(u dburl.URL, err error) error {
	if reg, rerr := registry(); rerr == nil {
		return reg.ExplainConnect(u, err)
	}
	return err
}

// useInstance leases the managed instance whose server dsn names, if any, for the
// command's duration: destroy then refuses it, and its OOM kills can be told.
func useInstance(c *cobra.Command, dsn dburl.URL) (*instance.Lease, error) {
	reg, err := registry()
	if err != nil {
		return nil, nil // no registry: no managed instance can serve dsn
	}
	return reg.Use(c.Context(), dsn, "storbench "+c.Name())
}

func instanceCreateCmd() *cobra.Command {
	var spec instance.Spec
	var memory, ioLimit string
	c := &cobra.Command{
		Use:   "create",
		Short: "Create a database server in --path (the storage under test) and start it",
		Long: `Create a database server whose data files live in --path (and its WAL in --wal-path),
sized by --memory (PostgreSQL: shared_buffers = memory/4, effective_cache_size =
memory*3/4; MariaDB: innodb_buffer_pool_size = 70% of memory, at most memory - 128MB) and,
when storbench may use cgroups (root), limited to that memory including the page cache
and to --cpus; otherwise pinned to --cpus by CPU affinity and the memory limit is
reported as NOT APPLIED. Durability stays on. Prints the DSN for build/run/check
without its password, which storbench instance dsn prints.
--path must be an empty directory or a new one in an existing directory; storbench marks
what it creates and destroy removes only that. --engine mariadb puts the redo and binary
logs in --wal-path; --replica-of is for postgres only. --bindir picks the server build,
and so its version, per instance (a standby takes its primary's); instance list shows it.`,
		Args: cobra.NoArgs,
		RunE: func(c *cobra.Command, _ []string) error {
			if spec.Path == "" {
				return fmt.Errorf("%w: --path is required: the directory on the storage to test", input.ErrInvalid)
			}
			if spec.Name == "" {
				spec.Name = defaultName(spec.Path)
			}
			if ioLimit != "" {
				l, err := instance.ParseIOLimit(ioLimit)
				if err != nil {
					return err
				}
				spec.IOLimit = l
			}
			if memory != "" {
				n, err := bytesize.Parse(memory)
				if err != nil {
					return fmt.Errorf("--memory: %w", err)
				}
				spec.MemoryBytes = n
			}
			reg, err := registry()
			if err != nil {
				return err
			}
			_, warnings, err := reg.CreateStarted(c.Context(), spec)
			if err != nil {
				if errors.Is(err, input.ErrInvalid) && strings.Contains(err.Error(), "cannot create ") {
					// The directory could not be made (read-only, no permission): say what to do.
					return fmt.Errorf("%w: choose a --path in a directory you may write to on the storage to test", err)
				}
				return err
			}
			for _, w := range warnings {
				fmt.Fprintln(c.ErrOrStderr(), "storbench: warning:", w)
			}
			return printStatus(c, reg, spec.Name)
		},
	}
	f := c.Flags()
	f.StringVar(&spec.Engine, "engine", "postgres", "database engine: postgres or mariadb")
	f.StringVar(&spec.Path, "path", "", "directory for the data files: the storage under test (required)")
	f.StringVar(&spec.WALPath, "wal-path", "", "directory for the write-ahead log (mariadb: redo and binary logs), on another target (default: with the data)")
	f.StringVar(&memory, "memory", "", "memory of the instance, e.g. 2GB (default: engine defaults, no limit)")
	f.StringVar(&spec.CPUs, "cpus", "", "CPUs the instance may use, e.g. 0-1 (default: all)")
	f.StringVar(&ioLimit, "io-limit", "", "throttle the data disk to emulate slower storage: riops=N,wiops=N,rbps=100MB,wbps=100MB (any subset) or a preset such as aws-gp3 (docs/io-limits.md; needs cgroups)")
	input.DecimalVar(f, &spec.Port, "port", 0, "TCP port on 127.0.0.1 (default: a free one)")
	f.StringVar(&spec.Name, "name", "", "instance name (default: from --path)")
	input.DecimalVar(f, &spec.MaxConnections, "max-connections", 200, "connections the server accepts: at least the users a run will drive")
	f.StringVar(&spec.ReplicaOf, "replica-of", "", "make this instance a streaming standby of the named running instance")
	f.BoolVar(&spec.Sync, "sync", false, "with --replica-of: the primary's commits wait for this standby (synchronous commit)")
	f.StringVar(&spec.BinDir, "bindir", "", "directory of the server build to run, which chooses its version: PostgreSQL's initdb, pg_ctl and postgres (e.g. /usr/lib/postgresql/17/bin), MariaDB's mariadbd (default: $STORBENCH_PG_BINDIR or pg_config --bindir; mariadbd on PATH)")
	return c
}

// releaseOf is the release number in a server's version line ("postgres (PostgreSQL)
// 17.10" → 17.10, "mariadbd Ver 10.11.14-MariaDB-0+deb12u2 …" → 10.11.14; driver.RunConfig.Server).
func releaseOf(version string) string {
	if _, release := (driver.RunConfig{ServerVersion: version}).Server(); release != "" {
		return release
	}
	return version
}

// defaultName derives an instance name from its directory ("/mnt/nvme0/pg" → "pg").
func defaultName(path string) string {
	var b strings.Builder
	for _, r := range strings.ToLower(filepath.Base(path)) {
		if r >= 'a' && r <= 'z' || r >= '0' && r <= '9' || r == '-' || r == '_' {
			b.WriteRune(r)
		}
	}
	if s := b.String(); s != "" && s[0] >= 'a' && s[0] <= 'z' {
		return s
	}
	return "pg"
}

// namedCmd is a verb on one instance, named by --name.
func namedCmd(use, short string, do func(c *cobra.Command, reg instance.Registry, name string) error) *cobra.Command {
	var name string
	c := &cobra.Command{
		Use: use, Short: short, Args: cobra.NoArgs,
		RunE: func(c *cobra.Command, _ []string) error {
			reg, err := registry()
			if err != nil {
				return err
			}
			return do(c, reg, name)
		},
	}
	c.Flags().StringVar(&name, "name", "", "instance name (required; storbench instance list shows them)")
	_ = c.MarkFlagRequired("name")
	return c
}

func instanceStartCmd() *cobra.Command {
	return namedCmd("start", "Start an instance (inside its memory and CPU limits)",
		func(c *cobra.Command, reg instance.Registry, name string) error {
			if _, err := reg.Start(c.Context(), name); err != nil {
				return err
			}
			return printStatus(c, reg, name)
		})
}

func instanceStopCmd() *cobra.Command {
	var force bool
	c := namedCmd("stop", "Stop an instance (refused while a build, run, backup or restore uses it)", func(c *cobra.Command, reg instance.Registry, name string) error {
		stop := reg.Stop
		if force {
			stop = reg.ForceStop
		}
		if _, err := stop(c.Context(), name); err != nil {
			return err
		}
		fmt.Fprintf(c.OutOrStdout(), "instance %s stopped\n", name)
		return nil
	})
	c.Flags().BoolVar(&force, "force", false, "stop it even while a build, run, backup or restore uses it")
	return c
}

func instanceStatusCmd() *cobra.Command {
	return namedCmd("status", "Show an instance: settings, limits, DSN, running or not",
		func(c *cobra.Command, reg instance.Registry, name string) error { return printStatus(c, reg, name) })
}

func instanceDSNCmd() *cobra.Command {
	c := namedCmd("dsn", "Print an instance's DSN with its password (for $STORBENCH_DSN)",
		func(c *cobra.Command, reg instance.Registry, name string) error {
			st, err := reg.Load(name)
			if err != nil {
				return err
			}
			fmt.Fprintln(c.OutOrStdout(), st.DSN())
			return nil
		})
	c.Long = `Print an instance's DSN with its password, which is kept in the instance's state file
(only its owner may read it), for
  export STORBENCH_DSN="$(storbench instance dsn --name NAME)"
after which build, run and check need no --dsn: a password in --dsn is on storbench's
command line, which every user of the machine may read.`
	return c
}

func instanceDestroyCmd() *cobra.Command {
	var force bool
	c := namedCmd("destroy", "Stop an instance and remove what storbench created for it (only directories carrying its marker)",
		func(c *cobra.Command, reg instance.Registry, name string) error {
			kept, err := reg.DestroyKept(c.Context(), name, force)
			if err != nil {
				return err
			}
			fmt.Fprintf(c.OutOrStdout(), "instance %s destroyed\n", name)
			for _, k := range kept {
				fmt.Fprintln(c.OutOrStdout(), k)
			}
			return nil
		})
	c.Flags().BoolVar(&force, "force", false, "destroy it even while a build, run, backup or restore uses it, or forget it when its directories are not there (a disk not mounted), leaving what it has there")
	return c
}

func printStatus(c *cobra.Command, reg instance.Registry, name string) error {
	st, err := reg.Status(name)
	if err != nil {
		return err
	}
	printInstance(c, reg, st)
	return nil
}

func instanceListCmd() *cobra.Command {
	return &cobra.Command{
		Use: "list", Short: "List the instances storbench manages", Args: cobra.NoArgs,
		RunE: func(c *cobra.Command, _ []string) error {
			reg, err := registry()
			if err != nil {
				return err
			}
			all, err := reg.List()
			if err != nil {
				return err
			}
			tw := tabwriter.NewWriter(c.OutOrStdout(), 0, 0, 2, ' ', 0)
			fmt.Fprintln(tw, "NAME\tENGINE\tVERSION\tSTATE\tPORT\tMEMORY\tCACHE\tCPUS\tPATH")
			var notes []string
			for _, st := range all {
				fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n", st.Name, orDash(st.Engine), orDash(releaseOf(st.Version)), listState(reg, st, &notes), port(st),
					memoryLimit(st), orDash(st.CacheSize()), orDash(st.CPUs), orDash(st.Path))
			}
			if err := tw.Flush(); err != nil {
				return err
			}
			for _, n := range notes {
				fmt.Fprintln(c.OutOrStdout(), n)
			}
			return listStudyInstances(c, reg)
		},
	}
}

// memoryLimit is the memory the instance was created with: the limit of its cgroup,
// or, without one, a size only its caches follow, which the list says. A stopped
// instance has no cgroup: its last start tells.
func memoryLimit(st *instance.State) string {
	switch {
	case st.MemoryBytes == 0:
		return "-"
	case !st.MemoryLimitApplied():
		return bytesize.Format(st.MemoryBytes) + " (not applied)"
	}
	return bytesize.Format(st.MemoryBytes)
}

// listStudyInstances lists the instances of the studies whose registries are linked
// into reg (a study keeps its own under its results store), with their study.
func listStudyInstances(c *cobra.Command, reg instance.Registry) error {
	linked, err := reg.Linked()
	if err != nil {
		return err
	}
	var rows []string
	for _, l := range linked {
		all, err := l.Registry.List()
		if err != nil {
			return err
		}
		for _, st := range all {
			rows = append(rows, fmt.Sprintf("%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n", st.Name, l.Owner, orDash(st.Engine), orDash(releaseOf(st.Version)), listState(l.Registry, st, nil), port(st),
				memoryLimit(st), orDash(st.Path), filepath.Dir(l.Dir)))
		}
	}
	if len(rows) == 0 {
		return nil
	}
	out := c.OutOrStdout()
	fmt.Fprintln(out, "\ninstances of studies (storbench study clean RESULTS removes them):")
	tw := tabwriter.NewWriter(out, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "NAME\tSTUDY\tENGINE\tVERSION\tSTATE\tPORT\tMEMORY\tPATH\tRESULTS")
	for _, r := range rows {
		fmt.Fprint(tw, r)
	}
	return tw.Flush()
}

// listState is the STATE column: running or stopped, or the condition of a record
// that is incomplete or damaged, whose line (with the fix) goes to notes when given.
func listState(reg instance.Registry, st *instance.State, notes *[]string) string {
	if st.Condition == "" {
		s, err := reg.Status(st.Name)
		if err != nil {
			return "unknown"
		}
		return runState(s.PID)
	}
	if notes != nil {
		*notes = append(*notes, st.Unusable())
	}
	return st.Condition
}

func runState(pid int) string {
	if pid == 0 {
		return "stopped"
	}
	return "running"
}

// port is the instance's port, "-" when its record does not say (incomplete, damaged).
func port(st *instance.State) string {
	if st.Port == 0 {
		return "-"
	}
	return strconv.Itoa(st.Port)
}

func orDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

func printInstance(c *cobra.Command, reg instance.Registry, s instance.Status) {
	out := c.OutOrStdout()
	st := s.State
	fmt.Fprintf(out, "instance %s (%s, %s): %s\n", st.Name, st.Engine, st.Version, runState(s.PID))
	fmt.Fprintf(out, "  data: %s\n", st.Path)
	if st.WALPath != "" {
		fmt.Fprintf(out, "  wal:  %s\n", st.WALPath)
	}
	fmt.Fprintf(out, "  settings:")
	for _, k := range slices.Sorted(maps.Keys(st.Settings)) {
		fmt.Fprintf(out, " %s=%s", k, st.Settings[k])
	}
	fmt.Fprintln(out)
	for _, l := range st.Limits {
		fmt.Fprintf(out, "  limit: %s\n", l)
	}
	if s.Enforced != "" {
		fmt.Fprintf(out, "  in force: %s\n", s.Enforced)
	}
	fmt.Fprintf(out, "  dsn: %s\n", dburl.Redact(st.DSN()))
	if s.Exposed != "" {
		fmt.Fprintf(out, "  password: %s\n", s.Exposed)
		return
	}
	fmt.Fprintf(out, "  password: in %s, which only its owner may read (storbench instance dsn --name %s prints the DSN with it)\n", reg.StateFile(st.Name), st.Name)
}

// transferArgs are the flags backup and restore share.
type transferArgs struct {
	name, dir, jsonPath string
	metrics             metricsFlags
}

func (a *transferArgs) flags(c *cobra.Command, dirFlag, dirHelp string) {
	c.Flags().StringVar(&a.name, "instance", "", "instance name (required)")
	c.Flags().StringVar(&a.dir, dirFlag, "", dirHelp+" (required)")
	c.Flags().StringVar(&a.jsonPath, "json", "", "write seconds, bytes, MB/s and per-second progress as JSON")
	_ = c.MarkFlagRequired("instance")
	_ = c.MarkFlagRequired(dirFlag)
	a.metrics.register(c)
}

func backupCmd() *cobra.Command {
	var a transferArgs
	var method string
	var jobs int
	c := &cobra.Command{
		Use:   "backup",
		Short: "Back up a managed instance into --to: physical (pg_basebackup, fast checkpoint; mariadb-backup) or logical (pg_dump directory format; mariadb-dump)",
		Args:  cobra.NoArgs,
		RunE: func(c *cobra.Command, _ []string) error {
			how, err := instance.ParseBackupMethod(method, jobs)
			if err != nil {
				return err
			}
			return transfer(c, "backup", a, func(reg instance.Registry, dir string) (instance.Transfer, error) {
				return reg.Backup(c.Context(), a.name, dir, how)
			})
		},
	}
	a.flags(c, "to", "empty or new directory for the backup")
	c.Flags().StringVar(&method, "method", "physical", "physical or logical")
	input.DecimalVar(c.Flags(), &jobs, "jobs", 1, "parallel jobs of a postgres logical backup (and, by default, of its restore); mariadb's tools run one")
	return c
}

func restoreCmd() *cobra.Command {
	var a transferArgs
	var jobs int
	var force bool
	c := &cobra.Command{
		Use:   "restore",
		Short: "Replace a managed instance's database with a backup (physical: stop, copy, sync, start; logical: pg_restore --clean, or the mariadb dump replayed)",
		Args:  cobra.NoArgs,
		RunE: func(c *cobra.Command, _ []string) error {
			if jobs < 0 {
				return fmt.Errorf("%w: --jobs must not be negative", input.ErrInvalid)
			}
			return transfer(c, "restore", a, func(reg instance.Registry, dir string) (instance.Transfer, error) {
				return reg.RestoreWith(c.Context(), a.name, dir, instance.RestoreOptions{Jobs: jobs, OtherInstance: force})
			})
		},
	}
	a.flags(c, "from", "a directory made by storbench backup")
	input.DecimalVar(c.Flags(), &jobs, "jobs", 0, "parallel jobs of a postgres logical restore (default: the backup's)")
	c.Flags().BoolVar(&force, "force", false, "restore a backup of another instance (a restore is always refused while a build, run or backup uses the instance)")
	return c
}

// transfer runs a backup or restore and reports its time and throughput, and what
// the instance's disks and the backup's did meanwhile.
func transfer(c *cobra.Command, what string, a transferArgs, do func(instance.Registry, string) (instance.Transfer, error)) error {
	abs, err := filepath.Abs(a.dir)
	if err != nil {
		return fmt.Errorf("%w: %v", input.ErrInvalid, err)
	}
	if err := a.metrics.checkOutputs(a.jsonPath); err != nil {
		return err
	}
	reg, err := registry()
	if err != nil {
		return err
	}
	st, err := reg.Load(a.name)
	if err != nil {
		return err
	}
	var mon *metrics.Monitor
	if !a.metrics.off {
		sel := metrics.Selection{Targets: transferTargets(st, abs)}
		if srv, err := reg.Server(a.name, ""); err == nil {
			sel.Servers = append(sel.Servers, srv)
		} else {
			sel.Notes = append(sel.Notes, fmt.Sprintf("no I/O by process role: %v", err))
		}
		m, closeCSV, err := a.metrics.monitor(c.Context(), sel, nil, nil, a.jsonPath, c.OutOrStdout())
		if err != nil {
			return err
		}
		defer closeCSV()
		defer m.Close()
		mon = m
	}
	origin := time.Now()
	if mon != nil {
		mon.Start(c.Context(), origin)
	}
	t, err := do(reg, abs)
	if err != nil {
		return err
	}
	out := c.OutOrStdout()
	fmt.Fprintf(out, "%s: %.1f MB in %.1f s = %.1f MB/s (MB = 10^6 bytes)\n", what, float64(t.Bytes)/1e6, t.Seconds, t.MBps)
	res := struct {
		// Version marks the file as storbench's, to be replaced by the next --json.
		Version string `json:"storbench_version"`
		instance.Transfer
		System *metrics.Report `json:"system,omitempty"`
	}{Version: version, Transfer: t}
	if mon != nil {
		// Over the whole command: a physical restore stops the server first (a
		// shutdown checkpoint) and starts it after; the copy is only part of it.
		res.System = mon.Stop(context.WithoutCancel(c.Context()), 0, time.Since(origin).Seconds())
		metrics.WriteText(out, res.System, "means over the whole "+what+" command")
	}
	if a.jsonPath != "" {
		return writeJSON(c, jsonTarget(a.jsonPath), res)
	}
	return nil
}

// transferTargets are the instance's storage targets and the backup directory (its
// nearest existing ancestor while a backup has yet to create it).
func transferTargets(st *instance.State, dir string) []metrics.Target {
	targets := []metrics.Target{{Path: st.Path, Role: blockdev.RoleData}}
	if st.WALPath != "" {
		targets = append(targets, metrics.Target{Path: st.WALPath, Role: blockdev.RoleWAL})
	}
	if existing, err := fsplace.Existing(dir); err == nil {
		dir = existing
	}
	return append(targets, metrics.Target{Path: dir, Role: blockdev.RoleBackup})
}
