package metrics_test

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"
	"github.com/prometheus/client_golang/prometheus/testutil"
	dto "github.com/prometheus/client_model/go"

	"github.com/transcript-bridge/bridge/api"
	"github.com/transcript-bridge/bridge/bridge"
	"github.com/transcript-bridge/bridge/bridge/export"
	"github.com/transcript-bridge/bridge/bridge/metrics"
	"github.com/transcript-bridge/bridge/bridge/relay"
	"github.com/transcript-bridge/bridge/bridge/relay/webhook"
	"github.com/transcript-bridge/bridge/bridge/sqlite"
	"github.com/transcript-bridge/bridge/bridge/sqlite/bus"
	"github.com/transcript-bridge/bridge/connectors/localdir"
	"github.com/transcript-bridge/bridge/internal/mediatest"
	"github.com/transcript-bridge/bridge/mapping"
	"github.com/transcript-bridge/bridge/sandbox"
	"github.com/transcript-bridge/bridge/sandbox/sandboxtest"
)

// receiver accepts webhooks, refusing the first one with a 500, or all with status when set.
type receiver struct {
	mu       sync.Mutex
	status   int
	calls    int
	accepted int
}

func (rx *receiver) ServeHTTP(w http.ResponseWriter, _ *http.Request) {
	rx.mu.Lock()
	defer rx.mu.Unlock()
	rx.calls++
	switch {
	case rx.status != 0:
		w.WriteHeader(rx.status)
	case rx.calls == 1:
		w.WriteHeader(http.StatusInternalServerError)
	default:
		rx.accepted++
	}
}

// bridgeEnv is a pipeline, a relay and an exporter on one SQLite store, the sandbox on loopback
// and two receivers, all recording into one registry.
type bridgeEnv struct {
	reg      *prometheus.Registry
	store    *sqlite.Store
	client   *api.Client
	pipeline *bridge.Pipeline
	relay    *relay.Relay
	crm      *receiver
	inbox    string
	start    time.Time
}

func newBridgeEnv(t *testing.T) *bridgeEnv {
	t.Helper()
	ctx := context.Background()
	e := &bridgeEnv{reg: prometheus.NewRegistry(), inbox: t.TempDir(), crm: &receiver{}, start: time.Now().UTC().Add(-time.Hour)}
	m, err := metrics.New(e.reg, metrics.Options{Endpoints: []string{"crm", "gone"}, Exports: []string{"nightly"}, Sources: []string{"inbox"}})
	if err != nil {
		t.Fatal(err)
	}
	sb := sandboxtest.Start(t, func(o *sandbox.Options) { o.DataRate, o.TimeScale = 1000000, 0.0005 })
	if e.store, err = sqlite.Open(ctx, filepath.Join(t.TempDir(), "bridge.db")); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { e.store.Close() })
	e.reg.MustRegister(&metrics.StoreCollector{Store: e.store, Endpoints: []string{"crm", "gone"}, Exports: []string{"nightly"}})
	e.client, err = api.New(api.Config{BaseURL: sb.URL, Key: sandboxtest.OwnerKey, MinBackoff: time.Millisecond, MaxBackoff: 20 * time.Millisecond,
		DataPerMinute: 1000000, Metrics: m})
	if err != nil {
		t.Fatal(err)
	}
	src, err := localdir.New(localdir.Config{Path: e.inbox})
	if err != nil {
		t.Fatal(err)
	}
	instance, _ := e.store.InstanceID(ctx)
	mp, err := mapping.New("inbox", "localdir", instance, mapping.Rules{Author: "email:sam@acme.test"})
	if err != nil {
		t.Fatal(err)
	}
	e.pipeline = &bridge.Pipeline{Store: e.store, API: e.client, Instance: instance, Metrics: m,
		Sources: map[string]*bridge.SourceConfig{"inbox": {Name: "inbox", Type: "localdir", Source: src, Mapper: mp}}}
	e.relay = &relay.Relay{Store: e.store, API: e.client, Metrics: m,
		Endpoints: []*relay.Endpoint{e.endpoint(t, "crm", e.crm), e.endpoint(t, "gone", &receiver{status: http.StatusGone}, bridge.EventCompleted)}}
	sub, poison, err := e.store.Bus(bus.SubscriberConfig{PollInterval: 5 * time.Millisecond}, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { sub.Close() })
	e.relay.Bus, e.relay.Poison = sub, poison
	return e
}

