package main

// What an operator reads of a running bridge: its metrics (one Prometheus registry of its own,
// handed to the parts as their small Metrics interfaces) and its readiness checks, both served
// by mountOps.

import (
	"context"
	"log/slog"
	"net/http"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"

	"github.com/transcript-bridge/bridge/bridge/metrics"
	"github.com/transcript-bridge/bridge/bridge/postgres"
	"github.com/transcript-bridge/bridge/bridge/server"
	"github.com/transcript-bridge/bridge/bridge/sqlite"
)

// telemetry is the bridge's metrics: a registry of its own (never Prometheus's global default)
// and the recorder the pipeline, the relay, the exporter and the API client share.
type telemetry struct {
	registry *prometheus.Registry
	metrics  *metrics.Metrics
}

// newTelemetry builds the registry of a bridge running cfg on store: the Go runtime's and the
// process's collectors, the bridge's own series (each configured source, endpoint and export at
// zero) and the store's, read at each scrape. It fails only when two metrics share a name.
func newTelemetry(cfg *Config, store database, log *slog.Logger) (*telemetry, error) {
	var o metrics.Options
	for _, w := range cfg.Webhooks {
		o.Endpoints = append(o.Endpoints, w.Name)
	}
	for _, e := range cfg.Exports {
		o.Exports = append(o.Exports, e.Name)
	}
	for _, s := range cfg.Sources {
		o.Sources = append(o.Sources, s.Name)
	}
	reg := prometheus.NewRegistry()
	m, err := metrics.New(reg, o)
	if err != nil {
		return nil, err
	}
	for _, c := range []prometheus.Collector{
		collectors.NewGoCollector(),
		collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}),
		&metrics.StoreCollector{Store: store, Endpoints: o.Endpoints, Exports: o.Exports, Log: log},
	} {
		if err := reg.Register(c); err != nil {
			return nil, err
		}
	}
	return &telemetry{registry: reg, metrics: m}, nil
}

// handler serves the registry in Prometheus's text format; a store query that fails leaves
// its series out (and is logged) while the others are served.
func (t *telemetry) handler() http.Handler {
	return promhttp.HandlerFor(t.registry, promhttp.HandlerOpts{ErrorHandling: promhttp.ContinueOnError, Registry: t.registry})
}

// keepAliveFor is the pipeline's RunOptions.KeepAlive: a bridge that keeps running hears the
// API answer at least once a poll interval (readiness reads when it last did); none with once.
func keepAliveFor(cfg *Config, once bool) time.Duration {
	if once {
		return 0
	}
	return cfg.API.PollInterval
}

// busIdle is how long events may wait on the bus with none handled before the bus check fails.
const busIdle = time.Minute

// readyChecks are the checks of GET /readyz for the running bridge d: the store answers a
// cheap query, its schema is the one this binary carries, the API answered within three poll
// intervals (bridge run asks GET /workspace itself when nothing else did within one), the
// relay reads the bus, the pipeline's writes are not refused for want of space, and (advisory:
// it leaves the bridge ready) every source this process scans can be read. None calls the API.
func readyChecks(d *serveDeps) []server.Check {
	known := sqlite.SchemaVersion()
	if d.cfg.Store.Driver == "postgres" {
		known = postgres.SchemaVersion()
	}
	checks := []server.Check{
		server.StoreCheck(func(ctx context.Context) error {
			_, err := d.store.LastMappingChange(ctx)
			return err
		}),
		server.SchemaCheck(d.store.SchemaVersion, known),
	}
	if d.client != nil {
		checks = append(checks, server.APICheck(d.client.LastAnswer, 3*d.cfg.API.PollInterval, nil))
	}
	if d.pipeline != nil && len(d.cfg.Sources) > 0 {
		checks = append(checks, server.SourcesCheck(d.pipeline.SourceHealth))
	}
	if d.relay != nil {
		checks = append(checks, server.BusCheck(func(ctx context.Context) error { return d.relay.Consuming(ctx, busIdle) }))
	}
	if d.pipeline != nil {
		// A write refused for want of space (the store's disk full): unready until one goes
		// through again, with the error naming the path.
		checks = append(checks, server.Check{Name: "disk", Run: func(context.Context) error { return d.pipeline.DiskFull() }})
	}
	return checks
}
