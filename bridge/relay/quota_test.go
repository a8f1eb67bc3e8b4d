package relay_test

import (
	"context"
	"fmt"
	"net/http/httptest"
	"path/filepath"
	"testing"
	"time"

	"github.com/transcript-bridge/bridge/bridge"
	"github.com/transcript-bridge/bridge/bridge/relay"
	"github.com/transcript-bridge/bridge/bridge/relay/webhook"
	"github.com/transcript-bridge/bridge/bridge/sqlite"
	"github.com/transcript-bridge/bridge/connectors"
)

func TestParseRateLimit(t *testing.T) {
	for _, tc := range []struct {
		in   string
		n    int
		per  time.Duration
		fail bool
	}{
		{"10/s", 10, time.Second, false},
		{"100/10s", 100, 10 * time.Second, false},
		{"600/m", 600, time.Minute, false},
		{"5 / 1m30s", 5, 90 * time.Second, false},
		{"1/h", 1, time.Hour, false},
		{"10", 0, 0, true},
		{"0/s", 0, 0, true},
		{"-1/s", 0, 0, true},
		{"ten/s", 0, 0, true},
		{"10/fortnight", 0, 0, true},
		{"10/0s", 0, 0, true},
		{"10/-1s", 0, 0, true},
	} {
		n, per, err := relay.ParseRateLimit(tc.in)
		if (err != nil) != tc.fail || n != tc.n || per != tc.per {
			t.Errorf("ParseRateLimit(%q) = %d, %v, %v; want %d, %v, failing %v", tc.in, n, per, err, tc.n, tc.per, tc.fail)
		}
	}
	c := relay.EndpointConfig{Name: "crm", URL: "https://x.test/h", Secret: "whsec_" + "MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw", RateLimit: "100/fortnight"}
	if err := c.Validate(); err == nil || err.Error()[:11] != "rate_limit:" {
		t.Errorf("Validate(rate_limit 100/fortnight) = %v, want a rate_limit: error", err)
	}
	c.RateLimit, c.AlertAfter = "", -time.Minute
	if err := c.Validate(); err == nil || err.Error() != "alert_after: -1m0s is negative" {
		t.Errorf("Validate(alert_after -1m) = %v, want alert_after: -1m0s is negative", err)
	}
}

// quotaSetup is a store with jobs a and b, and a relay whose endpoint crm answers as told.
type quotaSetup struct {
	store *sqlite.Store
	clock *clock
	jobs  map[string]*bridge.Job
}

