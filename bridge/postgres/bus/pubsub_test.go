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

// fast is a subscriber configuration with the short waits of tests.
func fast(group string) bus.SubscriberConfig {
	return bus.SubscriberConfig{ConsumerGroup: group, AckDeadline: 5 * time.Second, PollInterval: 10 * time.Millisecond,
		ResendInterval: 10 * time.Millisecond, RetryInterval: 50 * time.Millisecond, InitializeSchema: true}
}

// TestPubSub runs Watermill's universal Pub/Sub suite: watermill-sql's Publisher and
// Subscriber with this package's configuration, every constructor of a run on one new database
// (each test has its own topics). It runs twice, one after the other: claiming exactly-once
// delivery (no message of a group is delivered again once acked), and without the claim, which
// runs the two tests the suite skips for it (subscribers closed and replaced mid-stream lose
// nothing). Both in the suite's short mode: its full mode runs 50 subscribers at once, and each
// holds a connection while a message is out (see the package comment), half the connections
// of a default server (max_connections 100) that other tests share. Bounding the pool instead
// deadlocks: a subscriber keeps its connection until its message is acked, and the suite's
// TestConcurrentSubscribe reads only once all its subscribers, which need connections to
// subscribe, have subscribed.
func TestPubSub(t *testing.T) {
	t.Run("exactly once", func(t *testing.T) { runSuite(t, true) })
	t.Run("at least once", func(t *testing.T) { runSuite(t, false) })
}

func runSuite(t *testing.T, exactlyOnce bool) {
	db := openDB(t)
	constructor := func(t *testing.T, group string) (message.Publisher, message.Subscriber) {
		pub, err := bus.NewPublisher(watermillsql.BeginnerFromStdSQL(db), nil)
		if err != nil {
			t.Fatal(err)
		}
		sub, err := bus.NewSubscriber(db, fast(group), watermill.NopLogger{})
		if err != nil {
			t.Fatal(err)
		}
		return pub, sub
	}
	tests.TestPubSub(t, tests.Features{
		ConsumerGroups:      true,
		ExactlyOnceDelivery: exactlyOnce,
		GuaranteedOrder:     true,
		Persistent:          true,
		ForceShort:          true,
	}, func(t *testing.T) (message.Publisher, message.Subscriber) { return constructor(t, "test") }, constructor)
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
	db := openDB(t)
	if err := bus.InitializeSchema(ctx, db, "events"); err != nil {
		t.Fatal(err)
	}
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

// TestHandlerWritesWhileAMessageIsOut: a handler that writes to the same database (on another
// connection) completes while the subscriber's transaction holds the message.
func TestHandlerWritesWhileAMessageIsOut(t *testing.T) {
	ctx := context.Background()
	db := openDB(t)
	if err := bus.InitializeSchema(ctx, db, "events"); err != nil {
		t.Fatal(err)
	}
	if _, err := db.Exec(`CREATE TABLE seen (uuid TEXT PRIMARY KEY)`); err != nil {
		t.Fatal(err)
	}
	for _, id := range []string{"a", "b", "c"} {
		publishIn(t, db, "events", id, true)
	}
	sub, _ := bus.NewSubscriber(db, fast("g"), nil)
	defer sub.Close()
	msgs, err := sub.Subscribe(ctx, "events")
	if err != nil {
		t.Fatal(err)
	}
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
	db := openDB(t)
	if err := bus.InitializeSchema(ctx, db, "events"); err != nil {
		t.Fatal(err)
	}
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

// TestAMessageOutHoldsBackLaterOnes pins down the cost of watermill-sql v4's transaction held
// across the handler (see the package comment): while one group's handler holds a message, no
// group sees messages committed by transactions that began after that group's read, until the
// ack; then they come.
func TestAMessageOutHoldsBackLaterOnes(t *testing.T) {
	ctx := context.Background()
	db := openDB(t)
	if err := bus.InitializeSchema(ctx, db, "events"); err != nil {
		t.Fatal(err)
	}
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
	if m := <-msgs; m.UUID != "m1" {
		t.Fatalf("the second group's first message = %s, want m1", m.UUID)
	} else {
		m.Ack()
	}
	select {
	case m := <-msgs:
		t.Fatalf("the second group got %s while the first holds m1; watermill-sql's horizon changed: revise the package comment", m.UUID)
	case <-time.After(500 * time.Millisecond):
	}
	m1.Ack()
	select {
	case m := <-msgs:
		if m.UUID != "m2" {
			t.Fatalf("after the first group's ack the second got %s, want m2", m.UUID)
		}
		m.Ack()
	case <-time.After(10 * time.Second):
		t.Fatal("m2 never came after the first group acked m1")
	}
}

// TestCloseClosesTheChannels: when Close returns, every channel Subscribe returned is closed
// (watermill-sql v4.1.2 alone closes them a moment later), a message handed out and not read
// included; Subscribe after Close fails.
func TestCloseClosesTheChannels(t *testing.T) {
	ctx := context.Background()
	db := openDB(t)
	if err := bus.InitializeSchema(ctx, db, "events"); err != nil {
		t.Fatal(err)
	}
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
