// Package bench runs the bridge's published workloads, each beside its reference (the bare
// limit the same machine reaches without the bridge), and reports the figures: bridge bench
// prints them as a table or as JSON, and BENCHMARKS.md holds a run's output.
//
// A workload registers itself (Register) under the name bridge bench takes as a subcommand.
package bench

import (
	"context"
	"fmt"
	"io"
	"slices"
	"strings"
	"sync"
	"time"
)

// Result is one figure of a workload.
type Result struct {
	// Name identifies the figure (relay_throughput, upload_throughput, ...); stable across runs.
	Name string `json:"name"`
	// Value is what the bridge reached.
	Value float64 `json:"value"`
	// Unit is Value's (and Reference's) unit: deliveries/s, MiB/s, ms, MiB, requests/min, s.
	Unit string `json:"unit"`
	// Reference is what the reference workload reached in the same run (nil: the figure has
	// none, it is judged against its goal alone).
	Reference *float64 `json:"reference"`
	// ReferenceName says what the reference is ("bare net/http POST loop", "curl -T").
	ReferenceName string `json:"reference_name,omitempty"`
	// Ratio is Value / Reference (nil without a reference).
	Ratio *float64 `json:"ratio"`
	// Goal is the goal in words, as the table prints it.
	Goal string `json:"goal"`
	// Pass reports whether the goal is met.
	Pass bool `json:"pass"`
}

// Goal is what a figure must reach; nil bounds do not apply (Ref makes one: Goal{MinRatio:
// Ref(0.5), MinValue: Ref(10000)}).
type Goal struct {
	// MinRatio and MaxRatio bound Value / Reference.
	MinRatio, MaxRatio *float64
	// MinValue and MaxValue bound Value.
	MinValue, MaxValue *float64
}

// Figure returns the Result of value (and reference, when ref is not nil) against g. A ratio
// bound with no reference (or a zero one) is not met.
func (g Goal) Figure(name string, value float64, unit string, ref *float64, refName string) Result {
	r := Result{Name: name, Value: value, Unit: unit, Reference: ref, ReferenceName: refName, Goal: g.String(unit), Pass: true}
	if ref != nil && *ref != 0 {
		ratio := value / *ref
		r.Ratio = &ratio
	}
	if g.MinRatio != nil && (r.Ratio == nil || *r.Ratio < *g.MinRatio) ||
		g.MaxRatio != nil && (r.Ratio == nil || *r.Ratio > *g.MaxRatio) ||
		g.MinValue != nil && value < *g.MinValue || g.MaxValue != nil && value > *g.MaxValue {
		r.Pass = false
	}
	return r
}

// Ref returns a pointer to v: a Goal bound, or Goal.Figure's reference.
func Ref(v float64) *float64 { return &v }

// String says g in words: "≥ 0.5× ref, ≥ 10000 deliveries/s".
func (g Goal) String(unit string) string {
	var parts []string
	if g.MinRatio != nil {
		parts = append(parts, fmt.Sprintf("≥ %g× ref", *g.MinRatio))
	}
	if g.MaxRatio != nil {
		parts = append(parts, fmt.Sprintf("≤ %g× ref", *g.MaxRatio))
	}
	if g.MinValue != nil {
		parts = append(parts, fmt.Sprintf("≥ %g %s", *g.MinValue, unit))
	}
	if g.MaxValue != nil {
		parts = append(parts, fmt.Sprintf("≤ %g %s", *g.MaxValue, unit))
	}
	if len(parts) == 0 {
		return "(reported)"
	}
	return strings.Join(parts, ", ")
}

// Env is what a workload runs with.
type Env struct {
	// Dir is a scratch directory the workload may fill; the caller removes it.
	Dir string
	// Short runs a smaller workload: a smoke test (CI), not a measurement.
	Short bool
	// Log receives progress lines for a human (never nil: io.Discard when quiet).
	Log io.Writer
	// Duration is how long a workload that runs for a set time runs (bridge bench soak
	// --duration); zero is its default.
	Duration time.Duration
	// HeapProfiles, when set, is a folder where a workload that samples itself (the soak)
	// writes a heap profile at each sample (bridge bench soak --heap-profiles).
	HeapProfiles string
	// Relay says where the relay workload runs (bridge bench relay's --store, --bus,
	// --replicas, --dsn, --nats-url); the zero value is the embedded SQLite default.
	Relay RelayOptions
}

// Logf writes one progress line.
func (e Env) Logf(format string, args ...any) {
	fmt.Fprintf(e.Log, format+"\n", args...)
}

// Report is what a workload returns: its figures and, for the plot, its series.
type Report struct {
	Results []Result
	// Charts are plotted by Plot (bridge bench --plot).
	Charts []Chart
}

// Chart is one plot: lines over a shared x axis.
type Chart struct {
	Title, XLabel, YLabel string
	Lines                 []Line
	// LogX plots the x axis on a log10 scale (batch sizes 1, 8, 64, 256, ...); points with
	// x <= 0 are left out.
	LogX bool
}

// Line is one series of a chart.
type Line struct {
	Name   string
	Points []Point
}

// Point is one (x, y) of a line.
type Point struct{ X, Y float64 }

// Workload runs one measured workload and its reference. It fails when the workload cannot run
// (a missing tool, a setup error); a figure that misses its goal is a Result with Pass false,
// not an error.
type Workload func(ctx context.Context, env Env) (*Report, error)

var (
	mu        sync.Mutex
	workloads = map[string]Workload{}
	order     []string
)

// Register makes w available under name; workloads register themselves from init. It panics
// on a name registered twice.
func Register(name string, w Workload) {
	mu.Lock()
	defer mu.Unlock()
	if _, ok := workloads[name]; ok {
		panic("bench: workload registered twice: " + name)
	}
	workloads[name] = w
	order = append(order, name)
}

// Lookup returns the workload registered under name, or nil.
func Lookup(name string) Workload {
	mu.Lock()
	defer mu.Unlock()
	return workloads[name]
}

// firsts are the workloads bridge bench all runs first, in this order; others follow in the
// order they registered.
var firsts = []string{"relay", "upload", "discovery", "tracking"}

// Names lists the registered workloads in the order bridge bench all runs them.
func Names() []string {
	mu.Lock()
	defer mu.Unlock()
	var out []string
	for _, n := range firsts {
		if _, ok := workloads[n]; ok {
			out = append(out, n)
		}
	}
	for _, n := range order {
		if !slices.Contains(firsts, n) {
			out = append(out, n)
		}
	}
	return out
}
