package main

import (
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/storbench/storbench/internal/driver"
	"github.com/storbench/storbench/internal/input"
	"github.com/storbench/storbench/internal/study"
	"github.com/storbench/storbench/internal/yamlfile"
)

// Counts are read in decimal: pflag's own number flags read 010 as octal 8 and
// 07777777 as 2,097,151 (--users 010 ran 8 users); a prefix no count has is refused.
func TestCountsAreDecimal(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		command []string
		flag    string
		value   string
		want    string
	}{
		{[]string{"run"}, "users", "010", "10"},
		{[]string{"run"}, "client-cpus", "01", "1"},
		{[]string{"run"}, "retries", "08", "8"},
		{[]string{"run"}, "seed", "0100", "100"},
		{[]string{"build"}, "warehouses", "07777777", "7777777"},
		{[]string{"build"}, "workers", "010", "10"},
		{[]string{"build"}, "seed", "18446744073709551615", "18446744073709551615"},
		{[]string{"instance", "create"}, "port", "05432", "5432"},
		{[]string{"instance", "create"}, "max-connections", "0200", "200"},
		{[]string{"backup"}, "jobs", "010", "10"},
		{[]string{"restore"}, "jobs", "010", "10"},
	} {
		cmd, _, err := rootCmd().Find(c.command)
		if err != nil {
			t.Fatalf("%v: %v", c.command, err)
		}
		if err := cmd.ParseFlags([]string{"--" + c.flag, c.value}); err != nil {
			t.Errorf("%s --%s %s: %v", cmd.CommandPath(), c.flag, c.value, err)
			continue
		}
		if got := cmd.Flags().Lookup(c.flag).Value.String(); got != c.want {
			t.Errorf("%s --%s %s reads %s, want %s", cmd.CommandPath(), c.flag, c.value, got, c.want)
		}
	}
	refused(t, `invalid argument "0x10" for "--users" flag: not a whole number in decimal digits (see storbench run --help)`,
		"run", "--dsn", "sqlite:x.db", "--users", "0x10")
	refused(t, `invalid argument "99999999999999999999" for "--warehouses" flag: out of range (see storbench build --help)`,
		"build", "--dsn", "sqlite:x.db", "--warehouses", "99999999999999999999")
}

// The hint after a flag error names the command whose flags they are, with its
// parents: "storbench instance create --help", not "storbench create --help".
func TestFlagErrorNamesTheWholeCommand(t *testing.T) {
	t.Parallel()
	for _, args := range [][]string{
		{"instance", "create", "--no-such-flag"},
		{"results", "export", "--no-such-flag"},
		{"study", "plan", "--no-such-flag"},
	} {
		want := "(see storbench " + strings.Join(args[:2], " ") + " --help)"
		refused(t, want, args...)
	}
}

// TestFlagNamesAreFlags: each setting whose flag is spelt otherwise than its key names
// a flag some command has, where the key's plain spelling is no flag of any (so the
// entry is needed), and the owners' errors print with it.
func TestFlagNamesAreFlags(t *testing.T) {
	t.Parallel()
	flags := map[string]bool{}
	var walk func(c *cobra.Command)
	walk = func(c *cobra.Command) {
		c.Flags().VisitAll(func(f *pflag.Flag) { flags["--"+f.Name] = true })
		for _, sub := range c.Commands() {
			walk(sub)
		}
	}
	walk(rootCmd())
	for key := range flagNames {
		if !flags[flagName(key)] || flags[input.Flag(key)] {
			t.Errorf("setting %s: flag %s is no flag, or %s is one", key, flagName(key), input.Flag(key))
		}
	}
	refused(t, "invalid input: give --profile NAME (see storbench fio --list) or --all", "fio", "--path", t.TempDir())
	refused(t, "invalid input: --metrics-device picks disks of a --metrics-host; on this host give --path DIR",
		"run", "--metrics-only", "--duration", "1s", "--metrics-device", "sda")
}

// The command line and a study cannot disagree on a run's settings: each key of the
// driver's workload, which a study's workload block embeds, is a flag of run, bound
// by the driver's own AddFlags, and the study decodes it.
func TestRunSettingsAreStudySettings(t *testing.T) {
	t.Parallel()
	run, _, err := rootCmd().Find([]string{"run"})
	if err != nil {
		t.Fatal(err)
	}
	keys := yamlfile.Keys(reflect.TypeFor[driver.Workload]())
	if len(keys) < 7 {
		t.Fatalf("driver.Workload's keys: %v", keys)
	}
	studyKeys := yamlfile.Keys(reflect.TypeFor[study.Workload]())
	for _, key := range keys {
		if run.Flags().Lookup(strings.TrimPrefix(flagName(key), "--")) == nil {
			t.Errorf("the study's workload.%s is no flag of run (%s)", key, flagName(key))
		}
		if !slices.Contains(studyKeys, key) {
			t.Errorf("driver.Workload's %s is not a key of a study's workload", key)
		}
	}
}

// Every command's argument errors are bad input (exit 2, one line) by type, whatever
// cobra's or a command's own validator words them: each command that refuses five
// arguments is given five.
func TestEveryArgumentErrorIsUsage(t *testing.T) {
	t.Setenv("STORBENCH_HOME", t.TempDir())
	extra := []string{"a", "b", "c", "d", "e"}
	tried := 0
	var walk func(c *cobra.Command, path []string)
	walk = func(c *cobra.Command, path []string) {
		for _, sub := range c.Commands() {
			walk(sub, append(path, sub.Name()))
		}
		if !c.Runnable() || c.Args == nil || c.Args(c, extra) == nil {
			return
		}
		tried++
		refused(t, "(see storbench --help)", append(path, extra...)...)
	}
	walk(rootCmd(), nil)
	if tried < 20 {
		t.Errorf("%d commands refuse five arguments, want every one that takes fewer", tried)
	}
	refused(t, `invalid input: unknown command "nosuch" for "storbench"`, "nosuch")
	refused(t, `invalid input: required flag(s) "warehouses" not set`, "build", "--dsn", "sqlite:x.db")
}
