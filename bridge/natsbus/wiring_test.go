package natsbus_test

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/ThreeDotsLabs/watermill"
	"github.com/ThreeDotsLabs/watermill/message"

	"github.com/transcript-bridge/bridge/bridge"
	"github.com/transcript-bridge/bridge/bridge/natsbus"
	"github.com/transcript-bridge/bridge/bridge/relay"
	"github.com/transcript-bridge/bridge/bridge/relay/webhook"
	"github.com/transcript-bridge/bridge/bridge/sqlite"
	"github.com/transcript-bridge/bridge/bridge/sqlite/bus"
	"github.com/transcript-bridge/bridge/connectors"
	"github.com/transcript-bridge/bridge/internal/natstest"
)

// The relay reads this bus as its relay.Subscriber.
var _ relay.Subscriber = (*natsbus.Subscriber)(nil)

// TestRelayOverNATS wires the bus as bridge run should with bus.driver: nats: the store writes
// each event to its outbox (the SQL bus, on the state change's transaction), a forwarder
// (consumer group nats-forwarder on the SQL bus) publishes it to NATS, and the relay (group
// relay on NATS, poison queue on NATS) fans it out to the endpoint: each event is delivered,
// once, and the NATS backlog drains.
func TestRelayOverNATS(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	url := natstest.Embedded(t)
	prefix := natstest.Prefix(t, url)
	store, err := sqlite.Open(ctx, filepath.Join(t.TempDir(), "bridge.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer store.Close()
	var mu sync.Mutex
	got := 0
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.ReadAll(r.Body)
		mu.Lock()
		got++
		mu.Unlock()
	}))
	defer srv.Close()
	s, _ := webhook.NewSecret()
	ep, err := relay.NewEndpoint(relay.EndpointConfig{Name: "crm", URL: srv.URL, Secrets: []webhook.Secret{s}, AllowPrivate: true, Payload: relay.PayloadThin})
	if err != nil {
		t.Fatal(err)
	}
	// The outbox's SQL bus, read by the forwarder's own group.
	sqlSub, _, err := store.Bus(bus.SubscriberConfig{ConsumerGroup: "nats-forwarder", PollInterval: 5 * time.Millisecond}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer sqlSub.Close()
	natsPub, natsSub, err := natsbus.New(natsbus.Config{URL: url, SubjectPrefix: prefix, NakDelay: 10 * time.Millisecond}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer natsPub.Close()
	defer natsSub.Close()
	fwd, err := message.NewRouter(message.RouterConfig{}, watermill.NopLogger{})
	if err != nil {
		t.Fatal(err)
	}
	fwd.AddConsumerHandler("events-to-nats", bridge.EventsTopic, sqlSub, func(m *message.Message) error {
		return natsPub.Publish(bridge.EventsTopic, m)
	})
	var wg sync.WaitGroup
	defer wg.Wait()
	defer cancel()
	wg.Go(func() {
		if err := fwd.Run(ctx); err != nil {
			t.Error(err)
		}
	})
	r := &relay.Relay{Store: store, Endpoints: []*relay.Endpoint{ep}, Bus: natsSub, Poison: natsPub, PerEndpoint: 4}
	wg.Go(func() {
		if err := r.Run(ctx, 50*time.Millisecond); err != nil && ctx.Err() == nil {
			t.Error(err)
		}
	})

	added, err := store.AddRecordings(ctx, "inbox", []connectors.Recording{{ItemID: "a", Version: "1", Name: "a.wav"}, {ItemID: "b", Version: "1", Name: "b.wav"}}, "", time.Now())
	if err != nil {
		t.Fatal(err)
	}
	for i := range added {
		j := &added[i]
		from := j.State
		j.UpdatedAt = time.Now()
		if err := store.Update(ctx, j, from, bridge.EventCompleted, bridge.NewEvent(bridge.EventCompleted, j, nil)); err != nil {
			t.Fatal(err)
		}
	}
	deadline := time.Now().Add(20 * time.Second)
	for {
		mu.Lock()
		n := got
		mu.Unlock()
		if n >= 2 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("delivered %d", n)
		}
		time.Sleep(20 * time.Millisecond)
	}
	waitBacklog(t, natsSub, bridge.EventsTopic, 0)
	// The receiver answered; the relay records each attempt just after: wait for both records.
	var ds []bridge.Delivery
	for deadline := time.Now().Add(20 * time.Second); ; time.Sleep(20 * time.Millisecond) {
		var err error
		if ds, err = store.Deliveries(ctx, bridge.DeliveryFilter{Status: bridge.DeliveryDelivered}); err != nil {
			t.Fatal(err)
		}
		if len(ds) == 2 || time.Now().After(deadline) {
			break
		}
	}
	if all, _ := store.Deliveries(ctx, bridge.DeliveryFilter{}); len(all) != 2 || len(ds) != 2 {
		t.Fatalf("%d deliveries, %d delivered; want 2 and 2", len(all), len(ds))
	}
	for _, d := range ds {
		if d.Status != bridge.DeliveryDelivered || d.Attempts != 1 {
			t.Errorf("delivery of %s: %s after %d attempts", d.JobID, d.Status, d.Attempts)
		}
	}
	mu.Lock()
	defer mu.Unlock()
	if got != 2 {
		t.Errorf("the endpoint got %d requests, want 2", got)
	}
}
