package bus_test

import (
	"context"
	"database/sql"
	"fmt"
	"testing"
	"time"

	watermillsql "github.com/ThreeDotsLabs/watermill-sql/v4/pkg/sql"
	"github.com/ThreeDotsLabs/watermill/message"

	"github.com/transcript-bridge/bridge/bridge/postgres/bus"
)

// benchPayload is an event message of about 1 KB.
var benchPayload = []byte(fmt.Sprintf(`{"event_id":1,"type":"transcription.completed","pad":%q}`, make([]byte, 950)))

// benchPublisher opens a new database (skipped without BRIDGE_TEST_POSTGRES_DSN) with the
// topic events and returns it with a publisher on it.
func benchPublisher(b *testing.B) (*sql.DB, message.Publisher) {
	db := openDB(b)
	if err := bus.InitializeSchema(context.Background(), db, "events"); err != nil {
		b.Fatal(err)
	}
	pub, err := bus.NewPublisher(watermillsql.BeginnerFromStdSQL(db), nil)
	if err != nil {
		b.Fatal(err)
	}
	return db, pub
}

// publishAll publishes b.N copies of benchPayload on events, batch per Publish call.
func publishAll(b *testing.B, pub message.Publisher, batch int) {
	msgs := make([]*message.Message, 0, batch)
	for i := range b.N {
		msgs = append(msgs, message.NewMessage(fmt.Sprint(i), benchPayload))
		if len(msgs) == batch || i == b.N-1 {
			if err := pub.Publish("events", msgs...); err != nil {
				b.Fatal(err)
			}
			msgs = msgs[:0]
		}
	}
}

// BenchmarkPublish publishes b.N messages of about 1 KB, one per transaction (batch=1) and 100
// per Publish call (batch=100); ns/op is one message. The same names as bridge/sqlite/bus's,
// for benchstat: go test ./bridge/postgres/bus -run '^$' -bench Publish -count 10 > pg.txt
func BenchmarkPublish(b *testing.B) {
	for _, batch := range []int{1, 100} {
		b.Run(fmt.Sprint("batch=", batch), func(b *testing.B) {
			_, pub := benchPublisher(b)
			b.ReportAllocs()
			b.ResetTimer()
			publishAll(b, pub, batch)
		})
	}
}

// BenchmarkConsume publishes b.N messages, then reads and acks them with one subscriber of the
// consumer group g; ns/op is one message read and acked. Run:
// go test ./bridge/postgres/bus -run '^$' -bench Consume -benchtime 5000x
func BenchmarkConsume(b *testing.B) {
	db, pub := benchPublisher(b)
	publishAll(b, pub, 100)
	cfg := fast("g")
	cfg.PollInterval = time.Millisecond
	sub, err := bus.NewSubscriber(db, cfg, nil)
	if err != nil {
		b.Fatal(err)
	}
	defer sub.Close()
	b.ReportAllocs()
	b.ResetTimer()
	start := time.Now()
	msgs, err := sub.Subscribe(context.Background(), "events")
	if err != nil {
		b.Fatal(err)
	}
	for range b.N {
		(<-msgs).Ack()
	}
	b.ReportMetric(float64(b.N)/time.Since(start).Seconds(), "msgs/s")
}
