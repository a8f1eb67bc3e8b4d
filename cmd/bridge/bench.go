package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"slices"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/transcript-bridge/bridge/bench"
)

// newBenchCmd is bridge bench: the published workloads, each beside its reference in the same
// process run, printed as one table (or one JSON document).
func newBenchCmd() *cobra.Command {
	var asJSON, short, report bool
	var plot, heapProfiles string                                    // heapProfiles: bench soak's
	var relayOpts, duration = bench.RelayOptions{}, time.Duration(0) // bench relay's and soak's flags
	cmd := &cobra.Command{
		Use:   "bench",
		Short: "Measure the relay, uploads, discovery, tracking, a backfill and a soak beside their references",
		Long: `bench runs a workload and its reference side by side in this process and prints a table:
figure, bridge, reference, ratio, goal, pass/fail. "bench all" runs every workload but the
soak (an hour), each in a process of its own (this binary again), so what one leaves
in memory does not count in the next one's peak RSS. Exit 0 when every figure meets its goal,
1 when one misses it. BENCHMARKS.md says what bounds each figure.`,
	}
	cmd.PersistentFlags().BoolVar(&asJSON, "json", false, `print {"results":[{name, value, unit, reference, ratio, goal, pass}]} instead of the table`)
	cmd.PersistentFlags().BoolVar(&short, "short", false, "a small run: a smoke test of the workloads, not a measurement")
	cmd.PersistentFlags().StringVar(&plot, "plot", "", "also write the workloads' charts (relay throughput against batch size, lag percentiles) to this PNG file")
	cmd.PersistentFlags().BoolVar(&report, "child-report", false, "print results and charts as one JSON document, for bench all's child processes")
	cmd.PersistentFlags().MarkHidden("child-report")
	run := func(names []string, isolate bool) func(*cobra.Command, []string) error {
		return func(c *cobra.Command, _ []string) error {
			dir, err := os.MkdirTemp("", "bridge-bench-")
			if err != nil {
				return err
			}
			defer os.RemoveAll(dir)
			env := bench.Env{Dir: dir, Short: short, Log: c.ErrOrStderr(), Relay: relayOpts, Duration: duration, HeapProfiles: heapProfiles}
			var results []bench.Result
			var charts []bench.Chart
			for _, name := range names {
				env.Logf("bench %s: running", name)
				var rep *bench.Report
				if isolate {
					rep, err = benchChild(c, name, short)
				} else {
					rep, err = bench.Lookup(name)(c.Context(), env)
				}
				if err != nil {
					return fmt.Errorf("bench %s: %w", name, err)
				}
				results = append(results, rep.Results...)
				charts = append(charts, rep.Charts...)
			}
			if report {
				return json.NewEncoder(c.OutOrStdout()).Encode(childReport{Results: results, Charts: charts})
			}
			if plot != "" {
				if err := writePlot(plot, charts); err != nil {
					return fmt.Errorf("bench: plot %s: %w", plot, err)
				}
			}
			out := c.OutOrStdout()
			if asJSON {
				err = bench.WriteJSON(out, results)
			} else {
				err = bench.WriteTable(out, results)
			}
			if err != nil {
				return err
			}
			var missed []string
			for _, r := range results {
				if !r.Pass {
					missed = append(missed, r.Name)
				}
			}
			if len(missed) > 0 {
				return &exitError{code: exitFailed, err: fmt.Errorf("bench: %d of %d figures missed their goal: %s", len(missed), len(results), strings.Join(missed, ", "))}
			}
			return nil
		}
	}
	for _, name := range bench.Names() {
		sub := &cobra.Command{Use: name, Short: "Run the " + name + " workload and its reference", Args: cobra.NoArgs, RunE: run([]string{name}, false)}
		benchFlags(sub, name, &relayOpts, &duration, &heapProfiles)
		cmd.AddCommand(sub)
	}
	all := slices.DeleteFunc(bench.Names(), func(n string) bool { return n == "soak" }) // it runs an hour
	cmd.AddCommand(&cobra.Command{Use: "all", Short: "Run every workload but soak: " + strings.Join(all, ", "), Args: cobra.NoArgs, RunE: run(all, true)}, newSoakPeerCmd())
	return cmd
}

