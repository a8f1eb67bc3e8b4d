package sqlite

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"

	watermillsql "github.com/ThreeDotsLabs/watermill-sql/v4/pkg/sql"
	"github.com/ThreeDotsLabs/watermill/message"
	"github.com/ThreeDotsLabs/watermill/message/router/middleware"
	"github.com/google/uuid"

	"github.com/transcript-bridge/bridge/bridge"
	"github.com/transcript-bridge/bridge/bridge/sqlite/bus"
)

// What bridge/storecopy needs to move a store's state to another database: the database handle
// and a way to put the outbox's pending events on the bus again.

// DB returns the store's database handle (one connection, see Open), for tools that read or
// write the store's tables themselves, as bridge/storecopy does. Closing the store closes it.
// It never fails.
func (s *Store) DB() *sql.DB { return s.db }

// republishBatch is how many pending events RepublishPending reads and publishes at a time.
const republishBatch = 500

// RepublishPending publishes an EventRef on bridge.EventsTopic for every outbox event the relay
// has not handed on yet (delivered_at null), oldest first, on tx (in a transaction of its own
// when tx is nil), as the store's writes publish theirs: the bus's messages are not copied with
// the store, and the relay learns of an event only from them. An event published twice is
// harmless: FanOut of an event already handed on adds nothing. It returns how many it published,
// and fails, naming the event, on a database error (nothing is published then when tx is nil).
func (s *Store) RepublishPending(ctx context.Context, tx *sql.Tx) (int, error) {
	if tx == nil {
		var n int
		err := s.tx(ctx, func(tx *sql.Tx) error {
			var err error
			n, err = s.RepublishPending(ctx, tx)
			return err
		})
		return n, err
	}
	pub, err := bus.NewPublisher(watermillsql.TxFromStdSQL(tx), nil)
	if err != nil {
		return 0, fmt.Errorf("republish pending events: %w", err)
	}
	n, after := 0, int64(0)
	for {
		refs, err := pendingRefs(ctx, tx, after)
		if err != nil {
			return n, fmt.Errorf("republish pending events after %d: %w", after, err)
		}
		if len(refs) == 0 {
			return n, nil
		}
		for _, ref := range refs {
			payload, _ := json.Marshal(ref)
			msg := message.NewMessage(uuid.NewString(), payload)
			if ref.JobID != "" {
				middleware.SetCorrelationID(ref.JobID, msg)
			}
			if err := pub.Publish(bridge.EventsTopic, msg); err != nil {
				return n, fmt.Errorf("republish %s event %d: %w", ref.Type, ref.EventID, err)
			}
			n++
		}
		after = refs[len(refs)-1].EventID
	}
}

// pendingRefs returns up to republishBatch EventRefs of the events not handed on yet with an id
// above after, by id.
func pendingRefs(ctx context.Context, tx *sql.Tx, after int64) ([]bridge.EventRef, error) {
	rows, err := tx.QueryContext(ctx, `SELECT id, type, job_id, transcription_id FROM outbox
		WHERE delivered_at IS NULL AND id > ? ORDER BY id LIMIT ?`, after, republishBatch)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []bridge.EventRef
	for rows.Next() {
		var r bridge.EventRef
		if err := rows.Scan(&r.EventID, &r.Type, &r.JobID, &r.TranscriptionID); err != nil {
			return nil, err
		}
		out = append(out, r)
	}
	return out, rows.Err()
}
