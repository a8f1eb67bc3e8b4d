package postgres_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/ThreeDotsLabs/watermill/message"
	"github.com/ThreeDotsLabs/watermill/message/router/middleware"
	"github.com/google/uuid"

	"github.com/transcript-bridge/bridge/bridge"
	"github.com/transcript-bridge/bridge/bridge/postgres"
	"github.com/transcript-bridge/bridge/bridge/postgres/bus"
	"github.com/transcript-bridge/bridge/bridge/storetest"
	"github.com/transcript-bridge/bridge/connectors"
	"github.com/transcript-bridge/bridge/internal/pgtest"
)

// TestStore runs the store contract suite: a fresh database per case, and two handles (two
// Opens, as two replicas have) on one database where a case asks for a second.
func TestStore(t *testing.T) {
	// Every case starts from a copy of one migrated database (CREATE DATABASE … TEMPLATE), not
	// from migrations run again: the suite's time goes to its cases.
	template := pgtest.New(t)
	open(t, template).Close()
	storetest.Run(t, func(t *testing.T) storetest.Open {
		dsn := pgtest.NewFrom(t, template)
		return func() storetest.Stores {
			s, err := postgres.Open(context.Background(), dsn)
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

// open opens a handle on dsn, closed when the test ends.
func open(t *testing.T, dsn string) *postgres.Store {
	t.Helper()
	s, err := postgres.Open(context.Background(), dsn)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

func TestReopenKeepsState(t *testing.T) {
	ctx := context.Background()
	dsn := pgtest.New(t)
	s, err := postgres.Open(ctx, dsn)
	if err != nil {
		t.Fatal(err)
	}
	s.AddRecordings(ctx, "inbox", []connectors.Recording{{ItemID: "a", Version: "1", Name: "a.wav"}}, "c", time.Time{})
	id, _ := s.InstanceID(ctx)
	s.Close()
	s = open(t, dsn) // migrations run again without harm
	jobs, _ := s.Jobs(ctx, bridge.JobFilter{})
	again, _ := s.InstanceID(ctx)
	if len(jobs) != 1 || again != id {
		t.Errorf("after reopening: %d jobs, instance %s (was %s)", len(jobs), again, id)
	}
	if got, err := s.SchemaVersion(ctx); err != nil || got != postgres.SchemaVersion() {
		t.Errorf("SchemaVersion(ctx) = %d, %v; want %d", got, err, postgres.SchemaVersion())
	}
}

// TestMigrationsMatchSQLite: the same migrations, by version and name, as bridge/sqlite, so a
// schema version means the same tables in either store.
func TestMigrationsMatchSQLite(t *testing.T) {
	names := func(dir string) []string {
		paths, err := filepath.Glob(filepath.Join(dir, "*.sql"))
		if err != nil || len(paths) == 0 {
			t.Fatalf("migrations in %s: %v, %v", dir, paths, err)
		}
		for i, p := range paths {
			paths[i] = filepath.Base(p)
		}
		return paths
	}
	got, want := names("migrations"), names(filepath.Join("..", "sqlite", "migrations"))
	if !slices.Equal(got, want) {
		t.Errorf("migrations %v, want SQLite's %v", got, want)
	}
	if v := fmt.Sprintf("%04d_", postgres.SchemaVersion()); !strings.HasPrefix(got[len(got)-1], v) {
		t.Errorf("SchemaVersion() = %d, want the last migration's, %s", postgres.SchemaVersion(), got[len(got)-1])
	}
}

// TestOpenErrorsNameTheDatabaseNotThePassword: a server that cannot be reached, a database that
// does not exist and a DSN that cannot be read fail naming where, never the password.
func TestOpenErrorsNameTheDatabaseNotThePassword(t *testing.T) {
	dsn := pgtest.New(t) // skips without a server, like every test here
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	for _, c := range []struct{ dsn, want string }{
		{"postgres://bridge:s3cret-pw@127.0.0.1:1/bridge?sslmode=disable&connect_timeout=2", "127.0.0.1:1/bridge"},
		{strings.Replace(dsn, "bridge_test_", "bridge_missing_", 1), "bridge_missing_"},
		{"host=127.0.0.1 port=1 user=bridge password=s3cret-pw dbname=bridge sslmode=disable connect_timeout=2", "127.0.0.1:1/bridge"},
		{"postgres://bridge:s3cret-pw@127.0.0.1:99999/bridge", ""},
		{"host=127.0.0.1 password=s3cret-pw sslmode=bogus", ""},
	} {
		s, err := postgres.Open(ctx, c.dsn)
		if err == nil {
			s.Close()
			t.Errorf("Open(%q) = nil, want an error", c.dsn)
			continue
		}
		if strings.Contains(err.Error(), "s3cret-pw") || !strings.Contains(err.Error(), c.want) {
			t.Errorf("Open(%q) = %v; want an error naming %q and not the password", c.dsn, err, c.want)
		}
	}
}

// TestEventsReachTheBusOnlyWithTheirChange: an update that loses its race (ErrConflict) rolls
// back and publishes nothing; one that commits publishes one id-only message per event, with
// the job as correlation id.
func TestEventsReachTheBusOnlyWithTheirChange(t *testing.T) {
	ctx := context.Background()
	s := open(t, pgtest.New(t))
	added, _ := s.AddRecordings(ctx, "inbox", []connectors.Recording{{ItemID: "a", Version: "1", Name: "a.wav"}}, "", time.Now())
	j := added[0]
	j.State = bridge.StateSkipped
	if err := s.Update(ctx, &j, bridge.StateReady, "x", bridge.NewEvent(bridge.EventSkipped, &j, nil)); !errors.Is(err, bridge.ErrConflict) {
		t.Fatalf("Update from the wrong state = %v, want ErrConflict", err)
	}
	sub, _, err := s.Bus(bus.SubscriberConfig{PollInterval: 5 * time.Millisecond}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer sub.Close()
	if n, err := sub.Backlog(ctx, bridge.EventsTopic); n != 0 || err != nil {
		t.Fatalf("Backlog after a rolled-back update = %d, %v; want 0", n, err)
	}
	if err := s.Update(ctx, &j, bridge.StateDiscovered, "too small", bridge.NewEvent(bridge.EventSkipped, &j, map[string]any{"reason": "too small"})); err != nil {
		t.Fatal(err)
	}
	if n, err := sub.Backlog(ctx, bridge.EventsTopic); n != 1 || err != nil {
		t.Fatalf("Backlog after a committed update = %d, %v; want 1", n, err)
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
	case <-time.After(time.Minute): // a hang, not a slow machine (CI shares 2 cores)
		t.Fatal("the committed event never reached the bus")
	}
	waitBacklog(t, sub, bridge.EventsTopic, 0)
}

// waitBacklog waits (a minute at most) until the subscriber's group has want messages of topic
// not acked.
func waitBacklog(t *testing.T, sub *bus.Subscriber, topic string, want int) {
	t.Helper()
	deadline := time.Now().Add(time.Minute)
	for {
		n, err := sub.Backlog(context.Background(), topic)
		if err != nil {
			t.Fatal(err)
		}
		if n == want {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("Backlog(%s) = %d, want %d", topic, n, want)
		}
		time.Sleep(5 * time.Millisecond)
	}
}
