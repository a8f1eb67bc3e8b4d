package metrics

import (
	"context"
	"log/slog"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/transcript-bridge/bridge/bridge"
)

// Store is what StoreCollector reads of the store at each scrape; bridge.Store implements it.
type Store interface {
	Counts(ctx context.Context) (map[bridge.State]int, error)
	Jobs(ctx context.Context, f bridge.JobFilter) ([]bridge.Job, error)
	Deliveries(ctx context.Context, f bridge.DeliveryFilter) ([]bridge.Delivery, error)
	DisabledEndpoints(ctx context.Context) (map[string]string, error)
	FailingEndpoints(ctx context.Context) ([]bridge.EndpointAlert, error)
	Runs(ctx context.Context, export string, limit int) ([]bridge.ExportRun, error)
}

// The store's series, read at scrape time.
var (
	jobsDesc = prometheus.NewDesc("bridge_jobs",
		"Jobs in the store by state (every replica of one store reports the same figures).", []string{"state"}, nil)
	heldDesc = prometheus.NewDesc("bridge_jobs_held",
		"Held jobs in the store by typed hold reason (unmapped, no_balance, source_unavailable, source_blocked, author_refused, upstream_setting).", []string{"reason"}, nil)
	deadDesc = prometheus.NewDesc("bridge_deliveries_dead",
		"Dead letters in the store by endpoint: deliveries given up, waiting for a replay.", []string{"endpoint"}, nil)
	disabledDesc = prometheus.NewDesc("bridge_endpoint_disabled",
		"Whether a webhook endpoint is switched off (1: disabled after 410 Gone, until bridge endpoints enable; 0: enabled).", []string{"endpoint"}, nil)
	failingDesc = prometheus.NewDesc("bridge_endpoint_failing",
		"Whether a webhook endpoint has been failing for its alert_after (1: endpoint.failing was sent, until an attempt is delivered again; 0: not).", []string{"endpoint"}, nil)
	exportSuccessDesc = prometheus.NewDesc("bridge_export_last_success_timestamp_seconds",
		"When the export's latest completed run finished (Unix time; 0 when none of its recent runs completed).", []string{"export"}, nil)
)

// exportRunsRead is how many of an export's latest runs a scrape reads to find its last success.
const exportRunsRead = 50

// StoreCollector is a prometheus.Collector of what the store knows, read at each scrape: jobs by
// state, held jobs by reason, dead letters per endpoint, the endpoints' state and each export's
// last success. A family whose query fails is reported as an invalid metric (the scrape
// handler's ContinueOnError serves the others) and logged.
type StoreCollector struct {
	// Store is read at each scrape.
	Store Store
	// Endpoints and Exports are the configured names: each gets a series even at zero.
	Endpoints, Exports []string
	// Timeout bounds one scrape's queries (default 5 s).
	Timeout time.Duration
	// Log hears the queries that failed (default: discarded).
	Log *slog.Logger
}

// Describe sends the descriptions of the store's series.
func (c *StoreCollector) Describe(ch chan<- *prometheus.Desc) {
	for _, d := range []*prometheus.Desc{jobsDesc, heldDesc, deadDesc, disabledDesc, failingDesc, exportSuccessDesc} {
		ch <- d
	}
}

// Collect reads the store and sends its series; a failed query sends an invalid metric.
func (c *StoreCollector) Collect(ch chan<- prometheus.Metric) {
	timeout := c.Timeout
	if timeout <= 0 {
		timeout = 5 * time.Second
	}
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	c.report(ch, jobsDesc, c.jobs(ctx, ch))
	c.report(ch, heldDesc, c.held(ctx, ch))
	c.report(ch, deadDesc, c.dead(ctx, ch))
	c.report(ch, disabledDesc, c.disabled(ctx, ch))
	c.report(ch, failingDesc, c.failing(ctx, ch))
	c.report(ch, exportSuccessDesc, c.exports(ctx, ch))
}

// report sends an invalid metric of desc for err, and logs it; nothing when err is nil.
func (c *StoreCollector) report(ch chan<- prometheus.Metric, desc *prometheus.Desc, err error) {
	if err == nil {
		return
	}
	if c.Log != nil {
		c.Log.Warn("metrics: the store did not answer", "metric", desc.String(), "error", err)
	}
	ch <- prometheus.NewInvalidMetric(desc, err)
}

func gauge(desc *prometheus.Desc, v float64, label string) prometheus.Metric {
	return prometheus.MustNewConstMetric(desc, prometheus.GaugeValue, v, label)
}

func (c *StoreCollector) jobs(ctx context.Context, ch chan<- prometheus.Metric) error {
	counts, err := c.Store.Counts(ctx)
	if err != nil {
		return err
	}
	for _, st := range bridge.States {
		ch <- gauge(jobsDesc, float64(counts[st]), string(st))
	}
	return nil
}

func (c *StoreCollector) held(ctx context.Context, ch chan<- prometheus.Metric) error {
	jobs, err := c.Store.Jobs(ctx, bridge.JobFilter{States: []bridge.State{bridge.StateHeld}})
	if err != nil {
		return err
	}
	by := map[bridge.HoldReason]int{}
	for _, r := range bridge.HoldReasons {
		by[r] = 0
	}
	for _, j := range jobs {
		r := j.Hold
		if r == "" {
			r = "other" // held before hold reasons were typed
		}
		by[r]++
	}
	for r, n := range by {
		ch <- gauge(heldDesc, float64(n), string(r))
	}
	return nil
}

func (c *StoreCollector) dead(ctx context.Context, ch chan<- prometheus.Metric) error {
	dead, err := c.Store.Deliveries(ctx, bridge.DeliveryFilter{Status: bridge.DeliveryDead})
	if err != nil {
		return err
	}
	by := map[string]int{}
	for _, e := range c.Endpoints {
		by[e] = 0
	}
	for _, d := range dead {
		by[d.Endpoint]++
	}
	for e, n := range by {
		ch <- gauge(deadDesc, float64(n), e)
	}
	return nil
}

func (c *StoreCollector) disabled(ctx context.Context, ch chan<- prometheus.Metric) error {
	off, err := c.Store.DisabledEndpoints(ctx)
	if err != nil {
		return err
	}
	by := map[string]float64{}
	for _, e := range c.Endpoints {
		by[e] = 0
	}
	for e := range off {
		by[e] = 1
	}
	for e, v := range by {
		ch <- gauge(disabledDesc, v, e)
	}
	return nil
}

func (c *StoreCollector) failing(ctx context.Context, ch chan<- prometheus.Metric) error {
	alerts, err := c.Store.FailingEndpoints(ctx)
	if err != nil {
		return err
	}
	by := map[string]float64{}
	for _, e := range c.Endpoints {
		by[e] = 0
	}
	for _, a := range alerts {
		by[a.Name] = 1
	}
	for e, v := range by {
		ch <- gauge(failingDesc, v, e)
	}
	return nil
}

func (c *StoreCollector) exports(ctx context.Context, ch chan<- prometheus.Metric) error {
	for _, name := range c.Exports {
		runs, err := c.Store.Runs(ctx, name, exportRunsRead)
		if err != nil {
			return err
		}
		var last time.Time
		for _, r := range runs {
			if r.Status == bridge.ExportCompleted && r.FinishedAt.After(last) {
				last = r.FinishedAt
			}
		}
		v := 0.0
		if !last.IsZero() {
			v = float64(last.UnixNano()) / 1e9
		}
		ch <- gauge(exportSuccessDesc, v, name)
	}
	return nil
}
