package study

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/storbench/storbench/internal/blockdev"
	"github.com/storbench/storbench/internal/childproc"
	"github.com/storbench/storbench/internal/dburl"
	"github.com/storbench/storbench/internal/engine"
	"github.com/storbench/storbench/internal/input"
	"github.com/storbench/storbench/internal/metrics"
	"github.com/storbench/storbench/internal/tpcc"
)

// externalTarget is a target whose server runs elsewhere, reached at a DSN: used as
// it is (never restored), its host's disks and CPU sampled from node_exporter when
// given, its host-local actions run over SSH.
type externalTarget struct{}

// externalKeys are the keys only an external target reads.
var externalKeys = []string{"dsn", "password_env", "host_metrics", "metrics_host", "metrics_devices", "host", "ssh", "ssh_key", "known_hosts"}

func (externalTarget) manages() bool { return false }

func (externalTarget) check(c *checker, i int, t *Target) {
	c.foreignKeys(i, managedKeys, "%s is for managed targets", "storbench does not control an external server; its engine is the dsn's scheme")
	c.foreignKeys(i, []string{"io_limit"}, "%s is for managed targets", "storbench throttles only the servers it runs, in their cgroup; remove it, or throttle the external server's disk on its own host")
	c.external(i, t)
}

func (c *checker) external(i int, t *Target) {
	p := func(key string) string { return fmt.Sprintf("targets[%d].%s", i, key) }
	dsn, err := dburl.Parse(t.DSN)
	if t.DSN == "" {
		c.errf(p("dsn"), "external target %s has no dsn", "add dsn: e.g. postgres://bench@db1:5432/tpcc", t.Name)
	} else if err != nil || (dsn.Parts().Host == "" && dsn.Parts().Path == "") {
		c.errf(p("dsn"), "dsn of %s is not a URL", "write e.g. postgres://bench@db1:5432/tpcc or sqlite:///path/to/tpcc.db", t.Name)
	} else if dsn.HasPassword() {
		c.errf(p("dsn"), "dsn of %s holds a password", "a study file is stored with the results: remove the password and name an environment variable that holds it with password_env", t.Name)
	}
	if t.PasswordEnv != "" {
		if !envNameRE.MatchString(t.PasswordEnv) {
			c.errf(p("password_env"), "password_env %q is not an environment variable name", "give the variable's name, e.g. PGPASSWORD, not its value", t.PasswordEnv)
		} else if dsn.Scheme() != "" && dsn.Parts().User == nil {
			// The password goes with the DSN's user name; without one it would be dropped.
			c.errf(p("dsn"), "dsn of %s has no user for the password in %s", "write the user before the host, e.g. postgres://bench@db1:5432/tpcc", t.Name, t.PasswordEnv)
		}
	}
	metricsKey := "metrics_host"
	switch {
	case t.HostMetrics != "" && t.MetricsHost != "":
		c.errf(p("metrics_host"), "target %s has both host_metrics and metrics_host", "they are one setting (metrics_host is its older name): keep host_metrics", t.Name)
	case t.HostMetrics != "":
		t.MetricsHost, metricsKey = t.HostMetrics, "host_metrics"
	}
	if t.MetricsHost != "" {
		if u, err := url.Parse(t.MetricsHost); err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
			c.errf(p(metricsKey), "%s %q is not an http URL", "give node_exporter's URL, e.g. http://db1:9100/metrics", metricsKey, t.MetricsHost)
		}
	}
	for j, d := range t.MetricsDevices {
		if !deviceNameRE.MatchString(d) {
			c.errf(fmt.Sprintf("%s[%d]", p("metrics_devices"), j), "metrics device %q is not a disk's name", "name it as /proc/diskstats does, e.g. nvme0n1 or sda, without /dev/", d)
		}
	}
	if len(t.MetricsDevices) > 0 && t.MetricsHost == "" {
		c.errf(p("metrics_devices"), "metrics_devices of %s needs host_metrics", "the devices are sampled from the host's node_exporter: add host_metrics: http://HOST:9100/metrics", t.Name)
	}
	if t.SSH != "" && !sshTargetRE.MatchString(t.SSH) {
		c.errf(p("ssh"), "ssh %q is not user@host", "write e.g. ssh: bench@db1 or bench@db1:2222", t.SSH)
	}
	for _, k := range []struct{ key, path string }{{"ssh_key", t.SSHKey}, {"known_hosts", t.KnownHosts}} {
		if k.path == "" {
			continue
		}
		if t.SSH == "" {
			c.errf(p(k.key), "%s of %s needs ssh", "add ssh: user@host, or remove %s", k.key, t.Name, k.key)
		} else if !filepath.IsAbs(k.path) {
			c.errf(p(k.key), "%s %q is not an absolute path", "write the full path, e.g. /home/bench/.ssh/known_hosts", k.key, k.path)
		}
	}
	if t.Host == "" {
		t.Host = dsn.Parts().Hostname()
	}
}

