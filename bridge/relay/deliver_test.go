package relay_test

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/ThreeDotsLabs/watermill/message"
	"github.com/ThreeDotsLabs/watermill/message/router/middleware"

	"github.com/transcript-bridge/bridge/bridge"
	"github.com/transcript-bridge/bridge/bridge/relay"
	"github.com/transcript-bridge/bridge/bridge/relay/webhook"
	"github.com/transcript-bridge/bridge/bridge/sqlite"
	"github.com/transcript-bridge/bridge/bridge/sqlite/bus"
	"github.com/transcript-bridge/bridge/connectors"
)

// receiver records verified deliveries and answers with the scripted status for each path call.
type receiver struct {
	mu       sync.Mutex
	secret   webhook.Secret
	answer   func(n int, body map[string]any) (int, string) // status and Retry-After
	received []map[string]any
	ids      []string
	tried    []string // the webhook-id of every verified request, whatever the answer
	calls    int
	bad      int
}

func (rx *receiver) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	body, _ := io.ReadAll(r.Body)
	rx.mu.Lock()
	defer rx.mu.Unlock()
	rx.calls++
	if err := webhook.Verify(r.Header, body, time.Now(), time.Hour*24*30, rx.secret); err != nil {
		rx.bad++
		w.WriteHeader(401)
		return
	}
	rx.tried = append(rx.tried, r.Header.Get(webhook.HeaderID))
	var m map[string]any
	json.Unmarshal(body, &m)
	status, retryAfter := 200, ""
	if rx.answer != nil {
		status, retryAfter = rx.answer(rx.calls, m)
	}
	if retryAfter != "" {
		w.Header().Set("Retry-After", retryAfter)
	}
	if status >= 200 && status < 300 {
		rx.received = append(rx.received, m)
		rx.ids = append(rx.ids, r.Header.Get(webhook.HeaderID))
	}
	w.WriteHeader(status)
}

type clock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *clock) Now() time.Time      { c.mu.Lock(); defer c.mu.Unlock(); return c.t }
func (c *clock) Add(d time.Duration) { c.mu.Lock(); c.t = c.t.Add(d); c.mu.Unlock() }

type fixture struct {
	store *sqlite.Store
	rx    *receiver
	relay *relay.Relay
	clock *clock
	jobs  map[string]*bridge.Job
}