func newQuotaSetup(t *testing.T) *quotaSetup {
	ctx := context.Background()
	store, err := sqlite.Open(ctx, filepath.Join(t.TempDir(), "bridge.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { store.Close() })
	q := &quotaSetup{store: store, clock: &clock{t: time.Now()}, jobs: map[string]*bridge.Job{}}
	added, err := store.AddRecordings(ctx, "inbox", []connectors.Recording{{ItemID: "a", Version: "1", Name: "a.wav"},
		{ItemID: "b", Version: "1", Name: "b.wav"}, {ItemID: "c", Version: "1", Name: "c.wav"}}, "", q.clock.Now())
	if err != nil {
		t.Fatal(err)
	}
	for i := range added {
		q.jobs[added[i].ItemID] = &added[i]
	}
	return q
}

// endpoint returns an endpoint named name, subscribed to events, answered by rx.
func (q *quotaSetup) endpoint(t *testing.T, name string, rx *receiver, c relay.EndpointConfig) *relay.Endpoint {
	srv := httptest.NewServer(rx)
	t.Cleanup(srv.Close)
	c.Name, c.URL, c.Secrets, c.AllowPrivate, c.Payload = name, srv.URL, []webhook.Secret{rx.secret}, true, relay.PayloadThin
	ep, err := relay.NewEndpoint(c)
	if err != nil {
		t.Fatal(err)
	}
	return ep
}

func (q *quotaSetup) emit(t *testing.T, item string) {
	j := q.jobs[item]
	if err := q.store.Update(context.Background(), j, j.State, bridge.EventUploaded, bridge.NewEvent(bridge.EventUploaded, j, nil)); err != nil {
		t.Fatal(err)
	}
}

// TestRateLimitHoldsDeliveriesBack: an endpoint allowed one request an hour gets one of three
// deliveries due together; the others wait for their turn (given back when it would come after
// their lease), not sent and not counted as attempts.
func TestRateLimitHoldsDeliveriesBack(t *testing.T) {
	q := newQuotaSetup(t)
	s, _ := webhook.NewSecret()
	rx := &receiver{secret: s}
	ep := q.endpoint(t, "crm", rx, relay.EndpointConfig{RateLimit: "1/h", Timeout: time.Second})
	r := withBus(t, q.store, &relay.Relay{Store: q.store, Endpoints: []*relay.Endpoint{ep}, Now: q.clock.Now,
		Lease: 2*time.Second + 100*time.Millisecond}) // each waits 100 ms at most for its turn
	for _, item := range []string{"a", "b", "c"} {
		q.emit(t, item)
	}
	if err := r.Flush(context.Background()); err != nil {
		t.Fatal(err)
	}
	ds, _ := q.store.Deliveries(context.Background(), bridge.DeliveryFilter{Endpoint: "crm"})
	attempts := 0
	for _, d := range ds {
		attempts += d.Attempts
	}
	if rx.calls != 1 || len(ds) != 3 || attempts != 1 {
		t.Errorf("1/h: %d requests, %d deliveries with %d attempts; want 1 request, 3 deliveries, 1 attempt", rx.calls, len(ds), attempts)
	}
}

// TestEndpointFailingOnce: an endpoint failing on two replicas for its alert_after gives one
// endpoint.failing (to the endpoint that subscribed to it), bridge_endpoint_failing's store
// row, and a delivery ends the spell.
func TestEndpointFailingOnce(t *testing.T) {
	q := newQuotaSetup(t)
	ctx := context.Background()
	down := true
	sCRM, _ := webhook.NewSecret()
	sOps, _ := webhook.NewSecret()
	crm := &receiver{secret: sCRM, answer: func(int, map[string]any) (int, string) {
		if down {
			return 503, ""
		}
		return 200, ""
	}}
	ops := &receiver{secret: sOps}
	retries := []time.Duration{time.Minute, time.Minute, time.Minute, time.Minute, time.Minute, time.Minute}
	var replicas []*relay.Relay
	for i := range 2 {
		eps := []*relay.Endpoint{
			q.endpoint(t, "crm", crm, relay.EndpointConfig{Events: []string{bridge.EventUploaded}, RetrySchedule: retries}),
			q.endpoint(t, "ops", ops, relay.EndpointConfig{Events: []string{relay.EventEndpointFailing}}),
		}
		replicas = append(replicas, withBus(t, q.store, &relay.Relay{Store: q.store, Endpoints: eps, Now: q.clock.Now,
			Rand: func() float64 { return 0.5 }, Replica: fmt.Sprint("r", i)}))
	}
	q.emit(t, "a")
	q.emit(t, "b")
	steps := 0
	step := func(advance time.Duration) { // each replica in turn attempts first
		t.Helper()
		q.clock.Add(advance)
		for i := range replicas {
			if err := replicas[(steps+i)%2].Flush(ctx); err != nil {
				t.Fatal(err)
			}
		}
		steps++
	}
	step(0)                // r0 fails first
	step(30 * time.Minute) // r1 too; failing for 30 min: no alert yet
	if alerts, _ := q.store.FailingEndpoints(ctx); len(ops.received) != 0 || len(alerts) != 0 {
		t.Fatalf("after 30 min: ops received %d, failing %v; want nothing yet", len(ops.received), alerts)
	}
	step(31 * time.Minute) // r0's spell is 61 min long: endpoint.failing
	step(2 * time.Minute)
	step(30 * time.Minute) // r1's spell is 63 min long: already marked, nothing more
	alerts, _ := q.store.FailingEndpoints(ctx)
	if len(ops.received) != 1 || ops.received[0]["type"] != relay.EventEndpointFailing || len(alerts) != 1 || alerts[0].Name != "crm" {
		t.Fatalf("after 93 min: ops received %v, failing %v; want one endpoint.failing for crm", ops.received, alerts)
	}
	data := ops.received[0]["data"].(map[string]any)
	if data["endpoint"] != "crm" || data["error"] != "answered 503" || data["alert_after"] != "1h0m0s" {
		t.Errorf("endpoint.failing data = %v", data)
	}
	down = false
	step(2 * time.Minute) // delivered: the spell ends (the other replica marked it, maybe)
	step(0)
	if alerts, _ := q.store.FailingEndpoints(ctx); len(alerts) != 0 || len(ops.received) != 1 {
		t.Errorf("after a delivery: failing %v, ops received %d; want none and still 1", alerts, len(ops.received))
	}
}
