package bridge_test

import (
	"context"
	"strings"
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
// each endpoint, and the transcription.completed deliveries are dead letters saying why: the
// relay's Flush ends (no retry forever) with nothing pending.
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
		want := bridge.DeliveryDelivered
		if d.Type == bridge.EventCompleted {
			want = bridge.DeliveryDead
		}
		if d.Status != want {
			t.Errorf("delivery %s of %s to %s = %s, want %s", d.ID, d.Type, d.Endpoint, d.Status, want)
			continue
		}
		_, attempts, err := e.store.Delivery(ctx, d.ID)
		if err != nil || len(attempts) != 1 {
			t.Errorf("delivery %s of %s: %d attempts, %v; want 1", d.ID, d.Type, len(attempts), err)
		} else if want == bridge.DeliveryDead && !strings.Contains(attempts[0].Error, "transcription deleted upstream") {
			t.Errorf("dead letter %s: error %q, want it to say transcription deleted upstream", d.ID, attempts[0].Error)
		}
	}
	if len(ds) != 4 {
		t.Errorf("%d deliveries, want 4 (completed and deleted, to each endpoint)", len(ds))
	}
}
