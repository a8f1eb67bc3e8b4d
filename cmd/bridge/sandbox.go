package main

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"os"
	"time"

	"github.com/spf13/cobra"

	"github.com/transcript-bridge/bridge/sandbox"
)

// sandboxFlags are the options of `bridge sandbox`.
type sandboxFlags struct {
	addr       string
	db         string
	seed       string
	timeScale  float64
	faults     string
	faultSeed  int64
	mediaDir   string
	reset      bool
	stallAfter time.Duration
}

func newSandboxCmd() *cobra.Command {
	var f sandboxFlags
	cmd := &cobra.Command{
		Use:   "sandbox",
		Short: "Run the local emulator of the transcription API",
		Long: `Run the sandbox: a stateful emulator of the transcription API under /developer/v1, with
seeded workspaces, a controllable processing speed and fault injection. It prints its base URL
and, when it generated keys, the keys (only their hashes are stored: keep them).`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error { return runSandbox(cmd, f) },
	}
	fl := cmd.Flags()
	fl.StringVar(&f.addr, "addr", "127.0.0.1:8090", "address to listen on")
	fl.StringVar(&f.db, "db", "./data/sandbox-server.db", "SQLite file holding the sandbox state (\":memory:\" keeps it in memory); bridge run's in-process sandbox keeps its own in ./data/sandbox.db")
	fl.StringVar(&f.seed, "seed", "", "seed file (see configs/sandbox.yaml); empty creates a demo workspace with generated keys")
	fl.Float64Var(&f.timeScale, "time-scale", 1, "multiplier of every processing time (0.01 finishes a one-hour file in 2.4 s)")
	fl.StringVar(&f.faults, "faults", "", `random faults, e.g. "5xx=0.05,429=0.05,reset=0.01,latency=20ms"`)
	fl.Int64Var(&f.faultSeed, "seed-faults", 1, "seed of the fault RNG, for reproducible runs")
	fl.StringVar(&f.mediaDir, "media-dir", "", "folder for uploaded files awaiting processing (default: the system temp folder)")
	fl.BoolVar(&f.reset, "reset", false, "wipe the database and apply the seed again (new generated keys)")
	fl.DurationVar(&f.stallAfter, "stall-timeout", 60*time.Second, "an upload sending no data this long gets 408 upload_timeout")
	return cmd
}

func runSandbox(cmd *cobra.Command, f sandboxFlags) error {
	ctx := cmd.Context()
	out := cmd.OutOrStdout()
	faults, err := sandbox.ParseFaults(f.faults)
	if err != nil {
		return usageError("--faults: %v", err)
	}
	if f.timeScale <= 0 {
		return usageError("--time-scale %v: must be greater than 0", f.timeScale)
	}
	var seed *sandbox.Seed
	if f.seed != "" {
		if seed, err = sandbox.LoadSeed(f.seed); err != nil {
			return usageError("--seed: %v", err)
		}
	}
	log := newLogger(cmd.ErrOrStderr())
	if _, err := os.Stat(f.db); err == nil && seed != nil && !f.reset {
		log.Warn(fmt.Sprintf("%s already holds a sandbox's state: --seed %s applies only to a new database, so its keys and workspaces are not loaded; add --reset to start over from the seed", f.db, f.seed))
	}
	srv, err := sandbox.New(ctx, sandbox.Options{
		DBPath: f.db, Seed: seed, TimeScale: f.timeScale, Faults: faults, FaultSeed: f.faultSeed,
		MediaDir: f.mediaDir, StallTimeout: f.stallAfter,
		Logf: func(format string, args ...any) { log.Warn(fmt.Sprintf(format, args...)) },
	})
	if err != nil {
		return fmt.Errorf("start sandbox: %w", err)
	}
	defer srv.Close()
	if f.reset {
		if _, err := srv.Reset(ctx); err != nil {
			return fmt.Errorf("reset sandbox: %w", err)
		}
	}
	ln, err := net.Listen("tcp", f.addr)
	if err != nil {
		return &exitError{code: exitFailed, err: fmt.Errorf("listen on %s: %w", f.addr, err)}
	}
	base := "http://" + ln.Addr().String() + sandbox.BasePath
	fmt.Fprintf(out, "sandbox: serving the transcription API at %s\n", base)
	fmt.Fprintf(out, "sandbox: OpenAPI description at %s/openapi.yaml, control surface at http://%s%s/\n", base, ln.Addr(), sandbox.ControlPath)
	if len(srv.GeneratedKeys) > 0 {
		fmt.Fprintln(out, "sandbox: generated keys (shown once; only their hashes are stored):")
		for _, k := range srv.GeneratedKeys {
			fmt.Fprintf(out, "  %-12s %-24s %s\n", k.Workspace, k.Member, k.Key)
		}
	} else if seed == nil {
		fmt.Fprintf(out, "sandbox: using the existing state in %s; its generated keys were shown when it was created (--reset makes new ones)\n", f.db)
	}
	hs := &http.Server{Handler: srv, ReadHeaderTimeout: 30 * time.Second}
	errc := make(chan error, 1)
	go func() { errc <- hs.Serve(ln) }()
	select {
	case err := <-errc:
		if !errors.Is(err, http.ErrServerClosed) {
			return fmt.Errorf("serve: %w", err)
		}
	case <-ctx.Done():
		sctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		hs.Shutdown(sctx)
		fmt.Fprintln(out, "sandbox: stopped")
	}
	return nil
}