// endpoint is a webhook endpoint named name served by h, for events (all when none).
func (e *bridgeEnv) endpoint(t *testing.T, name string, h http.Handler, events ...string) *relay.Endpoint {
	srv := httptest.NewServer(h)
	t.Cleanup(srv.Close)
	s, _ := webhook.NewSecret()
	ep, err := relay.NewEndpoint(relay.EndpointConfig{Name: name, URL: srv.URL, Secrets: []webhook.Secret{s}, AllowPrivate: true,
		Payload: relay.PayloadThin, Events: events, RetrySchedule: []time.Duration{time.Millisecond}})
	if err != nil {
		t.Fatal(err)
	}
	return ep
}

// value returns the value of the series name{labels} (a counter, gauge, or a histogram's count).
func value(t *testing.T, reg prometheus.Gatherer, name string, labels ...string) float64 {
	t.Helper()
	families, err := reg.Gather()
	if err != nil {
		t.Fatalf("gather: %v", err)
	}
	for _, f := range families {
		if f.GetName() != name {
			continue
		}
	series:
		for _, m := range f.GetMetric() {
			for i := 0; i+1 < len(labels); i += 2 {
				if !hasLabel(m, labels[i], labels[i+1]) {
					continue series
				}
			}
			switch {
			case m.Counter != nil:
				return m.Counter.GetValue()
			case m.Gauge != nil:
				return m.Gauge.GetValue()
			case m.Histogram != nil:
				return float64(m.Histogram.GetSampleCount())
			}
		}
	}
	t.Fatalf("no series %s%v", name, labels)
	return 0
}

func hasLabel(m *dto.Metric, name, value string) bool {
	for _, l := range m.GetLabel() {
		if l.GetName() == name && l.GetValue() == value {
			return true
		}
	}
	return false
}