// engine is the DSN's scheme; false when the DSN is not a URL (refused with the
// target).
func (externalTarget) engine(t *Target) (string, bool) {
	dsn, err := dburl.Parse(t.DSN)
	if err != nil {
		return "", false
	}
	return dsn.Scheme(), true
}

// restore is nothing: an external database is used as it is.
func (externalTarget) restore(*Study) time.Duration { return 0 }

func (externalTarget) buildNote() string {
	return " (external: built unless it holds them, no base image)"
}

func (externalTarget) describe(t Target) string {
	parts := []string{"external", dburl.Redact(t.DSN)}
	if t.PasswordEnv != "" {
		parts = append(parts, "password from $"+t.PasswordEnv)
	}
	if t.MetricsHost != "" {
		parts = append(parts, "metrics from "+t.MetricsHost)
	}
	return strings.Join(parts, "  ")
}

// prepare connects with the password from the environment and builds the schema
// unless the database holds the study's already.
func (externalTarget) prepare(ctx context.Context, t *target) error {
	dsn, err := dburl.Parse(t.spec.DSN)
	if err != nil {
		return err
	}
	if t.spec.PasswordEnv != "" {
		childproc.Secret(t.spec.PasswordEnv) // no child inherits it
		dsn = dsn.WithPassword(os.Getenv(t.spec.PasswordEnv))
	}
	t.dsn = dsn.String()
	db, err := engine.OpenOrCreate(ctx, t.dsn)
	if err != nil {
		return err
	}
	defer db.Close()
	t.engine = db.Engine()
	if err := t.ensureSchema(ctx, db); err != nil {
		return err
	}
	return t.findDevices(ctx, db)
}

// ready has nothing to do: an external database is used as it is.
func (externalTarget) ready(context.Context, *target, variant, bool) error { return nil }

// release closes the SSH connection to the host, if one was opened.
func (externalTarget) release(_ context.Context, t *target, _ bool) error {
	if t.ssh != nil {
		t.ssh.Close()
		t.ssh = nil
	}
	return nil
}

func (externalTarget) environment(ctx context.Context, t *target, env TargetEnv) TargetEnv {
	env.Host, env.HostDevices = t.spec.Host, t.devices
	if t.spec.MetricsHost != "" {
		env.HostMetrics = dburl.Redact(t.spec.MetricsHost)
	}
	if db, err := engine.Open(ctx, t.dsn); err == nil {
		env.ServerVersion, _ = db.ServerVersion(ctx)
		if t.spec.SSH != "" {
			var err error
			if env.Placements, err = t.hostPlacements(ctx, db); err != nil {
				fmt.Fprintf(t.log, "target %s: the devices of its directories on its host not recorded: %v\n", t.spec.Name, err)
			}
		}
		db.Close()
	}
	return env
}

// hostPlacements resolves the server's data directory, and its WAL directory when
// elsewhere, on its host over SSH (one command: blockdev.HostScript), as a managed
// target's are resolved on this machine. A WAL directory inside the data directory
// (DATA/pg_wal), which the SSH user often may not read, is the data's placement.
func (t *target) hostPlacements(ctx context.Context, db engine.Database) ([]blockdev.Placement, error) {
	st, err := db.Storage(ctx)
	if err != nil || st.Data == "" {
		return nil, fmt.Errorf("the server does not say where its data is (%v)", err)
	}
	dirs := []metrics.Target{{Path: st.Data, Role: blockdev.RoleData}}
	if st.WAL != "" && !strings.HasPrefix(st.WAL, st.Data+string(filepath.Separator)) {
		dirs = append(dirs, metrics.Target{Path: st.WAL, Role: blockdev.RoleWAL})
	}
	h, err := t.sshHost(ctx)
	if err != nil {
		return nil, err
	}
	var paths []string
	for _, d := range dirs {
		paths = append(paths, d.Path)
	}
	out, err := h.Run(ctx, blockdev.HostScript, strings.NewReader(blockdev.HostInput(paths...)))
	if err != nil {
		return nil, err
	}
	sys, err := blockdev.ReadHost(out)
	if err != nil {
		return nil, err
	}
	defer sys.Close()
	var ps []blockdev.Placement
	for _, d := range dirs {
		p, err := sys.Resolve(d.Path, d.Role)
		if err != nil {
			return ps, err
		}
		ps = append(ps, p)
	}
	return ps, nil
}

// limits: storbench sets no limits on an external server.
func (externalTarget) limits(*target, bool, *StepResult) error { return nil }

