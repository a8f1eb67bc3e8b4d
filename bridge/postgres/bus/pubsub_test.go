package bus_test

import (
	"context"
	"database/sql"
	"fmt"
	"testing"
	"time"

	"github.com/ThreeDotsLabs/watermill"
	watermillsql "github.com/ThreeDotsLabs/watermill-sql/v4/pkg/sql"
	"github.com/ThreeDotsLabs/watermill/message"
	"github.com/ThreeDotsLabs/watermill/pubsub/tests"
	_ "github.com/jackc/pgx/v5/stdlib" // the database/sql driver "pgx"

	"github.com/transcript-bridge/bridge/bridge/postgres/bus"
	"github.com/transcript-bridge/bridge/bridge/relay"
	"github.com/transcript-bridge/bridge/internal/pgtest"
)

var _ relay.Subscriber = (*bus.Subscriber)(nil)

// openDB opens a new database (pgtest), closed when the test ends.
func openDB(t testing.TB) *sql.DB {
	t.Helper()
	db, err := sql.Open("pgx", pgtest.New(t))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	return db
}

// openEvents opens a new database (openDB) with the topic "events".
func openEvents(t *testing.T) *sql.DB {
	t.Helper()
	db := openDB(t)
	if err := bus.InitializeSchema(context.Background(), db, "events"); err != nil {
		t.Fatal(err)
	}
	return db
}

// receiveInOrder receives want from msgs in that order, acking each (a minute at most each).
func receiveInOrder(t *testing.T, msgs <-chan *message.Message, want ...string) {
	t.Helper()
	for _, w := range want {
		select {
		case m := <-msgs:
			if m.UUID != w {
				t.Fatalf("got %s, want %s", m.UUID, w)
			}
			m.Ack()
		case <-time.After(time.Minute):
			t.Fatalf("%s never came", w)
		}
	}
}

// subscribe reads "events" of db as group (fast), until the test ends.
func subscribe(t *testing.T, db *sql.DB, group string) (*bus.Subscriber, <-chan *message.Message) {
	t.Helper()
	sub, err := bus.NewSubscriber(db, fast(group), nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { sub.Close() })
	msgs, err := sub.Subscribe(context.Background(), "events")
	if err != nil {
		t.Fatal(err)
	}
	return sub, msgs
}

// fast is a subscriber configuration with the short waits of tests.
func fast(group string) bus.SubscriberConfig {
	return bus.SubscriberConfig{ConsumerGroup: group, Lease: 2 * time.Second, PollInterval: 5 * time.Millisecond,
		ResendInterval: 5 * time.Millisecond, RetryInterval: 20 * time.Millisecond, InitializeSchema: true}
}