// TestScrapeMovesWithTheBridge runs two recordings and a file that is no media through the
// pipeline against the sandbox, delivers the events to an endpoint that refuses once and one
// that answers 410, runs an export, and scrapes /metrics: the key series moved as they should,
// the store's figures are read at scrape time, no route label holds a raw id, and the names
// pass Prometheus's lint.
func TestScrapeMovesWithTheBridge(t *testing.T) {
	e := newBridgeEnv(t)
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	sizes := 0
	for i, name := range []string{"a.wav", "b.wav"} {
		data := mediatest.WAV(3, 0, uint64(i+1))
		sizes += len(data)
		os.WriteFile(filepath.Join(e.inbox, name), data, 0o644)
	}
	os.WriteFile(filepath.Join(e.inbox, "junk.wav"), []byte(strings.Repeat("not audio ", 300)), 0o644)
	srv := httptest.NewServer(promhttp.HandlerFor(e.reg, promhttp.HandlerOpts{}))
	defer srv.Close()
	if err := testutil.ScrapeAndCompare(srv.URL, strings.NewReader(`
# HELP bridge_uploads_total Upload attempts by outcome: uploaded, replayed (an earlier attempt's answer), adopted (found upstream by bridge_job), failed, skipped, held, remapped.
# TYPE bridge_uploads_total counter
bridge_uploads_total{outcome="adopted"} 0
bridge_uploads_total{outcome="failed"} 0
bridge_uploads_total{outcome="held"} 0
bridge_uploads_total{outcome="remapped"} 0
bridge_uploads_total{outcome="replayed"} 0
bridge_uploads_total{outcome="skipped"} 0
bridge_uploads_total{outcome="uploaded"} 0
`), "bridge_uploads_total"); err != nil {
		t.Errorf("before the run: %v", err)
	}

	if err := e.pipeline.Run(ctx, bridge.RunOptions{Once: true, StepInterval: 5 * time.Millisecond, PollInterval: 20 * time.Millisecond}); err != nil {
		t.Fatal(err)
	}
	for e.crm.acceptedCount() < 6 && ctx.Err() == nil { // 5 events, and endpoint.disabled from gone
		if err := e.relay.Flush(ctx); err != nil {
			t.Fatal(err)
		}
		time.Sleep(5 * time.Millisecond)
	}
	c := &export.Config{Name: "nightly", Schedule: "0 2 * * *", Format: "md", Layout: export.LayoutFiles, Destination: t.TempDir(),
		Since: e.start.Format(time.RFC3339)}
	if err := c.Validate(); err != nil {
		t.Fatal(err)
	}
	if _, err := (&export.Exporter{Store: e.store, API: e.client, Metrics: e.pipeline.Metrics.(*metrics.Metrics)}).RunTick(ctx, c, time.Now().UTC().Add(time.Minute)); err != nil {
		t.Fatal(err)
	}

	if err := testutil.ScrapeAndCompare(srv.URL, strings.NewReader(fmt.Sprintf(`
# HELP bridge_jobs Jobs in the store by state (every replica of one store reports the same figures).
# TYPE bridge_jobs gauge
bridge_jobs{state="deleted"} 0
bridge_jobs{state="discovered"} 0
bridge_jobs{state="done"} 2
bridge_jobs{state="failed"} 0
bridge_jobs{state="held"} 0
bridge_jobs{state="processing"} 0
bridge_jobs{state="queued"} 0
bridge_jobs{state="ready"} 0
bridge_jobs{state="resubmit"} 0
bridge_jobs{state="skipped"} 1
bridge_jobs{state="transcribed"} 0
bridge_jobs{state="uploading"} 0
# HELP bridge_upload_bytes_total Bytes of recordings sent to the API, every attempt included.
# TYPE bridge_upload_bytes_total counter
bridge_upload_bytes_total %d
# HELP bridge_endpoint_disabled Whether a webhook endpoint is switched off (1: disabled after 410 Gone, until bridge endpoints enable; 0: enabled).
# TYPE bridge_endpoint_disabled gauge
bridge_endpoint_disabled{endpoint="crm"} 0
bridge_endpoint_disabled{endpoint="gone"} 1
`, sizes)), "bridge_jobs", "bridge_upload_bytes_total", "bridge_endpoint_disabled"); err != nil {
		t.Error(err)
	}
	for _, tc := range []struct {
		name   string
		labels []string
		want   float64
	}{
		{"bridge_uploads_total", []string{"outcome", "uploaded"}, 2},
		{"bridge_uploads_total", []string{"outcome", "skipped"}, 0}, // junk.wav is skipped before mapping: no upload attempt
		{"bridge_api_requests_total", []string{"route", "/transcriptions", "method", "POST", "status", "201"}, 2},
		{"bridge_tracker_lag_seconds", nil, 2},
		{"bridge_source_discovery_lag_seconds", []string{"source", "inbox"}, 3},
		{"bridge_deliveries_total", []string{"endpoint", "crm", "outcome", "delivered"}, float64(e.crm.acceptedCount())},
		{"bridge_deliveries_total", []string{"endpoint", "crm", "outcome", "failed"}, 1},
		{"bridge_retries_total", []string{"stage", "delivery"}, 1},
		{"bridge_delivery_latency_seconds", []string{"endpoint", "crm"}, float64(e.crm.acceptedCount())},
		{"bridge_jobs_held", []string{"reason", "unmapped"}, 0},
		{"bridge_deliveries_dead", []string{"endpoint", "crm"}, 0},
		{"bridge_export_runs_total", []string{"export", "nightly", "outcome", "completed"}, 1},
	} {
		if got := value(t, e.reg, tc.name, tc.labels...); got != tc.want {
			t.Errorf("%s%v = %v, want %v", tc.name, tc.labels, got, tc.want)
		}
	}
	dead, _ := e.store.Deliveries(ctx, bridge.DeliveryFilter{Endpoint: "gone", Status: bridge.DeliveryDead})
	if got := value(t, e.reg, "bridge_deliveries_dead", "endpoint", "gone"); len(dead) == 0 || got != float64(len(dead)) {
		t.Errorf("dead letters of gone = %v, want the store's %d (at least 1)", got, len(dead))
	}
	for name, labels := range map[string][]string{
		"bridge_deliveries_total":                      {"endpoint", "gone", "outcome", "gone"},
		"bridge_api_limiter_wait_seconds":              {"class", "data"},
		"bridge_source_last_scan_timestamp_seconds":    {"source", "inbox"},
		"bridge_export_last_success_timestamp_seconds": {"export", "nightly"},
	} {
		if got := value(t, e.reg, name, labels...); got <= 0 {
			t.Errorf("%s%v = %v, want it to have moved", name, labels, got)
		}
	}
	families, _ := e.reg.Gather()
	for _, f := range families {
		for _, m := range f.GetMetric() {
			for _, l := range m.GetLabel() {
				if l.GetName() == "route" && strings.ContainsAny(strings.ReplaceAll(l.GetValue(), "{id}", ""), "0123456789") {
					t.Errorf("%s: route label %q holds an id", f.GetName(), l.GetValue())
				}
			}
		}
	}
	if problems, err := testutil.GatherAndLint(e.reg); err != nil || len(problems) > 0 {
		t.Errorf("lint: %v %+v", err, problems)
	}
}

func (rx *receiver) acceptedCount() int {
	rx.mu.Lock()
	defer rx.mu.Unlock()
	return rx.accepted
}
