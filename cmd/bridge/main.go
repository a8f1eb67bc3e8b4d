// Command bridge is Transcript Bridge: the sandbox of the transcription API today, and the
// bridge, relay and exports as they land. main only wires; each subcommand lives in its own file.
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
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	code := Run(ctx, os.Args[1:], os.Stdout, os.Stderr)
	stop()
	os.Exit(code)
}

// exitError carries a specific exit code out of a subcommand.
type exitError struct {
	code int
	err  error
}

func (e *exitError) Error() string { return e.err.Error() }
func (e *exitError) Unwrap() error { return e.err }

// Exit codes, mapped from errors in one place (Run).
const (
	exitOK     = 0
	exitFailed = 1 // the operation failed (an upstream error, a runtime failure)
	exitUsage  = 2 // bad flags, bad config: nothing was started
	// exitWaiting: bridge run --once ended with jobs held (no member, no minutes); bridge
	// migrate --status found migrations pending.
	exitWaiting = 3
)

// usageError marks an error as the caller's: bad flags or configuration.
func usageError(format string, args ...any) error {
	return &exitError{code: exitUsage, err: fmt.Errorf(format, args...)}
}

// Run executes the command line args and returns the process exit code. Errors are printed as
// one line on stderr.
func Run(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	root := newRootCmd(stdout, stderr)
	strictArgs(root)
	root.SetArgs(args)
	cmd, err := root.ExecuteContextC(ctx)
	if err == nil {
		return exitOK
	}
	code := exitCode(err)
	hint := ""
	if code == exitUsage && cmd != nil {
		hint = fmt.Sprintf("Run '%s --help' for usage.", cmd.CommandPath())
	}
	printError(root.ErrOrStderr(), err, hint)
	return code
}

// exitCode maps an error to the process exit code, in this one place: usage errors (bad
// flags, arguments, subcommands or configuration) are 2, an explicit exitError keeps its
// code, anything else failed at run time and is 1.
func exitCode(err error) int {
	var ee *exitError
	switch {
	case err == nil:
		return exitOK
	case errors.As(err, &ee):
		return ee.code
	case isFlagError(err), strings.HasPrefix(err.Error(), "unknown command "), strings.HasPrefix(err.Error(), "required flag"):
		return exitUsage
	}
	return exitFailed
}

// strictArgs makes every argument check of the tree a usage error (an extra argument to a
// command that takes none is an "unexpected argument"), and a group command (jobs, api, …)
// given an unknown subcommand, or none, fail with exit 2 (printing its help on stderr when
// none is given).
func strictArgs(c *cobra.Command) {
	if c.Args != nil {
		check := c.Args
		c.Args = func(cmd *cobra.Command, args []string) error {
			if err := check(cmd, args); err != nil {
				var ee *exitError
				if errors.As(err, &ee) {
					return err
				}
				if !cmd.HasSubCommands() && len(args) > 0 && strings.HasPrefix(err.Error(), "unknown command ") {
					// cobra.NoArgs calls an extra argument to a leaf command a command.
					return usageError("unexpected argument %q for %q", args[0], cmd.CommandPath())
				}
				return usageError("%v", err)
			}
			return nil
		}
	}
	if c.HasSubCommands() && c.Run == nil && c.RunE == nil && c.HasParent() {
		c.Args = cobra.ArbitraryArgs
		c.RunE = func(cmd *cobra.Command, args []string) error {
			if len(args) > 0 {
				return usageError("unknown command %q for %q", args[0], cmd.CommandPath())
			}
			// No subcommand: the help goes to stderr (unless every line there is JSON), and the
			// exit code says nothing was done.
			if o, ok := cmd.ErrOrStderr().(*logOutput); !ok || !o.json {
				cmd.SetOut(cmd.ErrOrStderr())
				if err := cmd.Help(); err != nil {
					return err
				}
			}
			return usageError("%q needs a subcommand", cmd.CommandPath())
		}
	}
	for _, sub := range c.Commands() {
		strictArgs(sub)
	}
}

// flagError wraps cobra's flag parsing failures so Run maps them to exitUsage.
type flagError struct{ error }

func isFlagError(err error) bool {
	var fe flagError
	return errors.As(err, &fe)
}

func newRootCmd(stdout, stderr io.Writer) *cobra.Command {
	root := &cobra.Command{
		Use:           "bridge",
		Short:         "Transcript Bridge: connect recordings to the transcription API, and emulate it locally",
		SilenceUsage:  true,
		SilenceErrors: true,
	}
	root.SetOut(stdout)
	root.SetErr(stderr)
	addLogFlags(root) // --log-level, --log-format: see log.go
	root.SetFlagErrorFunc(func(_ *cobra.Command, err error) error { return flagError{err} })
	root.Version = readBuildInfo().String()
	root.SetVersionTemplate("{{.Version}}\n")
	root.AddCommand(newVersionCmd(), newRunCmd(), newJobsCmd(), newSandboxCmd(), newAPICmd(), newWebhooksCmd(), newEndpointsCmd(), newDeliveriesCmd(), newSourcesCmd(), newIdentitiesCmd(), newExportCmd(), newMigrateCmd(), newStoreCmd(), newDoctorCmd(), newHealthcheckCmd())
	root.AddCommand(newAuditCmd()) // the status page's audit log: see audit.go
	root.AddCommand(newBenchCmd())
	root.AddCommand(newForgetCmd(), newRetentionCmd()) // privacy: see forget.go and retention.go
	return root
}