// sample reads the host's node_exporter, when given, instead of this machine's
// disks (a study asking io_latency on for such a target is refused when loaded); a
// server on this host is sampled as run samples it (metrics.ForDatabase).
func (externalTarget) sample(ctx context.Context, t *target, cfg *metrics.Config) {
	cfg.Host, cfg.Devices, cfg.DeviceRoles = t.spec.MetricsHost, t.devices, t.deviceRoles
	if cfg.Host != "" {
		cfg.Targets = nil
		return
	}
	// On this host, what run samples for it: its directories' disks and its
	// processes by role.
	db, ok := cfg.Database.(engine.Database)
	if dsn, err := dburl.Parse(t.dsn); err == nil && ok {
		sel := metrics.ForDatabase(ctx, db, dsn)
		cfg.Targets, cfg.Servers = append(cfg.Targets, sel.Targets...), append(cfg.Servers, sel.Servers...)
	}
}

// ensureSchema builds an external database that holds no tables, and accepts one
// that holds the study's schema; a build that did not finish (an interrupted study's,
// perhaps) is refused like run refuses it: storbench cannot tell it made it to drop it.
func (t *target) ensureSchema(ctx context.Context, db engine.Database) error {
	tables, err := db.ExistingTables(ctx)
	if err != nil {
		return err
	}
	if len(tables) > 0 {
		if err := engine.RequireBuild(ctx, db, t.spec.DSN); err != nil {
			return err
		}
		info, err := db.BuildInfo(ctx)
		if err == nil && info.Schema != t.workload.Schema {
			return fmt.Errorf("%w: %s holds a TPC-C schema built as %s, the study wants %s: storbench drop it first, or use another database",
				input.ErrInvalid, dburl.Redact(t.spec.DSN), info.Schema, t.workload.Schema)
		}
		if (err == nil || errors.Is(err, engine.ErrNoBuildInfo)) && info.Warehouses == t.workload.Warehouses {
			return nil
		}
		if errors.Is(err, engine.ErrNoBuildInfo) {
			return fmt.Errorf("%w: %s holds a TPC-C schema of %d warehouses that storbench did not build, the study wants %d: storbench will not touch it; give the study workload.warehouses %d, or use another database",
				input.ErrInvalid, dburl.Redact(t.spec.DSN), info.Warehouses, t.workload.Warehouses, info.Warehouses)
		}
		return fmt.Errorf("%w: %s holds a TPC-C schema of %d warehouses, the study wants %d: storbench drop it first, or use another database",
			input.ErrInvalid, dburl.Redact(t.spec.DSN), info.Warehouses, t.workload.Warehouses)
	}
	fmt.Fprintf(t.log, "target %s: building %s\n", t.spec.Name, tpcc.Count(t.workload.Warehouses, "warehouse"))
	return t.build(ctx, db)
}

// findDevices chooses the host's disks an external target's metrics sample: those
// the study names, or the disks holding the server's data and WAL directories,
// found over SSH (node_exporter says what each disk did, not what is on it).
// Without either, every whole disk of the host is sampled.
func (t *target) findDevices(ctx context.Context, db engine.Database) error {
	if t.spec.MetricsHost == "" {
		return nil
	}
	if len(t.spec.MetricsDevices) > 0 {
		t.devices = t.spec.MetricsDevices
		return nil
	}
	if t.spec.SSH == "" {
		return nil
	}
	st, err := db.Storage(ctx)
	if err != nil || st.Data == "" {
		return fmt.Errorf("%w: target %s: the server does not say where its data is (%v): name the disks in metrics_devices", input.ErrInvalid, t.spec.Name, err)
	}
	h, err := t.sshHost(ctx)
	if err != nil {
		return err
	}
	disk, err := h.DataDevice(ctx, st.Data)
	if err != nil {
		return fmt.Errorf("target %s: the disk of its data directory %s on its host: %w (or name the disks in metrics_devices)", t.spec.Name, st.Data, err)
	}
	t.devices, t.deviceRoles = []string{disk}, map[string][]string{disk: {"data"}}
	// A WAL directory of its own (elsewhere than DATA/pg_wal, which the SSH user
	// often may not read: the data directory is the server's, mode 0700) may be on
	// another disk; one that cannot be found leaves the data disk sampled alone.
	if wal := st.WAL; wal != "" && !strings.HasPrefix(wal, st.Data+string(filepath.Separator)) {
		if disk, err := h.DataDevice(ctx, wal); err != nil {
			fmt.Fprintf(t.log, "target %s: the disk of its WAL directory %s not found (%v): sampling the data disk only\n", t.spec.Name, wal, err)
		} else {
			if !slices.Contains(t.devices, disk) {
				t.devices = append(t.devices, disk)
			}
			t.deviceRoles[disk] = append(t.deviceRoles[disk], "wal")
		}
	}
	fmt.Fprintf(t.log, "target %s: sampling disk %s of its host (holding %s)\n", t.spec.Name, strings.Join(t.devices, ", "), st.Data)
	return nil
}
