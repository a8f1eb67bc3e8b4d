package bus_test

import (
	"context"
	"database/sql"
	"path/filepath"
	"testing"
	"time"

	"github.com/ThreeDotsLabs/watermill"
	watermillsql "github.com/ThreeDotsLabs/watermill-sql/v4/pkg/sql"
	"github.com/ThreeDotsLabs/watermill/message"
	"github.com/ThreeDotsLabs/watermill/pubsub/tests"
	_ "github.com/mattn/go-sqlite3"

	"github.com/transcript-bridge/bridge/bridge/sqlite/bus"
)

func openDB(t testing.TB, path string) *sql.DB {
	t.Helper()
	db, err := sql.Open("sqlite3", "file:"+path+"?_journal_mode=WAL&_busy_timeout=10000&_txlock=immediate&_synchronous=NORMAL")
	if err != nil {
		t.Fatal(err)
	}
	db.SetMaxOpenConns(4)
	t.Cleanup(func() { db.Close() })
	return db
}

// TestPubSub runs Watermill's universal Pub/Sub suite: watermill-sql's Publisher with this
// package's schema, and the lease-based Subscriber, every constructor on the same file; then
// again with a window of messages in flight (InFlight 16), which keeps no order on a nack.
func TestPubSub(t *testing.T) {
	for _, c := range []struct {
		name     string
		inFlight int
		ordered  bool
	}{{"one-at-a-time", 1, true}, {"in-flight-16", 16, false}} {
		t.Run(c.name, func(t *testing.T) {
			db := openDB(t, filepath.Join(t.TempDir(), "bus.db"))
			constructor := func(t *testing.T, group string) (message.Publisher, message.Subscriber) {
				pub, err := bus.NewPublisher(watermillsql.BeginnerFromStdSQL(db), nil)
				if err != nil {
					t.Fatal(err)
				}
				sub, err := bus.NewSubscriber(db, bus.SubscriberConfig{ConsumerGroup: group, Lease: 2 * time.Second,
					PollInterval: 5 * time.Millisecond, ResendInterval: 5 * time.Millisecond, RetryInterval: 10 * time.Millisecond,
					InFlight: c.inFlight, InitializeSchema: true}, watermill.NopLogger{})
				if err != nil {
					t.Fatal(err)
				}
				return pub, sub
			}
			tests.TestPubSub(t, tests.Features{
				ConsumerGroups:                      true,
				GuaranteedOrder:                     c.ordered,
				GuaranteedOrderWithSingleSubscriber: c.ordered,
				Persistent:                          true,
			}, func(t *testing.T) (message.Publisher, message.Subscriber) { return constructor(t, "test") }, constructor)
		})
	}
}

// TestRolledBackPublishesNothing publishes on a transaction that rolls back and one that
// commits: only the committed message reaches the subscriber.
func TestRolledBackPublishesNothing(t *testing.T) {
	ctx := context.Background()
	db := openDB(t, filepath.Join(t.TempDir(), "bus.db"))
	if err := bus.InitializeSchema(ctx, db, "events"); err != nil {
		t.Fatal(err)
	}
	publishIn := func(uuid string, commit bool) {
		tx, err := db.BeginTx(ctx, nil)
		if err != nil {
			t.Fatal(err)
		}
		pub, err := bus.NewPublisher(watermillsql.TxFromStdSQL(tx), nil)
		if err != nil {
			t.Fatal(err)
		}
		if err := pub.Publish("events", message.NewMessage(uuid, []byte(`{"event_id":1}`))); err != nil {
			t.Fatal(err)
		}
		if commit {
			err = tx.Commit()
		} else {
			err = tx.Rollback()
		}
		if err != nil {
			t.Fatal(err)
		}
	}
	publishIn("rolled-back", false)
	publishIn("committed", true)

	sub, err := bus.NewSubscriber(db, bus.SubscriberConfig{ConsumerGroup: "relay", PollInterval: 5 * time.Millisecond}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer sub.Close()
	msgs, err := sub.Subscribe(ctx, "events")
	if err != nil {
		t.Fatal(err)
	}
	select {
	case m := <-msgs:
		if m.UUID != "committed" {
			t.Fatalf("first message = %q, want %q", m.UUID, "committed")
		}
		m.Ack()
	case <-time.After(10 * time.Second):
		t.Fatal("the committed message never arrived")
	}
	deadline := time.Now().Add(5 * time.Second)
	for {
		n, err := sub.Backlog(ctx, "events")
		if err != nil {
			t.Fatal(err)
		}
		if n == 0 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("Backlog after the ack = %d, want 0", n)
		}
		time.Sleep(5 * time.Millisecond)
	}
	select {
	case m := <-msgs:
		t.Fatalf("received %q after the committed message; the rolled-back one must not exist", m.UUID)
	case <-time.After(200 * time.Millisecond):
	}
}

