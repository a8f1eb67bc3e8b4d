package bus_test

import (
	"context"
	"fmt"
	"path/filepath"
	"testing"
	"time"

	watermillsql "github.com/ThreeDotsLabs/watermill-sql/v4/pkg/sql"
	"github.com/ThreeDotsLabs/watermill/message"

	"github.com/transcript-bridge/bridge/bridge/sqlite/bus"
)

// BenchmarkConsume publishes b.N messages, then reads and acks them with one subscriber, on a
// file with synchronous=FULL like the bridge's store. Run:
// go test ./bridge/sqlite/bus -run '^$' -bench Consume -benchtime 5000x
func BenchmarkConsume(b *testing.B) {
	ctx := context.Background()
	path := filepath.Join(b.TempDir(), "bus.db")
	db := openDB(b, path)
	db.SetMaxOpenConns(1)
	if _, err := db.Exec(`PRAGMA synchronous = FULL`); err != nil {
		b.Fatal(err)
	}
	if err := bus.InitializeSchema(ctx, db, "events"); err != nil {
		b.Fatal(err)
	}
	pub, _ := bus.NewPublisher(watermillsql.BeginnerFromStdSQL(db), nil)
	batch := make([]*message.Message, 0, 100)
	for i := range b.N {
		batch = append(batch, message.NewMessage(string(rune(i)), []byte(`{"event_id":1,"type":"x"}`)))
		if len(batch) == cap(batch) || i == b.N-1 {
			if err := pub.Publish("events", batch...); err != nil {
				b.Fatal(err)
			}
			batch = batch[:0]
		}
	}
	sub, _ := bus.NewSubscriber(db, bus.SubscriberConfig{ConsumerGroup: "g", PollInterval: time.Millisecond}, nil)
	defer sub.Close()
	b.ReportAllocs()
	b.ResetTimer()
	start := time.Now()
	msgs, err := sub.Subscribe(ctx, "events")
	if err != nil {
		b.Fatal(err)
	}
	for range b.N {
		(<-msgs).Ack()
	}
	b.ReportMetric(float64(b.N)/time.Since(start).Seconds(), "msgs/s")
}

// BenchmarkPublish publishes b.N messages of about 1 KB on the same file as BenchmarkConsume,
// one message per transaction (batch=1, as a state change publishes its event) and 100 per
// Publish call (batch=100); ns/op is one message. Run:
// go test ./bridge/sqlite/bus -run '^$' -bench Publish -count 10 > new.txt
func BenchmarkPublish(b *testing.B) {
	for _, batch := range []int{1, 100} {
		b.Run(fmt.Sprint("batch=", batch), func(b *testing.B) {
			db := openDB(b, filepath.Join(b.TempDir(), "bus.db"))
			db.SetMaxOpenConns(1)
			if _, err := db.Exec(`PRAGMA synchronous = FULL`); err != nil {
				b.Fatal(err)
			}
			if err := bus.InitializeSchema(context.Background(), db, "events"); err != nil {
				b.Fatal(err)
			}
			pub, _ := bus.NewPublisher(watermillsql.BeginnerFromStdSQL(db), nil)
			payload := []byte(fmt.Sprintf(`{"event_id":1,"type":"transcription.completed","pad":%q}`, make([]byte, 950)))
			b.ReportAllocs()
			b.ResetTimer()
			publishAll(b, pub, batch, payload)
		})
	}
}

// publishAll publishes b.N copies of payload, batch per Publish call.
func publishAll(b *testing.B, pub message.Publisher, batch int, payload []byte) {
	msgs := make([]*message.Message, 0, batch)
	for i := range b.N {
		msgs = append(msgs, message.NewMessage(fmt.Sprint(i), payload))
		if len(msgs) == batch || i == b.N-1 {
			if err := pub.Publish("events", msgs...); err != nil {
				b.Fatal(err)
			}
			msgs = msgs[:0]
		}
	}
}
