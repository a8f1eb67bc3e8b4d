package main

import (
	"fmt"
	"os"
	"strings"

	"github.com/spf13/cobra"

	"github.com/transcript-bridge/bridge/bench"
)

// newBenchCmd is bridge bench: the published workloads, each beside its reference in the same
// process run, printed as one table (or one JSON document).
func newBenchCmd() *cobra.Command {
	var asJSON, short bool
	var plot string
	cmd := &cobra.Command{
		Use:   "bench",
		Short: "Measure the relay, uploads, discovery and tracking beside their references",
		Long: `bench runs a workload and its reference side by side in this process and prints a table:
figure, bridge, reference, ratio, goal, pass/fail. "bench all" runs every workload.
Exit 0 when every figure meets its goal, 1 when one misses it. BENCHMARKS.md says what bounds
each figure.`,
	}
	cmd.PersistentFlags().BoolVar(&asJSON, "json", false, `print {"results":[{name, value, unit, reference, ratio, goal, pass}]} instead of the table`)
	cmd.PersistentFlags().BoolVar(&short, "short", false, "a small run: a smoke test of the workloads, not a measurement")
	cmd.PersistentFlags().StringVar(&plot, "plot", "", "also write the workloads' charts (relay throughput against batch size, lag percentiles) to this PNG file")
	run := func(names []string) func(*cobra.Command, []string) error {
		return func(c *cobra.Command, _ []string) error {
			dir, err := os.MkdirTemp("", "bridge-bench-")
			if err != nil {
				return err
			}
			defer os.RemoveAll(dir)
			env := bench.Env{Dir: dir, Short: short, Log: c.ErrOrStderr()}
			var results []bench.Result
			var charts []bench.Chart
			for _, name := range names {
				env.Logf("bench %s: running", name)
				rep, err := bench.Lookup(name)(c.Context(), env)
				if err != nil {
					return fmt.Errorf("bench %s: %w", name, err)
				}
				results = append(results, rep.Results...)
				charts = append(charts, rep.Charts...)
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
		cmd.AddCommand(&cobra.Command{Use: name, Short: "Run the " + name + " workload and its reference", Args: cobra.NoArgs, RunE: run([]string{name})})
	}
	cmd.AddCommand(&cobra.Command{Use: "all", Short: "Run every workload: " + strings.Join(bench.Names(), ", "), Args: cobra.NoArgs, RunE: run(bench.Names())})
	return cmd
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