// TestHandlerWritesOnTheOnlyConnection: with one connection in the pool, a handler that writes
// to the same database completes, because no transaction is open while it runs.
func TestHandlerWritesOnTheOnlyConnection(t *testing.T) {
	ctx := context.Background()
	db := openDB(t, filepath.Join(t.TempDir(), "bus.db"))
	db.SetMaxOpenConns(1)
	if err := bus.InitializeSchema(ctx, db, "events"); err != nil {
		t.Fatal(err)
	}
	if _, err := db.Exec(`CREATE TABLE seen (uuid TEXT)`); err != nil {
		t.Fatal(err)
	}
	pub, _ := bus.NewPublisher(watermillsql.BeginnerFromStdSQL(db), nil)
	for _, id := range []string{"a", "b", "c"} {
		if err := pub.Publish("events", message.NewMessage(id, nil)); err != nil {
			t.Fatal(err)
		}
	}
	sub, _ := bus.NewSubscriber(db, bus.SubscriberConfig{ConsumerGroup: "g", PollInterval: 5 * time.Millisecond}, nil)
	defer sub.Close()
	msgs, err := sub.Subscribe(ctx, "events")
	if err != nil {
		t.Fatal(err)
	}
	for range 3 {
		m := <-msgs
		wctx, cancel := context.WithTimeout(ctx, 5*time.Second)
		_, err := db.ExecContext(wctx, `INSERT INTO seen VALUES (?)`, m.UUID)
		cancel()
		if err != nil {
			t.Fatalf("handler write for %s: %v (a transaction is held across the handler)", m.UUID, err)
		}
		m.Ack()
	}
}

// TestExpiredLeaseIsTakenOver: a reader that died holding the group's lease (its row left
// behind) delays the group only until the lease expires.
func TestExpiredLeaseIsTakenOver(t *testing.T) {
	ctx := context.Background()
	db := openDB(t, filepath.Join(t.TempDir(), "bus.db"))
	if err := bus.InitializeSchema(ctx, db, "events"); err != nil {
		t.Fatal(err)
	}
	pub, _ := bus.NewPublisher(watermillsql.BeginnerFromStdSQL(db), nil)
	if err := pub.Publish("events", message.NewMessage("m1", nil)); err != nil {
		t.Fatal(err)
	}
	expires := time.Now().Add(300 * time.Millisecond)
	if _, err := db.Exec(`INSERT INTO watermill_offsets_events (consumer_group, leased_by, lease_until) VALUES ('g', 'dead-process', ?)`,
		expires.UnixNano()); err != nil {
		t.Fatal(err)
	}
	sub, _ := bus.NewSubscriber(db, bus.SubscriberConfig{ConsumerGroup: "g", PollInterval: 5 * time.Millisecond}, nil)
	defer sub.Close()
	msgs, err := sub.Subscribe(ctx, "events")
	if err != nil {
		t.Fatal(err)
	}
	select {
	case m := <-msgs:
		if now := time.Now(); now.Before(expires) {
			t.Errorf("received %s %v before the dead reader's lease expired", m.UUID, expires.Sub(now))
		}
		m.Ack()
	case <-time.After(10 * time.Second):
		t.Fatal("the group never resumed after the lease expired")
	}
}
