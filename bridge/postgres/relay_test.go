package postgres_test

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"
	"time"

	"github.com/transcript-bridge/bridge/bridge"
	"github.com/transcript-bridge/bridge/bridge/postgres"
	"github.com/transcript-bridge/bridge/bridge/postgres/bus"
	"github.com/transcript-bridge/bridge/bridge/relay"
	"github.com/transcript-bridge/bridge/bridge/relay/webhook"
	"github.com/transcript-bridge/bridge/connectors"
)

// The relay reads the store's bus as its relay.Subscriber.
var _ relay.Subscriber = (*bus.Subscriber)(nil)

// TestRelayOnTwoReplicas runs the relay as two replicas of bridge run would on one database:
// each with its own store handle, its bus subscriber in the one consumer group "relay" and its
// claimers. Events written on both handles are each delivered to the endpoint exactly once, and
// the group's backlog drains.
func TestRelayOnTwoReplicas(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	rs := replicas(t, 2)
	var mu sync.Mutex
	got := map[string]int{} // webhook-id → requests
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.ReadAll(r.Body)
		mu.Lock()
		got[r.Header.Get("webhook-id")]++
		mu.Unlock()
	}))
	defer srv.Close()
	secret, _ := webhook.NewSecret()
	var wg sync.WaitGroup
	defer wg.Wait()
	defer cancel()
	var subs []*bus.Subscriber
	for _, s := range rs {
		ep, err := relay.NewEndpoint(relay.EndpointConfig{Name: "crm", URL: srv.URL, Secrets: []webhook.Secret{secret}, AllowPrivate: true,
			Payload: relay.PayloadThin})
		if err != nil {
			t.Fatal(err)
		}
		sub, poison, err := s.Bus(bus.SubscriberConfig{PollInterval: 10 * time.Millisecond}, nil)
		if err != nil {
			t.Fatal(err)
		}
		defer sub.Close()
		subs = append(subs, sub)
		r := &relay.Relay{Store: s, Endpoints: []*relay.Endpoint{ep}, Bus: sub, Poison: poison, PerEndpoint: 4, Committers: relay.CommittersPostgres}
		wg.Go(func() {
			if err := r.Run(ctx, 20*time.Millisecond); err != nil && ctx.Err() == nil {
				t.Error(err)
			}
		})
	}

	const jobs = 10
	writeEvents(t, rs, jobs)
	// Each delivery is recorded after its request is answered: wait for the records.
	deadline := time.Now().Add(30 * time.Second)
	for {
		ds, err := rs[1].Deliveries(ctx, bridge.DeliveryFilter{Status: bridge.DeliveryDelivered})
		if err != nil {
			t.Fatal(err)
		}
		if len(ds) == jobs {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("%d of %d deliveries delivered", len(ds), jobs)
		}
		time.Sleep(20 * time.Millisecond)
	}
	waitBacklog(t, subs[0], bridge.EventsTopic, 0)
	ds, err := rs[1].Deliveries(ctx, bridge.DeliveryFilter{})
	if err != nil || len(ds) != jobs {
		t.Fatalf("Deliveries() = %d, %v; want %d", len(ds), err, jobs)
	}
	for _, d := range ds {
		if d.Status != bridge.DeliveryDelivered || d.Attempts != 1 {
			t.Errorf("delivery of %s: %s after %d attempts, want delivered after 1", d.JobID, d.Status, d.Attempts)
		}
	}
	time.Sleep(100 * time.Millisecond) // a second request would come now, if any
	mu.Lock()
	defer mu.Unlock()
	if len(got) != jobs {
		t.Errorf("the endpoint got %d webhook-ids, want %d", len(got), jobs)
	}
	for id, n := range got {
		if n != 1 {
			t.Errorf("webhook %s was sent %d times, want once", id, n)
		}
	}
}

// writeEvents adds n jobs and completes each on the replicas in turn, with its event.
func writeEvents(t *testing.T, rs []*postgres.Store, n int) {
	t.Helper()
	ctx := context.Background()
	var recs []connectors.Recording
	for i := range n {
		recs = append(recs, connectors.Recording{ItemID: fmt.Sprint("item-", i), Version: "1", Name: "a.wav"})
	}
	added, err := rs[0].AddRecordings(ctx, "inbox", recs, "", time.Now())
	if err != nil {
		t.Fatal(err)
	}
	for i := range added {
		j := &added[i]
		from := j.State
		j.State, j.UpdatedAt = bridge.StateDone, time.Now()
		if err := rs[i%len(rs)].Update(ctx, j, from, "done", bridge.NewEvent(bridge.EventCompleted, j, nil)); err != nil {
			t.Fatal(err)
		}
	}
}