// TestPubSub runs Watermill's universal Pub/Sub suite: watermill-sql's Publisher with this
// package's schema and the lease-based subscriber (sqlbus), every constructor of a run on one
// new database (each test has its own topics); one message at a time (in order, exactly once
// while acks are written), then with a window of messages in flight (InFlight 16), which keeps
// no order on a nack.
func TestPubSub(t *testing.T) {
	for _, c := range []struct {
		name     string
		inFlight int
		ordered  bool
	}{{"one-at-a-time", 1, true}, {"in-flight-16", 16, false}} {
		t.Run(c.name, func(t *testing.T) {
			db := openDB(t)
			constructor := func(t *testing.T, group string) (message.Publisher, message.Subscriber) {
				pub, err := bus.NewPublisher(watermillsql.BeginnerFromStdSQL(db), nil)
				if err != nil {
					t.Fatal(err)
				}
				cfg := fast(group)
				cfg.InFlight = c.inFlight
				sub, err := bus.NewSubscriber(db, cfg, watermill.NopLogger{})
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

// publishIn publishes a message with uuid on a transaction of db, and commits or rolls back.
func publishIn(t *testing.T, db *sql.DB, topic, uuid string, commit bool) {
	t.Helper()
	tx, err := db.Begin()
	if err != nil {
		t.Fatal(err)
	}
	pub, err := bus.NewPublisher(watermillsql.TxFromStdSQL(tx), nil)
	if err != nil {
		t.Fatal(err)
	}
	if err := pub.Publish(topic, message.NewMessage(uuid, []byte(`{"event_id":1}`))); err != nil {
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

// TestRolledBackPublishesNothing publishes on a transaction that rolls back and one that
// commits: only the committed message reaches the subscriber, and Backlog counts it until the
// ack.
func TestRolledBackPublishesNothing(t *testing.T) {
	ctx := context.Background()
	db := openEvents(t)
	publishIn(t, db, "events", "rolled-back", false)
	publishIn(t, db, "events", "committed", true)

	sub, err := bus.NewSubscriber(db, fast("relay"), nil)
	if err != nil {
		t.Fatal(err)
	}
	defer sub.Close()
	if n, err := sub.Backlog(ctx, "events"); n != 1 || err != nil {
		t.Fatalf("Backlog before the group's first read = %d, %v; want 1", n, err)
	}
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
	waitBacklog(t, sub, "events", 0)
	select {
	case m := <-msgs:
		t.Fatalf("received %q after the committed message; the rolled-back one must not exist", m.UUID)
	case <-time.After(200 * time.Millisecond):
	}
}

// TestHandlerWritesWhileAMessageIsOut: a handler that writes to the same database completes
// while its message is out.
func TestHandlerWritesWhileAMessageIsOut(t *testing.T) {
	ctx := context.Background()
	db := openEvents(t)
	if _, err := db.Exec(`CREATE TABLE seen (uuid TEXT PRIMARY KEY)`); err != nil {
		t.Fatal(err)
	}
	for _, id := range []string{"a", "b", "c"} {
		publishIn(t, db, "events", id, true)
	}
	sub, msgs := subscribe(t, db, "g")
	for _, want := range []string{"a", "b", "c"} {
		m := <-msgs
		wctx, cancel := context.WithTimeout(ctx, 5*time.Second)
		_, err := db.ExecContext(wctx, `INSERT INTO seen VALUES ($1)`, m.UUID)
		cancel()
		if err != nil || m.UUID != want {
			t.Fatalf("message %s (want %s), handler write: %v", m.UUID, want, err)
		}
		m.Ack()
	}
	waitBacklog(t, sub, "events", 0)
}

// TestGroupsReadIndependently: two groups each read every message; a group's Backlog moves
// only with its own acks.
func TestGroupsReadIndependently(t *testing.T) {
	ctx := context.Background()
	db := openEvents(t)
	for _, id := range []string{"m1", "m2"} {
		publishIn(t, db, "events", id, true)
	}
	first, _ := bus.NewSubscriber(db, fast("first"), nil)
	defer first.Close()
	second, _ := bus.NewSubscriber(db, fast("second"), nil)
	defer second.Close()
	msgs, err := first.Subscribe(ctx, "events")
	if err != nil {
		t.Fatal(err)
	}
	for range 2 {
		(<-msgs).Ack()
	}
	waitBacklog(t, first, "events", 0)
	if n, err := second.Backlog(ctx, "events"); n != 2 || err != nil {
		t.Errorf("Backlog of a group that read nothing = %d, %v; want 2", n, err)
	}
	if _, err := second.Backlog(ctx, "no such topic"); err == nil {
		t.Error("Backlog of an invalid topic = nil error, want one")
	}
}

// waitBacklog waits (10 s at most) until sub's group has want messages of topic not acked.
func waitBacklog(t *testing.T, sub *bus.Subscriber, topic string, want int) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
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

// TestAMessageOutHoldsNothingBack: no transaction stays open while a handler holds a message
// (watermill-sql's own subscriber held one, and with it every group's xmin horizon): while one
// group's handler holds m1, another group reads m1 and then m2, committed after m1 was handed
// out; and the holder's group gets m2 after its ack.
func TestAMessageOutHoldsNothingBack(t *testing.T) {
	ctx := context.Background()
	db := openEvents(t)
	publishIn(t, db, "events", "m1", true)
	first, _ := bus.NewSubscriber(db, fast("first"), nil)
	defer first.Close()
	held, err := first.Subscribe(ctx, "events")
	if err != nil {
		t.Fatal(err)
	}
	m1 := <-held // not acked yet
	publishIn(t, db, "events", "m2", true)
	second, _ := bus.NewSubscriber(db, fast("second"), nil)
	defer second.Close()
	msgs, err := second.Subscribe(ctx, "events")
	if err != nil {
		t.Fatal(err)
	}
	receiveInOrder(t, msgs, "m1", "m2") // while the first group holds m1
	m1.Ack()
	receiveInOrder(t, held, "m2")
}

// TestCloseClosesTheChannels: when Close returns, every channel Subscribe returned is closed
// (watermill-sql v4.1.2 alone closes them a moment later), a message handed out and not read
// included; Subscribe after Close fails.
func TestCloseClosesTheChannels(t *testing.T) {
	ctx := context.Background()
	db := openEvents(t)
	publishIn(t, db, "events", "m1", true)
	for i := range 20 {
		sub, err := bus.NewSubscriber(db, fast(fmt.Sprint("g", i)), nil)
		if err != nil {
			t.Fatal(err)
		}
		first, err := sub.Subscribe(ctx, "events")
		if err != nil {
			t.Fatal(err)
		}
		second, err := sub.Subscribe(ctx, "events") // the same group: one reads, one waits
		if err != nil {
			t.Fatal(err)
		}
		select { // handed out, not acked
		case <-first:
		case <-second:
		}
		if err := sub.Close(); err != nil {
			t.Fatal(err)
		}
		for name, ch := range map[string]<-chan *message.Message{"first": first, "second": second} {
			select {
			case m, open := <-ch:
				if open {
					t.Fatalf("round %d: the %s channel still carried %s after Close", i, name, m.UUID)
				}
			default:
				t.Fatalf("round %d: the %s channel is still open after Close returned", i, name)
			}
		}
		if _, err := sub.Subscribe(ctx, "events"); err == nil {
			t.Fatalf("round %d: Subscribe after Close = nil error, want one", i)
		}
	}
}

// TestALateCommitIsNotSkipped: a message's place is its publishing transaction's id, not its
// commit: m1, published by a transaction that began first and commits last, is not skipped
// once m2 (a later transaction, committed first) has been read and acked; the reader waits
// below the oldest running transaction, so m1 comes first.
func TestALateCommitIsNotSkipped(t *testing.T) {
	db := openEvents(t)
	early, err := db.Begin()
	if err != nil {
		t.Fatal(err)
	}
	defer early.Rollback()
	pub, _ := bus.NewPublisher(watermillsql.TxFromStdSQL(early), nil)
	if err := pub.Publish("events", message.NewMessage("m1", []byte(`{}`))); err != nil {
		t.Fatal(err)
	}
	publishIn(t, db, "events", "m2", true)
	sub, msgs := subscribe(t, db, "g")
	select {
	case m := <-msgs:
		t.Fatalf("got %s while the transaction of m1, begun first, is still open", m.UUID)
	case <-time.After(300 * time.Millisecond):
	}
	if err := early.Commit(); err != nil {
		t.Fatal(err)
	}
	receiveInOrder(t, msgs, "m1", "m2")
	waitBacklog(t, sub, "events", 0)
}

// TestExpiredLeaseIsTakenOver: a reader that died holding the group's lease, with an ack not
// written, delays the group only until the lease expires; then the message it held is read
// again (at least once).
func TestExpiredLeaseIsTakenOver(t *testing.T) {
	db := openEvents(t)
	publishIn(t, db, "events", "m1", true)
	expires := time.Now().Add(300 * time.Millisecond)
	if _, err := db.Exec(`INSERT INTO watermill_offsets_events (consumer_group, offset_acked, last_processed_transaction_id, leased_by, lease_until)
		VALUES ('g', 0, '0', 'dead-process', $1)`, expires.UnixNano()); err != nil {
		t.Fatal(err)
	}
	sub, msgs := subscribe(t, db, "g")
	select {
	case m := <-msgs:
		if now := time.Now(); now.Before(expires) || m.UUID != "m1" {
			t.Errorf("received %s %v before the dead reader's lease expired, want m1 after it", m.UUID, expires.Sub(now))
		}
		m.Ack()
	case <-time.After(time.Minute):
		t.Fatal("the group never resumed after the lease expired")
	}
	waitBacklog(t, sub, "events", 0)
}
