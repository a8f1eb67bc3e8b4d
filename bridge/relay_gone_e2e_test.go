package bridge_test

import (
	"context"
	"testing"
	"time"

	"github.com/transcript-bridge/bridge/bridge"
	"github.com/transcript-bridge/bridge/bridge/relay"
	"github.com/transcript-bridge/bridge/bridge/relay/webhook"
	"github.com/transcript-bridge/bridge/bridge/sqlite/bus"
)

// TestFullPayloadOfATranscriptionDeletedUpstream (issue 35, point 4): a transcription deleted
// upstream before the relay fetches it for two full-payload endpoints ends its job deleted
// (GoneUpstream: both fetches answer 404, one moves the job), one transcription.deleted reaches
// each endpoint, and the transcription.completed deliveries are settled after one try without
// being sent, their note saying why: the relay's Flush ends (no retry forever) with nothing
// pending, no dead letter, and both endpoints still enabled.
func TestFullPayloadOfATranscriptionDeletedUpstream(t *testing.T) {
	ctx := context.Background()
	e := newEnv(t, nil)
	crm, erp := newReceiver(t), newReceiver(t)
	var eps []*relay.Endpoint
	for _, rc := range []struct {
		name string
		rx   *receiver
	}{{"crm", crm}, {"erp", erp}} {
		ep, err := relay.NewEndpoint(relay.EndpointConfig{Name: rc.name, URL: rc.rx.srv.URL, Secrets: []webhook.Secret{rc.rx.secret},
			AllowPrivate: true, Payload: relay.PayloadFull, Events: []string{bridge.EventCompleted, bridge.EventDeleted}})
		if err != nil {
			t.Fatal(err)
		}
		eps = append(eps, ep)
	}
	sub, poison, err := e.store.Bus(bus.SubscriberConfig{PollInterval: 5 * time.Millisecond}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer sub.Close()
	rl := &relay.Relay{Store: e.store, Bus: sub, Poison: poison, Endpoints: eps, API: e.api, GoneUpstream: e.p.GoneUpstream}
	e.put(t, "a.wav", wav(8, 1))
	e.run(t)
	j := e.onlyJob(t)
	if j.State != bridge.StateDone {
		t.Fatalf("job = %s, want done", j.State)
	}
	if err := e.api.Delete(ctx, j.TranscriptionID); err != nil { // deleted upstream, by someone else
		t.Fatal(err)
	}
	fctx, cancel := context.WithTimeout(ctx, time.Minute)
	defer cancel()
	if err := rl.Flush(fctx); err != nil {
		t.Fatalf("Flush = %v", err)
	}

	got, err := e.store.Job(ctx, j.ID)
	const reason = "the transcription was deleted upstream (404 while fetching a webhook's full payload)"
	if err != nil || got.State != bridge.StateDeleted || got.Reason != reason {
		t.Errorf("job after the fetch's 404 = %s %q, %v; want deleted %q", got.State, got.Reason, err, reason)
	}
	for _, rx := range []*receiver{crm, erp} {
		if n, c := len(rx.of(bridge.EventDeleted)), len(rx.of(bridge.EventCompleted)); n != 1 || c != 0 {
			t.Errorf("a receiver got %d transcription.deleted, %d transcription.completed; want 1, 0", n, c)
		}
	}
	ds, err := e.store.Deliveries(ctx, bridge.DeliveryFilter{})
	if err != nil {
		t.Fatal(err)
	}
	for _, d := range ds {
		if d.Status != bridge.DeliveryDelivered {
			t.Errorf("delivery %s of %s to %s = %s, want delivered (settled)", d.ID, d.Type, d.Endpoint, d.Status)
			continue
		}
		_, attempts, err := e.store.Delivery(ctx, d.ID)
		if err != nil || len(attempts) != 1 {
			t.Errorf("delivery %s of %s: %d attempts, %v; want 1", d.ID, d.Type, len(attempts), err)
		} else if d.Type == bridge.EventCompleted && attempts[0].Error != relay.ErrDeletedUpstream.Error() {
			t.Errorf("delivery %s of %s: note %q, want %q", d.ID, d.Type, attempts[0].Error, relay.ErrDeletedUpstream)
		}
	}
	health, err := bridge.EndpointsHealth(ctx, e.store, time.Now())
	if err != nil || len(health) != 0 {
		t.Errorf("EndpointsHealth = %v, %v; want every endpoint enabled with nothing failing", health, err)
	}
	if len(ds) != 4 {
		t.Errorf("%d deliveries, want 4 (completed and deleted, to each endpoint)", len(ds))
	}
}
