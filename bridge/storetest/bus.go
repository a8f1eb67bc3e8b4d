package storetest

import (
	"bytes"
	"context"
	"encoding/json"
	"testing"
	"time"

	"github.com/ThreeDotsLabs/watermill/message/router/middleware"

	"github.com/transcript-bridge/bridge/bridge"
)

// busWait bounds the wait for a message that must come; it only ever fails a test.
const busWait = 30 * time.Second

// The bus cases write, then write a sentinel event last, and read the topic up to the
// sentinel: what the writes published is exactly what comes before it (the bus keeps the
// order), so "published nothing" needs no wait.
var busCases = []testCase{
	{"Update publishes each event's ref, correlated to its job", func(t *testing.T, d *db) {
		j := d.job(t)
		j.TranscriptionID = "tr-1"
		d.move(t, &j, bridge.StateQueued, t0, bridge.NewEvent(bridge.EventUploaded, &j, map[string]any{"secret": "not on the bus"}),
			bridge.NewEvent(bridge.EventHeld, &j, nil))
		evs := d.pending(t)
		got := d.published(t, d.Stores)
		if len(got) != 2 {
			t.Fatalf("EventsTopic carried %+v, want the 2 events of the update", got)
		}
		for i, m := range got {
			want := ref(evs[i])
			if m.ref != want || m.correlation != j.ID || m.secret {
				t.Errorf("EventsTopic message %d = %+v (correlation %q, payload %s); want %+v, correlated to %s, ids only",
					i, m.ref, m.correlation, m.payload, want, j.ID)
			}
		}
	}},
	{"Update that conflicts or has no event publishes nothing", func(t *testing.T, d *db) {
		j := d.job(t)
		stale := j
		stale.State = bridge.StateSkipped
		d.Update(ctx, &stale, bridge.StateReady, "lost", bridge.NewEvent(bridge.EventSkipped, &stale, nil)) // ErrConflict
		d.move(t, &j, bridge.StateReady, t0)
		if got := d.published(t, d.Stores); len(got) != 0 {
			t.Errorf("EventsTopic carried %+v before the sentinel, want nothing", got)
		}
	}},
	{"DisableEndpoint publishes its events", func(t *testing.T, d *db) {
		if err := d.DisableEndpoint(ctx, "crm", "answered 410 Gone", t0, bridge.Event{Type: "endpoint.disabled"}); err != nil {
			t.Fatal(err)
		}
		if got := d.published(t, d.Stores); len(got) != 1 || got[0].ref.Type != "endpoint.disabled" || got[0].ref.EventID != d.pending(t)[0].ID {
			t.Errorf("EventsTopic carried %+v, want the endpoint.disabled event", got)
		}
	}},
	{"FinishRun publishes its event, if any", func(t *testing.T, d *db) {
		d.finish(t, finished("nightly", t0), nil, time.Time{}) // no event
		d.claimRun(t, d.Stores, "nightly", t0.Add(24*time.Hour), t0)
		r := finished("nightly", t0.Add(24*time.Hour))
		r.Status = bridge.ExportFailed
		if err := d.FinishRun(ctx, r, nil, time.Time{}, bridge.Event{Type: bridge.EventExportFailed}); err != nil {
			t.Fatal(err)
		}
		if got := d.published(t, d.Stores); len(got) != 1 || got[0].ref.Type != bridge.EventExportFailed {
			t.Errorf("EventsTopic carried %+v, want the one export.failed event", got)
		}
	}},
	{"seen through another handle", func(t *testing.T, d *db) {
		j := d.job(t)
		d.move(t, &j, bridge.StateHeld, t0, bridge.NewEvent(bridge.EventHeld, &j, nil))
		if got := d.published(t, d.another()); len(got) != 1 || got[0].ref.JobID != j.ID {
			t.Errorf("EventsTopic read on another handle carried %+v, want the held event of %s", got, j.ID)
		}
	}},
}

// busMessage is what one EventsTopic message said.
type busMessage struct {
	ref         bridge.EventRef
	correlation string
	payload     string
	secret      bool
}

// published writes a sentinel event, reads EventsTopic through a new subscriber of handle s up
// to it, and returns the messages before it.
func (d *db) published(t *testing.T, s Stores) []busMessage {
	t.Helper()
	sentinel := d.add(t, "sentinel", t0, rec("sentinel", "1"))[0]
	d.move(t, &sentinel, bridge.StateSkipped, t0, bridge.NewEvent(bridge.EventSkipped, &sentinel, nil))
	sub := s.Subscriber()
	defer sub.Close()
	rctx, cancel := context.WithTimeout(ctx, busWait)
	defer cancel()
	msgs, err := sub.Subscribe(rctx, bridge.EventsTopic)
	if err != nil {
		t.Fatalf("Subscribe(%s) = %v", bridge.EventsTopic, err)
	}
	var out []busMessage
	for {
		select {
		case m, ok := <-msgs:
			if !ok {
				t.Fatalf("EventsTopic closed before the sentinel; read %+v", out)
			}
			m.Ack()
			var got busMessage
			if err := json.Unmarshal(m.Payload, &got.ref); err != nil {
				t.Fatalf("EventsTopic message %s = %v, want an EventRef", m.Payload, err)
			}
			got.correlation, got.payload = middleware.MessageCorrelationID(m), string(m.Payload)
			got.secret = bytes.Contains(m.Payload, []byte("not on the bus"))
			if got.ref.JobID == sentinel.ID {
				return out
			}
			out = append(out, got)
		case <-rctx.Done():
			t.Fatalf("the sentinel event never reached EventsTopic within %v; read %+v", busWait, out)
		}
	}
}