func newFixture(t *testing.T, answer func(int, map[string]any) (int, string)) *fixture {
	ctx := context.Background()
	store, err := sqlite.Open(ctx, filepath.Join(t.TempDir(), "bridge.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { store.Close() })
	s, _ := webhook.NewSecret()
	rx := &receiver{secret: s, answer: answer}
	srv := httptest.NewServer(rx)
	t.Cleanup(srv.Close)
	ep, err := relay.NewEndpoint(relay.EndpointConfig{Name: "crm", URL: srv.URL, Secrets: []webhook.Secret{s}, AllowPrivate: true, Payload: relay.PayloadThin})
	if err != nil {
		t.Fatal(err)
	}
	c := &clock{t: time.Now()}
	f := &fixture{store: store, rx: rx, clock: c, jobs: map[string]*bridge.Job{},
		relay: withBus(t, store, &relay.Relay{Store: store, Endpoints: []*relay.Endpoint{ep}, Now: c.Now, PerEndpoint: 4})}
	added, err := store.AddRecordings(ctx, "inbox", []connectors.Recording{{ItemID: "a", Version: "1", Name: "a.wav"}, {ItemID: "b", Version: "1", Name: "b.wav"}}, "", c.Now())
	if err != nil {
		t.Fatal(err)
	}
	for i := range added {
		f.jobs[added[i].ItemID] = &added[i]
	}
	return f
}

// withBus gives r the store's event bus.
func withBus(t testing.TB, store *sqlite.Store, r *relay.Relay) *relay.Relay {
	t.Helper()
	sub, poison, err := store.Bus(bus.SubscriberConfig{PollInterval: 5 * time.Millisecond, InFlight: relay.BusInFlight}, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { sub.Close() })
	r.Bus, r.Poison = sub, poison
	return r
}

// emit writes an event for job item as a state change would.
func (f *fixture) emit(t *testing.T, item, typ string) {
	j := f.jobs[item]
	from := j.State
	j.UpdatedAt = f.clock.Now()
	if err := f.store.Update(context.Background(), j, from, typ, bridge.NewEvent(typ, j, map[string]any{"n": typ})); err != nil {
		t.Fatal(err)
	}
}

func (f *fixture) step(t *testing.T) {
	if err := f.relay.Flush(context.Background()); err != nil {
		t.Fatal(err)
	}
}

func TestOrderPerJobAndSignatures(t *testing.T) {
	// The first attempt of every delivery fails: order must still hold per job.
	seen := map[string]bool{}
	f := newFixture(t, func(_ int, m map[string]any) (int, string) {
		key := m["type"].(string) + m["data"].(map[string]any)["job_id"].(string)
		if !seen[key] {
			seen[key] = true
			return 503, ""
		}
		return 200, ""
	})
	f.emit(t, "a", bridge.EventUploaded)
	f.emit(t, "a", bridge.EventCompleted)
	f.emit(t, "b", bridge.EventUploaded)
	for range 5 {
		f.step(t)
		f.clock.Add(10 * time.Second)
	}
	var order []string
	for _, m := range f.rx.received {
		order = append(order, m["data"].(map[string]any)["job_id"].(string)[:4]+" "+m["type"].(string))
	}
	a := f.jobs["a"].ID[:4]
	if len(order) != 3 || f.rx.bad != 0 {
		t.Fatalf("received %v (%d bad signatures), want 3 verified deliveries", order, f.rx.bad)
	}
	ia, ic := -1, -1
	for i, o := range order {
		switch o {
		case a + " " + bridge.EventUploaded:
			ia = i
		case a + " " + bridge.EventCompleted:
			ic = i
		}
	}
	if ia < 0 || ic < ia {
		t.Errorf("job a's events arrived as %v, want uploaded before completed", order)
	}
	// Every retry kept its webhook-id.
	ds, _ := f.store.Deliveries(context.Background(), bridge.DeliveryFilter{})
	for _, d := range ds {
		if d.Status != bridge.DeliveryDelivered || d.Attempts != 2 {
			t.Errorf("delivery %s: %s after %d attempts, want delivered after 2", d.Type, d.Status, d.Attempts)
		}
		_, attempts, _ := f.store.Delivery(context.Background(), d.ID)
		if len(attempts) != 2 || attempts[0].Status != 503 || attempts[1].Status != 200 {
			t.Errorf("attempts of %s = %+v", d.Type, attempts)
		}
	}
}

func TestRetriesDeadLetterAndReplay(t *testing.T) {
	failing := true
	f := newFixture(t, func(int, map[string]any) (int, string) {
		if failing {
			return 500, ""
		}
		return 200, ""
	})
	f.emit(t, "a", bridge.EventCompleted)
	ctx := context.Background()
	for i := range len(relay.Schedule) + 1 {
		f.step(t)
		ds, _ := f.store.Deliveries(ctx, bridge.DeliveryFilter{})
		if i < len(relay.Schedule) && ds[0].Status != bridge.DeliveryPending {
			t.Fatalf("after attempt %d: %s, want pending", i+1, ds[0].Status)
		}
		if i < len(relay.Schedule) {
			wait := ds[0].NextAttemptAt.Sub(f.clock.Now())
			want := relay.Schedule[i]
			if wait < want/2-time.Second || wait > want*3/2+time.Second {
				t.Errorf("retry %d in %v, want %v ±50%%", i+1, wait, want)
			}
			f.clock.Add(wait + time.Second)
		}
	}
	dead, _ := f.store.Deliveries(ctx, bridge.DeliveryFilter{Status: bridge.DeliveryDead})
	if len(dead) != 1 || dead[0].Attempts != 10 {
		t.Fatalf("after the schedule: %+v, want one dead letter after 10 attempts", dead)
	}
	failing = false
	if n, err := f.store.Replay(ctx, nil, bridge.DeliveryFilter{Status: bridge.DeliveryDead, Endpoint: "crm"}, f.clock.Now()); err != nil || n != 1 {
		t.Fatalf("Replay = %d, %v", n, err)
	}
	f.step(t)
	if len(f.rx.ids) != 1 || f.rx.ids[0] != dead[0].WebhookID {
		t.Errorf("replayed delivery arrived with ids %v, want %s", f.rx.ids, dead[0].WebhookID)
	}
}

// TestWebhookIDsAcrossBridgesRetriesAndReplay: two bridges on fresh databases send their first
// event under different webhook-ids (a receiver deduplicating by id, as Standard Webhooks asks,
// drops neither), and a delivery keeps its id on a retry and on a replay.
func TestWebhookIDsAcrossBridgesRetriesAndReplay(t *testing.T) {
	ctx := context.Background()
	one := newFixture(t, func(n int, _ map[string]any) (int, string) {
		if n == 1 {
			return 503, ""
		}
		return 200, ""
	})
	other := newFixture(t, nil)
	for _, f := range []*fixture{one, other} {
		f.emit(t, "a", bridge.EventCompleted)
		f.step(t)
	}
	one.clock.Add(10 * time.Second)
	one.step(t) // the retry
	ds, err := one.store.Deliveries(ctx, bridge.DeliveryFilter{})
	if err != nil || len(ds) != 1 || ds[0].Status != bridge.DeliveryDelivered {
		t.Fatalf("deliveries = %+v, %v; want one delivered", ds, err)
	}
	if n, err := one.store.Replay(ctx, []string{ds[0].ID}, bridge.DeliveryFilter{}, one.clock.Now()); err != nil || n != 1 {
		t.Fatalf("Replay = %d, %v; want 1", n, err)
	}
	one.step(t)
	id := ds[0].WebhookID
	if want := []string{id, id, id}; len(one.rx.tried) != 3 || one.rx.tried[0] != id || one.rx.tried[1] != id || one.rx.tried[2] != id {
		t.Errorf("first try, retry and replay sent webhook-ids %v, want %v", one.rx.tried, want)
	}
	if len(other.rx.tried) != 1 || other.rx.tried[0] == id {
		t.Errorf("the other bridge's first event went out as %v; want one id other than %s", other.rx.tried, id)
	}
}

func TestGoneDisablesTheEndpointAndRetryAfterIsHonoured(t *testing.T) {
	gone := true
	f := newFixture(t, func(int, map[string]any) (int, string) {
		if gone {
			return 410, ""
		}
		return 200, ""
	})
	ctx := context.Background()
	f.emit(t, "a", bridge.EventUploaded)
	f.step(t)
	disabled, _ := f.store.DisabledEndpoints(ctx)
	if disabled["crm"] == "" {
		t.Fatalf("410 did not disable the endpoint")
	}
	// endpoint.disabled went to the outbox (and fans out to nobody: crm is the only endpoint).
	f.emit(t, "b", bridge.EventUploaded)
	f.step(t)
	if f.rx.calls != 1 {
		t.Errorf("%d calls to a disabled endpoint, want only the 410 one", f.rx.calls)
	}
	gone = false
	f.store.EnableEndpoint(ctx, "crm")
	f.step(t)
	types := map[string]bool{}
	for _, m := range f.rx.received {
		types[m["type"].(string)] = true
	}
	if types["endpoint.disabled"] || !types[bridge.EventUploaded] {
		t.Errorf("after enabling, received %v, want the pending upload event and not its own endpoint.disabled", types)
	}

	slow := newFixture(t, func(int, map[string]any) (int, string) { return 429, "3600" })
	slow.emit(t, "a", bridge.EventUploaded)
	slow.step(t)
	ds, _ := slow.store.Deliveries(ctx, bridge.DeliveryFilter{})
	if wait := ds[0].NextAttemptAt.Sub(slow.clock.Now()); wait < time.Hour {
		t.Errorf("Retry-After 3600 gave a retry in %v, want an hour", wait)
	}
}

func TestRemovedEndpointsDeliveriesAreAbandoned(t *testing.T) {
	f := newFixture(t, func(int, map[string]any) (int, string) { return 500, "" })
	f.emit(t, "a", bridge.EventUploaded)
	f.step(t) // fanned out to crm, first attempt failed: pending
	other, _ := relay.NewEndpoint(relay.EndpointConfig{Name: "other", URL: "https://x.test/h", Secrets: f.relay.Endpoints[0].Secrets})
	r := withBus(t, f.store, &relay.Relay{Store: f.store, Endpoints: []*relay.Endpoint{other}, Now: f.clock.Now})
	if err := r.Flush(context.Background()); err != nil {
		t.Fatal(err)
	}
	ds, _ := f.store.Deliveries(context.Background(), bridge.DeliveryFilter{Endpoint: "crm"})
	if len(ds) != 1 || ds[0].Status != bridge.DeliveryDead || ds[0].LastError == "" {
		t.Errorf("a removed endpoint's delivery = %+v, want a dead letter saying why", ds)
	}
}

// TestMalformedMessagesGoToThePoisonQueue: a message the relay cannot read, or one naming no
// stored event, is kept on the poison topic with the reason; the events after it still go out.
func TestMalformedMessagesGoToThePoisonQueue(t *testing.T) {
	f := newFixture(t, func(int, map[string]any) (int, string) { return 200, "" })
	for _, payload := range []string{`not json`, `{"event_id": 999, "type": "transcription.completed"}`} {
		if err := f.relay.Poison.Publish(bridge.EventsTopic, message.NewMessage(payload, []byte(payload))); err != nil {
			t.Fatal(err)
		}
	}
	f.emit(t, "a", bridge.EventUploaded)
	f.step(t)
	f.rx.mu.Lock()
	n := len(f.rx.received)
	f.rx.mu.Unlock()
	if n != 1 {
		t.Errorf("receiver got %d webhooks, want 1 (the good event after the bad messages)", n)
	}
	sub, _, _ := f.store.Bus(bus.SubscriberConfig{ConsumerGroup: "test", PollInterval: 5 * time.Millisecond}, nil)
	defer sub.Close()
	msgs, err := sub.Subscribe(context.Background(), bridge.EventsPoisonTopic)
	if err != nil {
		t.Fatal(err)
	}
	// The relay handles a window of messages at once: the two may be poisoned in either order.
	reasons := map[string]string{}
	for range 2 {
		select {
		case m := <-msgs:
			reasons[m.UUID] = m.Metadata.Get(middleware.ReasonForPoisonedKey)
			m.Ack()
		case <-time.After(5 * time.Second):
			t.Fatalf("poisoned messages = %v, want two", reasons)
		}
	}
	for id, want := range map[string]string{`not json`: "malformed event message", `{"event_id": 999, "type": "transcription.completed"}`: "no such event"} {
		if !strings.Contains(reasons[id], want) {
			t.Errorf("poisoned %q with reason %q, want it to mention %q", id, reasons[id], want)
		}
	}
}
