package metrics_test

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"

	"github.com/transcript-bridge/bridge/bridge"
	"github.com/transcript-bridge/bridge/bridge/metrics"
)

// fakeStore answers StoreCollector's queries from fields; failing makes Counts fail.
type fakeStore struct {
	held    []bridge.Job
	dead    []bridge.Delivery
	runs    []bridge.ExportRun
	failing bool
}

func (s fakeStore) Counts(context.Context) (map[bridge.State]int, error) {
	if s.failing {
		return nil, errors.New("database is locked")
	}
	return map[bridge.State]int{bridge.StateHeld: len(s.held)}, nil
}

func (s fakeStore) Jobs(context.Context, bridge.JobFilter) ([]bridge.Job, error) { return s.held, nil }

func (s fakeStore) Deliveries(context.Context, bridge.DeliveryFilter) ([]bridge.Delivery, error) {
	return s.dead, nil
}

func (s fakeStore) DisabledEndpoints(context.Context) (map[string]string, error) {
	return map[string]string{"old": "answered 410 Gone"}, nil
}

func (s fakeStore) FailingEndpoints(context.Context) ([]bridge.EndpointAlert, error) {
	return []bridge.EndpointAlert{{Name: "crm", Error: "answered 503"}}, nil
}

func (s fakeStore) Runs(context.Context, string, int) ([]bridge.ExportRun, error) { return s.runs, nil }

// TestStoreCollector: held jobs grouped by their typed reason (every reason present, at zero
// when none), dead letters by endpoint, an endpoint switched off that is no longer configured
// still shown, an export's last success the newest completed run; a query that fails leaves its
// family out and the others are still served.
func TestStoreCollector(t *testing.T) {
	finished := time.Unix(1_800_000_000, 0)
	s := fakeStore{
		held: []bridge.Job{{State: bridge.StateHeld, Hold: bridge.HoldUnmapped}, {State: bridge.StateHeld, Hold: bridge.HoldUnmapped},
			{State: bridge.StateHeld, Hold: bridge.HoldNoBalance}},
		dead: []bridge.Delivery{{Endpoint: "crm"}, {Endpoint: "crm"}, {Endpoint: "old"}},
		runs: []bridge.ExportRun{{Status: bridge.ExportFailed, FinishedAt: finished.Add(time.Hour)}, {Status: bridge.ExportCompleted, FinishedAt: finished}},
	}
	c := &metrics.StoreCollector{Store: s, Endpoints: []string{"crm", "audit"}, Exports: []string{"nightly"}}
	want := `
# HELP bridge_jobs_held Held jobs in the store by typed hold reason (unmapped, no_balance, source_unavailable, source_blocked, author_refused, upstream_setting).
# TYPE bridge_jobs_held gauge
bridge_jobs_held{reason="author_refused"} 0
bridge_jobs_held{reason="no_balance"} 1
bridge_jobs_held{reason="source_blocked"} 0
bridge_jobs_held{reason="source_unavailable"} 0
bridge_jobs_held{reason="unmapped"} 2
bridge_jobs_held{reason="upstream_setting"} 0
# HELP bridge_deliveries_dead Dead letters in the store by endpoint: deliveries given up, waiting for a replay.
# TYPE bridge_deliveries_dead gauge
bridge_deliveries_dead{endpoint="audit"} 0
bridge_deliveries_dead{endpoint="crm"} 2
bridge_deliveries_dead{endpoint="old"} 1
# HELP bridge_endpoint_disabled Whether a webhook endpoint is switched off (1: disabled after 410 Gone, until bridge endpoints enable; 0: enabled).
# TYPE bridge_endpoint_disabled gauge
bridge_endpoint_disabled{endpoint="audit"} 0
bridge_endpoint_disabled{endpoint="crm"} 0
bridge_endpoint_disabled{endpoint="old"} 1
# HELP bridge_endpoint_failing Whether a webhook endpoint has been failing for its alert_after (1: endpoint.failing was sent, until an attempt is delivered again; 0: not).
# TYPE bridge_endpoint_failing gauge
bridge_endpoint_failing{endpoint="audit"} 0
bridge_endpoint_failing{endpoint="crm"} 1
# HELP bridge_export_last_success_timestamp_seconds When the export's latest completed run finished (Unix time; 0 when none of its recent runs completed).
# TYPE bridge_export_last_success_timestamp_seconds gauge
bridge_export_last_success_timestamp_seconds{export="nightly"} 1.8e+09
`
	names := []string{"bridge_jobs_held", "bridge_deliveries_dead", "bridge_endpoint_disabled", "bridge_endpoint_failing", "bridge_export_last_success_timestamp_seconds"}
	if err := testutil.CollectAndCompare(c, strings.NewReader(want), names...); err != nil {
		t.Error(err)
	}
	s.failing = true
	reg := prometheus.NewPedanticRegistry()
	reg.MustRegister(&metrics.StoreCollector{Store: s, Endpoints: []string{"crm"}})
	families, err := reg.Gather()
	if err == nil || !strings.Contains(err.Error(), "database is locked") {
		t.Errorf("Gather with a failing query = %v, want its error", err)
	}
	found := map[string]bool{}
	for _, f := range families {
		found[f.GetName()] = true
	}
	if found["bridge_jobs"] || !found["bridge_jobs_held"] || !found["bridge_deliveries_dead"] {
		t.Errorf("families served despite the failing query = %v, want all but bridge_jobs", found)
	}
}

// TestNilMetricsRecordNothing: every method of a nil *Metrics is a no-op.
func TestNilMetricsRecordNothing(t *testing.T) {
	var m *metrics.Metrics
	m.Upload("uploaded")
	m.Retry("upload")
	m.TrackerLag(time.Second)
	m.Discovered("inbox", time.Second)
	m.Scanned("inbox", time.Now())
	m.APIRequest("/workspace", "GET", "200")
	m.LimiterWait("data", time.Millisecond)
	m.UploadBytes(10)
	m.Delivery("crm", "delivered")
	m.DeliveryLatency("crm", time.Second)
	m.ExportRun("nightly", "completed")
}

// TestNewRefusesASecondRegistration: the same names twice on one registry is an error.
func TestNewRefusesASecondRegistration(t *testing.T) {
	reg := prometheus.NewRegistry()
	if _, err := metrics.New(reg, metrics.Options{}); err != nil {
		t.Fatal(err)
	}
	if _, err := metrics.New(reg, metrics.Options{}); err == nil {
		t.Error("New on a registry that has the metrics = nil error")
	}
}
