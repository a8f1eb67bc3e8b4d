package bus_test

import (
	"context"
	"path/filepath"
	"testing"
	"time"

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
	pub, _ := bus.NewPublisher(db, nil)
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
