// Command storbench measures what storage does to a database: it builds a TPC-C
// database, drives it the way HammerDB's TPROC-C does and checks its consistency.
// This file only wires flags to the packages under internal/.
package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"strings"
	"syscall"

	"github.com/spf13/cobra"
	"golang.org/x/sys/unix"

	_ "github.com/storbench/storbench/internal/engine/all" // every engine registers itself
	"github.com/storbench/storbench/internal/input"
)

// version is set at link time (-ldflags "-X main.version=…").
var version = "dev"

// exitCode distinguishes bad input (2) from a failed operation (1).
type exitCode int

func (e exitCode) Error() string { return fmt.Sprintf("exit %d", int(e)) }

func main() {
	// Whatever umask it was started with, what storbench and its children (initdb,
	// mariadbd, pg_basebackup, mariadb-dump, fio…) create is writable by its owner
	// alone: results, reports, exports, backups, data files.
	unix.Umask(unix.Umask(0o022) | 0o022)
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	code := execute(ctx, os.Args[1:], os.Stdout, os.Stderr)
	stop()
	os.Exit(code)
}

// execute runs one command line and returns its exit code: 0, 1 for a failure, 2 for
// bad input.
func execute(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	root := rootCmd()
	root.SetArgs(args)
	root.SetOut(stdout)
	root.SetErr(stderr)
	// Cobra checks the command line (the command, its arguments, its flags) before it
	// runs the command: an error before the command ran is a usage error.
	accepted := false
	markRun(root, &accepted)
	err := root.ExecuteContext(ctx)
	if err != nil && !accepted {
		err = usageError{err}
	}
	return exitStatus(stderr, err)
}

// markRun makes every command of the tree set *ran as it starts to run.
func markRun(c *cobra.Command, ran *bool) {
	if run := c.RunE; run != nil {
		c.RunE = func(c *cobra.Command, args []string) error {
			*ran = true
			return run(c, args)
		}
	}
	if run := c.Run; run != nil {
		c.Run = func(c *cobra.Command, args []string) {
			*ran = true
			run(c, args)
		}
	}
	for _, sub := range c.Commands() {
		markRun(sub, ran)
	}
}

// usageError is a command line cobra refused: an unknown command, wrong arguments, a
// required flag missing.
type usageError struct{ error }

func (e usageError) Unwrap() error { return e.error }

// rootCmd is the whole command tree: every verb and its flags.
func rootCmd() *cobra.Command {
	root := &cobra.Command{
		Use:           "storbench",
		Short:         "What does this storage do to my database? TPC-C derived OLTP benchmark",
		SilenceUsage:  true,
		SilenceErrors: true,
	}
	root.SetFlagErrorFunc(func(c *cobra.Command, err error) error {
		return fmt.Errorf("%w: %v (see %s --help)", input.ErrInvalid, err, c.CommandPath())
	})
	root.AddCommand(buildCmd(), runCmd(), checkCmd(), dropCmd(), instanceCmd(), backupCmd(), restoreCmd(), fioCmd(),
		studyCmd(), resultsCmd(), quickCmd(), reportCmd(), compareCmd(), versionCmd())
	return root
}

// exitStatus prints an error as one line and returns the exit code.
func exitStatus(stderr io.Writer, err error) int {
	var code exitCode
	switch {
	case err == nil:
		return 0
	case errors.As(err, &code):
		return int(code)
	case errors.Is(err, input.ErrInvalid):
		printError(stderr, input.Render(err, flagName))
		return 2
	case errors.As(err, new(usageError)):
		printError(stderr, fmt.Sprintf("%v: %v (see storbench --help)", input.ErrInvalid, err))
		return 2
	}
	printError(stderr, err.Error())
	return 1
}

// flagName names a setting's key, as an owner's input.Error names it, by the flag that
// sets it: --size for size, --latency-limit for latency_limit, and as flagNames says
// where the flag is spelt otherwise.
func flagName(key string) string {
	if f, ok := flagNames[key]; ok {
		return "--" + f
	}
	return input.Flag(key)
}

// flagNames are the flags spelt otherwise than their setting's key: a list in a study
// file is one flag repeated on the command line.
var flagNames = map[string]string{"profiles": "profile", "metrics_devices": "metrics-device", "interval": "metrics-interval"}

// printError prints msg on one line: driver errors can span several (one per address
// tried).
func printError(stderr io.Writer, msg string) {
	fmt.Fprintln(stderr, "storbench:", strings.Join(strings.Fields(strings.ReplaceAll(msg, "\n", " ; ")), " "))
}