// benchFlags gives workload name's subcommand its own flags: where the relay runs, how long
// the soak runs and where it writes heap profiles.
func benchFlags(sub *cobra.Command, name string, relayOpts *bench.RelayOptions, duration *time.Duration, heapProfiles *string) {
	f := sub.Flags()
	switch name {
	case "relay":
		f.StringVar(&relayOpts.Store, "store", "sqlite", "the store: sqlite (the embedded default) or postgres (a database of the run's own, dropped afterwards)")
		f.StringVar(&relayOpts.Bus, "bus", "sql", "the bus with --store postgres: sql (the store's own) or nats (a stream of the run's own, deleted afterwards)")
		f.IntVar(&relayOpts.Replicas, "replicas", 1, "relays sharing the work with --store postgres, each as a replica of bridge run; above 1 also runs one replica for relay_scaling")
		f.StringVar(&relayOpts.DSN, "dsn", "", "the PostgreSQL server (default $BRIDGE_TEST_POSTGRES_DSN)")
		f.StringVar(&relayOpts.NATSURL, "nats-url", "", "the NATS server (default $BRIDGE_TEST_NATS_URL)")
		f.IntVar(&relayOpts.NATSMaxInFlight, "nats-max-in-flight", 0, "bus.max_in_flight of the NATS bus (default its own, 100; 1 is strict order)")
		f.StringVar(&relayOpts.CPUProfile, "cpuprofile", "", "with --store postgres, write a CPU profile of the measured drain to this file, for go tool pprof")
	case "soak":
		f.DurationVar(duration, "duration", 0, "how long the soak runs (default 1h; 2m with --short)")
		f.StringVar(heapProfiles, "heap-profiles", "", "write a heap profile (in use) into this folder at each sample, for go tool pprof -diff_base")
	}
}

// newSoakPeerCmd is bridge bench soak-peer, hidden: the soak's counterparts (the sandbox and
// the endpoints' receiver) in a process of their own, which bench soak starts and stops by
// closing its input.
func newSoakPeerCmd() *cobra.Command {
	var dir string
	var period time.Duration
	cmd := &cobra.Command{
		Use: bench.SoakPeerCommand, Short: "The soak's sandbox and receiver (started by bench soak)", Args: cobra.NoArgs, Hidden: true,
		RunE: func(c *cobra.Command, _ []string) error {
			return bench.SoakPeer(c.Context(), dir, period, c.InOrStdin(), c.OutOrStdout())
		},
	}
	cmd.Flags().StringVar(&dir, "dir", "", "the folder of the sandbox's database and media")
	cmd.Flags().DurationVar(&period, "fault-period", time.Minute, "faults for a quarter of every period")
	return cmd
}

// childReport is what a child of bench all prints (--child-report).
type childReport struct {
	Results []bench.Result `json:"results"`
	Charts  []bench.Chart  `json:"charts"`
}

// benchChild runs workload name in a child process (this executable: bridge bench name
// --child-report), its progress lines on c's stderr, and returns its report. A workload whose
// figures miss their goals exits 1 and still reports; it fails when the child cannot run or
// prints no report.
func benchChild(c *cobra.Command, name string, short bool) (*bench.Report, error) {
	exe, err := os.Executable()
	if err != nil {
		return nil, err
	}
	args := []string{"bench", name, "--child-report"}
	if short {
		args = append(args, "--short")
	}
	child := exec.CommandContext(c.Context(), exe, args...)
	child.Env = append(os.Environ(), "BRIDGE_TEST_CHILD=1") // a test binary runs as bridge (TestMain)
	child.Stderr = c.ErrOrStderr()
	out, err := child.Output()
	var ee *exec.ExitError
	if err != nil && !(errors.As(err, &ee) && ee.ExitCode() == exitFailed) {
		return nil, fmt.Errorf("child process: %w", err)
	}
	var rep childReport
	if err := json.Unmarshal(out, &rep); err != nil {
		return nil, fmt.Errorf("child process printed no report (%w): %q", err, out)
	}
	return &bench.Report{Results: rep.Results, Charts: rep.Charts}, nil
}

// writePlot draws charts into the PNG file path.
func writePlot(path string, charts []bench.Chart) error {
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	if err := bench.Plot(f, charts); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}
