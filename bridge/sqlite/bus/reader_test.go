package bus_test

import (
	"context"
	"database/sql"
	"path/filepath"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/ThreeDotsLabs/watermill"
	watermillsql "github.com/ThreeDotsLabs/watermill-sql/v4/pkg/sql"
	"github.com/ThreeDotsLabs/watermill/message"
	"github.com/mattn/go-sqlite3"

	"github.com/transcript-bridge/bridge/bridge/sqlite/bus"
)

// commits counts the transactions committed through the "sqlite3_counted" driver.
var (
	commits      atomic.Int64
	registerOnce sync.Once
)

// openCounted opens path with one connection whose commits (explicit or of a lone statement)
// add to commits.
func openCounted(t testing.TB, path string) *sql.DB {
	t.Helper()
	registerOnce.Do(func() {
		sql.Register("sqlite3_counted", &sqlite3.SQLiteDriver{ConnectHook: func(c *sqlite3.SQLiteConn) error {
			c.RegisterCommitHook(func() int { commits.Add(1); return 0 })
			return nil
		}})
	})
	db, err := sql.Open("sqlite3_counted", "file:"+path+"?_journal_mode=WAL&_busy_timeout=10000&_txlock=immediate")
	if err != nil {
		t.Fatal(err)
	}
	db.SetMaxOpenConns(1)
	t.Cleanup(func() { db.Close() })
	return db
}

// publishN creates the topic "events" in db and publishes n messages to it in one transaction.
func publishN(t testing.TB, db *sql.DB, n int) {
	t.Helper()
	if err := bus.InitializeSchema(context.Background(), db, "events"); err != nil {
		t.Fatal(err)
	}
	pub, _ := bus.NewPublisher(watermillsql.BeginnerFromStdSQL(db), nil)
	var msgs []*message.Message
	for range n {
		msgs = append(msgs, message.NewMessage(watermill.NewUUID(), []byte(`{}`)))
	}
	if err := pub.Publish("events", msgs...); err != nil {
		t.Fatal(err)
	}
}

// TestBacklogIsReadWithOneWritePerBatch checks that a backlog costs one write transaction per
// batch: the acks of a full batch are written by the next read's transaction, not by one of
// their own. 100 messages in batches of 10 take 10 reads; ack writes of their own would double
// the count.
func TestBacklogIsReadWithOneWritePerBatch(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	db := openCounted(t, filepath.Join(t.TempDir(), "bus.db"))
	publishN(t, db, 100)
	for _, inFlight := range []int{1, 8} {
		group := map[int]string{1: "one-at-a-time", 8: "window"}[inFlight]
		sub, err := bus.NewSubscriber(db, bus.SubscriberConfig{ConsumerGroup: group, BatchSize: 10, InFlight: inFlight,
			PollInterval: time.Hour}, nil)
		if err != nil {
			t.Fatal(err)
		}
		before := commits.Load()
		out, err := sub.Subscribe(ctx, "events")
		if err != nil {
			t.Fatal(err)
		}
		for i := range 100 {
			select {
			case m := <-out:
				m.Ack()
			case <-time.After(10 * time.Second):
				t.Fatalf("%s: message %d never came", group, i)
			}
		}
		// The last acks are written when the reader finds nothing more and waits.
		var acked int64
		for deadline := time.Now().Add(10 * time.Second); acked != 100 && time.Now().Before(deadline); time.Sleep(5 * time.Millisecond) {
			if err := db.QueryRow(`SELECT offset_acked FROM watermill_offsets_events WHERE consumer_group = ?`, group).Scan(&acked); err != nil {
				t.Fatal(err)
			}
		}
		if acked != 100 {
			t.Fatalf("%s: offset_acked = %d, want 100", group, acked)
		}
		// The group's first row (Subscribe), 10 full reads, the empty read writing the last
		// acks, and the lease given up while the reader waits.
		if n := commits.Load() - before; n > 13 {
			t.Errorf("%s: reading 10 full batches committed %d transactions, want at most 13", group, n)
		}
		sub.Close()
	}
}

// TestAcksOfALostLeaseDoNotCount checks that acks written with the next read count only while
// the reader still holds the lease: taken over meanwhile, the offset stays, and once the lease
// is free again the messages are read again.
func TestAcksOfALostLeaseDoNotCount(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	db := openDB(t, filepath.Join(t.TempDir(), "bus.db"))
	publishN(t, db, 4)
	sub, _ := bus.NewSubscriber(db, bus.SubscriberConfig{ConsumerGroup: "g", BatchSize: 2, PollInterval: 10 * time.Millisecond}, nil)
	defer sub.Close()
	out, err := sub.Subscribe(ctx, "events")
	if err != nil {
		t.Fatal(err)
	}
	first := <-out
	first.Ack()
	second := <-out
	// Another reader takes the lease before the batch's last ack.
	if _, err := db.Exec(`UPDATE watermill_offsets_events SET leased_by = 'other', lease_until = ? WHERE consumer_group = 'g'`,
		time.Now().Add(time.Hour).UnixNano()); err != nil {
		t.Fatal(err)
	}
	second.Ack()
	select {
	case m := <-out:
		t.Fatalf("message %s read under another reader's lease", m.UUID)
	case <-time.After(200 * time.Millisecond):
	}
	var acked int64
	if err := db.QueryRow(`SELECT offset_acked FROM watermill_offsets_events WHERE consumer_group = 'g'`).Scan(&acked); err != nil {
		t.Fatal(err)
	}
	if acked != 0 {
		t.Errorf("offset_acked = %d after the lease was lost, want 0 (the acks do not count)", acked)
	}
	// The other reader's lease runs out: the group resumes from the offset written.
	if _, err := db.Exec(`UPDATE watermill_offsets_events SET lease_until = 0 WHERE consumer_group = 'g'`); err != nil {
		t.Fatal(err)
	}
	select {
	case m := <-out:
		if m.UUID != first.UUID {
			t.Errorf("after the takeover, read %s first, want %s again", m.UUID, first.UUID)
		}
		m.Ack()
	case <-time.After(5 * time.Second):
		t.Fatal("the group never resumed after the other reader's lease ran out")
	}
}
