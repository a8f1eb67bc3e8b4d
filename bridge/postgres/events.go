package postgres

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"time"

	"github.com/ThreeDotsLabs/watermill"
	watermillsql "github.com/ThreeDotsLabs/watermill-sql/v4/pkg/sql"
	"github.com/ThreeDotsLabs/watermill/message"
	"github.com/ThreeDotsLabs/watermill/message/router/middleware"
	"github.com/google/uuid"

	"github.com/transcript-bridge/bridge/bridge"
	"github.com/transcript-bridge/bridge/bridge/postgres/bus"
)

// emit writes e to the outbox and publishes its EventRef on the bus, both on tx: the event
// exists only if the state change it reports commits. The message's correlation id is the job.
func emit(ctx context.Context, tx *sql.Tx, e bridge.Event, now time.Time) error {
	if len(e.Data) == 0 {
		e.Data = json.RawMessage("{}")
	}
	var id int64
	if err := tx.QueryRowContext(ctx, `INSERT INTO outbox (type, job_id, transcription_id, data, created_at) VALUES ($1,$2,$3,$4,$5)
		RETURNING id`, e.Type, e.JobID, e.TranscriptionID, string(e.Data), now.UnixNano()).Scan(&id); err != nil {
		return fmt.Errorf("outbox %s: %w", e.Type, err)
	}
	payload, _ := json.Marshal(bridge.EventRef{EventID: id, Type: e.Type, JobID: e.JobID, TranscriptionID: e.TranscriptionID, Endpoint: e.Endpoint})
	msg := message.NewMessage(uuid.NewString(), payload)
	msg.SetContext(ctx)
	if e.JobID != "" {
		middleware.SetCorrelationID(e.JobID, msg)
	}
	pub, err := bus.NewPublisher(watermillsql.TxFromStdSQL(tx), nil)
	if err != nil {
		return err
	}
	if err := pub.Publish(bridge.EventsTopic, msg); err != nil {
		return fmt.Errorf("publish %s event %d: %w", e.Type, id, err)
	}
	return nil
}

// Bus returns the event bus on the store's database: the lease-based subscriber (see package
// bus; consumer group "relay" when cfg names none) and a publisher, for the relay's Bus and
// Poison. The caller closes the subscriber. It fails on an invalid cfg.
func (s *Store) Bus(cfg bus.SubscriberConfig, logger watermill.LoggerAdapter) (*bus.Subscriber, message.Publisher, error) {
	if cfg.ConsumerGroup == "" {
		cfg.ConsumerGroup = "relay"
	}
	sub, err := bus.NewSubscriber(s.busDB, cfg, logger) // reads and acks need not wait for the flush (asyncCommits)
	if err != nil {
		return nil, nil, err
	}
	pub, err := bus.NewPublisher(watermillsql.BeginnerFromStdSQL(s.db), logger)
	if err != nil {
		sub.Close()
		return nil, nil, err
	}
	return sub, pub, nil
}

// PendingEvents implements bridge.JobStore.
func (s *Store) PendingEvents(ctx context.Context, limit int) ([]bridge.Event, error) {
	rows, err := s.db.QueryContext(ctx, `SELECT id, type, job_id, transcription_id, data, created_at FROM outbox
		WHERE delivered_at IS NULL ORDER BY id LIMIT $1`, limit)
	out, err := collect(rows, err, func(r scanner) (bridge.Event, error) {
		var e bridge.Event
		var data string
		var at int64
		err := r.Scan(&e.ID, &e.Type, &e.JobID, &e.TranscriptionID, &data, &at)
		e.Data, e.CreatedAt = json.RawMessage(data), fromNanos(at)
		return e, err
	})
	if err != nil {
		return nil, fmt.Errorf("pending events: %w", err)
	}
	return out, nil
}
