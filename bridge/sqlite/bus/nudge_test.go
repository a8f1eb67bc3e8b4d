package bus_test

import (
	"context"
	"path/filepath"
	"testing"
	"time"

	watermillsql "github.com/ThreeDotsLabs/watermill-sql/v4/pkg/sql"
	"github.com/ThreeDotsLabs/watermill/message"

	"github.com/transcript-bridge/bridge/bridge/sqlite/bus"
)

// TestNudge checks that Nudge ends a reader's wait at once: with an hour's PollInterval, a
// message published while the reader waits arrives only because of the nudge.
func TestNudge(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	db := openDB(t, filepath.Join(t.TempDir(), "bus.db"))
	pub, err := bus.NewPublisher(watermillsql.BeginnerFromStdSQL(db), nil)
	if err != nil {
		t.Fatal(err)
	}
	sub, err := bus.NewSubscriber(db, bus.SubscriberConfig{PollInterval: time.Hour, InitializeSchema: true}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer sub.Close()
	if err := bus.InitializeSchema(ctx, db, "events"); err != nil {
		t.Fatal(err)
	}
	if err := pub.Publish("events", message.NewMessage("first", []byte(`{}`))); err != nil {
		t.Fatal(err)
	}
	msgs, err := sub.Subscribe(ctx, "events")
	if err != nil {
		t.Fatal(err)
	}
	receive := func(want string) {
		t.Helper()
		select {
		case m := <-msgs:
			m.Ack()
			if m.UUID != want {
				t.Fatalf("received %s, want %s", m.UUID, want)
			}
		case <-time.After(10 * time.Second):
			t.Fatalf("%s not received in 10 s (the poll is an hour)", want)
		}
	}
	receive("first")
	time.Sleep(200 * time.Millisecond) // the reader acks, finds nothing and waits out its hour
	if err := pub.Publish("events", message.NewMessage("second", []byte(`{}`))); err != nil {
		t.Fatal(err)
	}
	sub.Nudge()
	receive("second")
}
