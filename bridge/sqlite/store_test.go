package sqlite_test

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/ThreeDotsLabs/watermill/message"
	"github.com/ThreeDotsLabs/watermill/message/router/middleware"
	"github.com/google/uuid"

	"github.com/transcript-bridge/bridge/bridge"
	"github.com/transcript-bridge/bridge/bridge/sqlite"
	"github.com/transcript-bridge/bridge/bridge/sqlite/bus"
	"github.com/transcript-bridge/bridge/bridge/storetest"
	"github.com/transcript-bridge/bridge/connectors"
)

// TestStore runs the store contract suite: a fresh file per case, and two handles (two Opens,
// as two processes have) on one file where a case asks for a second.
func TestStore(t *testing.T) {
	storetest.Run(t, func(t *testing.T) storetest.Open {
		path := filepath.Join(t.TempDir(), "bridge.db")
		return func() storetest.Stores {
			s, err := sqlite.Open(context.Background(), path)
			if err != nil {
				t.Fatal(err)
			}
			subscriber := func() message.Subscriber {
				sub, _, err := s.Bus(bus.SubscriberConfig{ConsumerGroup: "storetest-" + uuid.NewString(), PollInterval: 5 * time.Millisecond}, nil)
				if err != nil {
					t.Fatal(err)
				}
				return sub
			}
			return storetest.Stores{Store: s, Subscriber: subscriber}
		}
	})
}

func TestReopenKeepsState(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "bridge.db")
	s, err := sqlite.Open(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	s.AddRecordings(ctx, "inbox", []connectors.Recording{{ItemID: "a", Version: "1", Name: "a.wav"}}, "c", time.Time{})
	id, _ := s.InstanceID(ctx)
	s.Close()
	s, err = sqlite.Open(ctx, path) // migrations run again without harm
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	jobs, _ := s.Jobs(ctx, bridge.JobFilter{})
	again, _ := s.InstanceID(ctx)
	if len(jobs) != 1 || again != id {
		t.Errorf("after reopening: %d jobs, instance %s (was %s)", len(jobs), again, id)
	}
}

// TestEventsReachTheBusOnlyWithTheirChange: an update that loses its race (ErrConflict) rolls
// back and publishes nothing; one that commits publishes one id-only message per event, with
// the job as correlation id.
func TestEventsReachTheBusOnlyWithTheirChange(t *testing.T) {
	ctx := context.Background()
	s, j := storeWithJob(t)
	j.State = bridge.StateSkipped
	if err := s.Update(ctx, &j, bridge.StateReady, "x", bridge.NewEvent(bridge.EventSkipped, &j, nil)); !errors.Is(err, bridge.ErrConflict) {
		t.Fatalf("Update from the wrong state = %v, want ErrConflict", err)
	}
	sub, _, err := s.Bus(bus.SubscriberConfig{PollInterval: 5 * time.Millisecond}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer sub.Close()
	if n, _ := sub.Backlog(ctx, bridge.EventsTopic); n != 0 {
		t.Fatalf("a rolled-back update left %d messages on the bus", n)
	}
	if err := s.Update(ctx, &j, bridge.StateDiscovered, "too small", bridge.NewEvent(bridge.EventSkipped, &j, map[string]any{"reason": "too small"})); err != nil {
		t.Fatal(err)
	}
	msgs, err := sub.Subscribe(ctx, bridge.EventsTopic)
	if err != nil {
		t.Fatal(err)
	}
	select {
	case m := <-msgs:
		var ref bridge.EventRef
		if err := json.Unmarshal(m.Payload, &ref); err != nil || ref.EventID == 0 || ref.Type != bridge.EventSkipped || ref.JobID != j.ID ||
			middleware.MessageCorrelationID(m) != j.ID || strings.Contains(string(m.Payload), "too small") {
			t.Errorf("message = %s (correlation %q), want the event's ids only, correlated to job %s", m.Payload, middleware.MessageCorrelationID(m), j.ID)
		}
		m.Ack()
	case <-time.After(5 * time.Second):
		t.Fatal("the committed event never reached the bus")
	}
}

// storeWithJob opens a new store, closed when the test ends, holding one discovered job.
func storeWithJob(t *testing.T) (*sqlite.Store, bridge.Job) {
	t.Helper()
	ctx := context.Background()
	s, err := sqlite.Open(ctx, filepath.Join(t.TempDir(), "bridge.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	added, err := s.AddRecordings(ctx, "inbox", []connectors.Recording{{ItemID: "a", Version: "1", Name: "a.wav"}}, "", time.Now())
	if err != nil {
		t.Fatal(err)
	}
	return s, added[0]
}

// TestCommittedEventsNudgeTheBus: the store's own subscriber, polling once an hour, reads an
// event its store commits at once.
func TestCommittedEventsNudgeTheBus(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	s, j := storeWithJob(t)
	sub, _, err := s.Bus(bus.SubscriberConfig{PollInterval: time.Hour}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer sub.Close()
	msgs, err := sub.Subscribe(ctx, bridge.EventsTopic)
	if err != nil {
		t.Fatal(err)
	}
	time.Sleep(200 * time.Millisecond) // the reader finds nothing and waits out its hour
	j.State = bridge.StateSkipped
	if err := s.Update(ctx, &j, bridge.StateDiscovered, "too small", bridge.NewEvent(bridge.EventSkipped, &j, nil)); err != nil {
		t.Fatal(err)
	}
	select {
	case m := <-msgs:
		m.Ack()
	case <-time.After(time.Minute): // a hang, not a slow machine (CI shares 2 cores)
		t.Fatal("the committed event was not read in 10 s (the poll is an hour): no nudge")
	}
}

// TestUpgradePublishesPendingEvents: events written before the bus existed (migration 3) and
// not yet handed on are published on it by the upgrade, in order.
func TestUpgradePublishesPendingEvents(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "bridge.db")
	s, err := sqlite.Open(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	s.Close()
	db, err := sql.Open("sqlite3", path)
	if err != nil {
		t.Fatal(err)
	}
	for _, q := range []string{ // the state a pre-bus installation leaves
		`DELETE FROM goose_db_version WHERE version_id = 3`,
		`INSERT INTO outbox (type, job_id, transcription_id, data, created_at) VALUES ('recording.skipped', 'j1', '', '{}', 1), ('transcription.uploaded', 'j2', 't2', '{}', 2)`,
		`INSERT INTO outbox (type, job_id, transcription_id, data, created_at, delivered_at) VALUES ('transcription.uploaded', 'j3', 't3', '{}', 3, 4)`,
	} {
		if _, err := db.Exec(q); err != nil {
			t.Fatal(err)
		}
	}
	db.Close()
	s, err = sqlite.Open(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	sub, _, _ := s.Bus(bus.SubscriberConfig{PollInterval: 5 * time.Millisecond}, nil)
	defer sub.Close()
	msgs, _ := sub.Subscribe(ctx, bridge.EventsTopic)
	for _, want := range []string{"j1", "j2"} {
		select {
		case m := <-msgs:
			var ref bridge.EventRef
			json.Unmarshal(m.Payload, &ref)
			if ref.JobID != want || middleware.MessageCorrelationID(m) != want {
				t.Errorf("message %s, want the pending event of %s", m.Payload, want)
			}
			m.Ack()
		case <-time.After(5 * time.Second):
			t.Fatalf("no message for the pending event of %s", want)
		}
	}
	select {
	case m := <-msgs:
		t.Errorf("a third message %s: an event already handed on was published again", m.Payload)
	case <-time.After(300 * time.Millisecond):
	}
}
