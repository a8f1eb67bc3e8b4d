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
	// exitWaiting: bridge run --once ended with jobs held (no member, no minutes).
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
	root.SetArgs(args)
	err := root.ExecuteContext(ctx)
	if err == nil {
		return exitOK
	}
	fmt.Fprintf(stderr, "bridge: %v\n", err)
	var ee *exitError
	if errors.As(err, &ee) {
		return ee.code
	}
	if isFlagError(err) {
		return exitUsage
	}
	return exitFailed
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
	root.SetFlagErrorFunc(func(_ *cobra.Command, err error) error { return flagError{err} })
	root.AddCommand(newRunCmd(), newJobsCmd(), newSandboxCmd(), newAPICmd(), newWebhooksCmd(), newEndpointsCmd(), newDeliveriesCmd(), newSourcesCmd(), newIdentitiesCmd(), newExportCmd())
	return root
}
