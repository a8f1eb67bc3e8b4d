package sqlite_test

import (
	"context"
	"path/filepath"
	"regexp"
	"testing"
	"time"

	"github.com/transcript-bridge/bridge/bridge"
	"github.com/transcript-bridge/bridge/bridge/sqlite"
	"github.com/transcript-bridge/bridge/connectors"
)

// webhookIDPattern is a Standard Webhooks message id: msg_ and a 26-character, time-ordered
// unique id (a UUIDv7 in lower-case Crockford base32).
var webhookIDPattern = regexp.MustCompile(`^msg_[0-9a-hjkmnp-tv-z]{26}$`)

// firstDelivery opens a fresh database at path, writes its first event and fans it out to
// the endpoint crm; it returns the store and that delivery.
func firstDelivery(t *testing.T, path string, now time.Time) (*sqlite.Store, bridge.Delivery) {
	t.Helper()
	ctx := context.Background()
	s, err := sqlite.Open(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	added, err := s.AddRecordings(ctx, "inbox", []connectors.Recording{{ItemID: "a", Version: "1", Name: "a.wav"}}, "", now)
	if err != nil {
		t.Fatal(err)
	}
	j := added[0]
	j.State, j.UpdatedAt = bridge.StateSkipped, now
	if err := s.Update(ctx, &j, bridge.StateDiscovered, "too small", bridge.NewEvent(bridge.EventSkipped, &j, nil)); err != nil {
		t.Fatal(err)
	}
	events, err := s.PendingEvents(ctx, 10)
	if err != nil || len(events) != 1 {
		t.Fatalf("PendingEvents = %v, %v; want the one event", events, err)
	}
	e := events[0]
	if err := s.FanOut(ctx, bridge.EventRef{EventID: e.ID, Type: e.Type, JobID: e.JobID}, []string{"crm"}, now); err != nil {
		t.Fatal(err)
	}
	ds, err := s.Deliveries(ctx, bridge.DeliveryFilter{})
	if err != nil || len(ds) != 1 {
		t.Fatalf("Deliveries = %v, %v; want one", ds, err)
	}
	return s, ds[0]
}

// TestWebhookIDsAreUniqueAcrossDatabases: the first event of two fresh databases (a second
// bridge, a new file, a restored backup) goes out under two different webhook-ids, each a
// Standard Webhooks msg_ id, so a receiver that deduplicates by id drops neither.
func TestWebhookIDsAreUniqueAcrossDatabases(t *testing.T) {
	now := time.Now()
	_, a := firstDelivery(t, filepath.Join(t.TempDir(), "a.db"), now)
	_, b := firstDelivery(t, filepath.Join(t.TempDir(), "b.db"), now)
	if a.EventID != b.EventID {
		t.Fatalf("event ids %d and %d: want the same first event number in both databases", a.EventID, b.EventID)
	}
	for _, d := range []bridge.Delivery{a, b} {
		if !webhookIDPattern.MatchString(d.WebhookID) {
			t.Errorf("webhook-id %q, want %s", d.WebhookID, webhookIDPattern)
		}
	}
	if a.WebhookID == b.WebhookID {
		t.Errorf("the first event of two fresh databases has the same webhook-id %s", a.WebhookID)
	}
}

// TestWebhookIDIsKept: the webhook-id fixed when a delivery is created survives everything
// that happens to the delivery afterwards.
func TestWebhookIDIsKept(t *testing.T) {
	ctx := context.Background()
	for _, tc := range []struct {
		name string
		do   func(t *testing.T, s *sqlite.Store, d bridge.Delivery, now time.Time)
	}{
		{"retried", func(t *testing.T, s *sqlite.Store, d bridge.Delivery, now time.Time) {
			claimAndRecord(t, s, now, bridge.DeliveryPending, now.Add(time.Second))
			if got := claimAndRecord(t, s, now.Add(time.Second), bridge.DeliveryDelivered, time.Time{}); got.WebhookID != d.WebhookID {
				t.Errorf("second attempt claimed with webhook-id %s, want %s", got.WebhookID, d.WebhookID)
			}
		}},
		{"dead and replayed", func(t *testing.T, s *sqlite.Store, d bridge.Delivery, now time.Time) {
			claimAndRecord(t, s, now, bridge.DeliveryDead, time.Time{})
			if n, err := s.Replay(ctx, []string{d.ID}, bridge.DeliveryFilter{Status: bridge.DeliveryDead}, now); err != nil || n != 1 {
				t.Fatalf("Replay = %d, %v; want 1", n, err)
			}
			if got := claimAndRecord(t, s, now, bridge.DeliveryDelivered, time.Time{}); got.ID != d.ID || got.WebhookID != d.WebhookID {
				t.Errorf("replayed delivery %s claimed with webhook-id %s, want delivery %s with %s", got.ID, got.WebhookID, d.ID, d.WebhookID)
			}
		}},
		{"fanned out again (a redelivered bus message)", func(t *testing.T, s *sqlite.Store, d bridge.Delivery, now time.Time) {
			if err := s.FanOut(ctx, bridge.EventRef{EventID: d.EventID, Type: d.Type, JobID: d.JobID}, []string{"crm"}, now); err != nil {
				t.Fatal(err)
			}
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			now := time.Now()
			s, d := firstDelivery(t, filepath.Join(t.TempDir(), "bridge.db"), now)
			tc.do(t, s, d, now)
			ds, err := s.Deliveries(ctx, bridge.DeliveryFilter{})
			if err != nil || len(ds) != 1 || ds[0].ID != d.ID || ds[0].WebhookID != d.WebhookID {
				t.Errorf("deliveries afterwards = %+v (%v), want delivery %s alone with webhook-id %s", ds, err, d.ID, d.WebhookID)
			}
		})
	}
}

// claimAndRecord claims the one due delivery and records an attempt that leaves it in status,
// due again at next; it returns the delivery as claimed.
func claimAndRecord(t *testing.T, s *sqlite.Store, now time.Time, status bridge.DeliveryStatus, next time.Time) bridge.Delivery {
	t.Helper()
	ctx := context.Background()
	due, err := s.Claim(ctx, "crm", now, time.Minute, 10)
	if err != nil || len(due) != 1 {
		t.Fatalf("Claim = %v, %v; want the one delivery", due, err)
	}
	d := due[0]
	d.Attempts++
	d.Status, d.NextAttemptAt = status, next
	if err := s.Record(ctx, &d, bridge.Attempt{At: now, Status: 500}); err != nil {
		t.Fatal(err)
	}
	return due[0]
}
