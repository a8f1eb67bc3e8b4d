package bus

import (
	watermillsql "github.com/ThreeDotsLabs/watermill-sql/v4/pkg/sql"
)

// OffsetsAdapter keeps one row per consumer group in "watermill_offsets_<topic>": the last acked
// offset and the lease (holder and expiry, Unix nanoseconds) of the subscriber reading for the
// group. The lease queries beyond watermillsql.OffsetsAdapter are what Subscriber uses.
type OffsetsAdapter struct{}

var _ watermillsql.OffsetsAdapter = OffsetsAdapter{}

// AckMessageQuery implements watermillsql.OffsetsAdapter: the offset only moves forward.
func (OffsetsAdapter) AckMessageQuery(p watermillsql.AckMessageQueryParams) (watermillsql.Query, error) {
	return watermillsql.Query{
		Query: `INSERT INTO ` + offsetsTable(p.Topic) + ` (consumer_group, offset_acked) VALUES (?, ?)
			ON CONFLICT (consumer_group) DO UPDATE SET offset_acked = excluded.offset_acked WHERE offset_acked < excluded.offset_acked`,
		Args: []any{p.ConsumerGroup, p.LastRow.Offset},
	}, nil
}

// ConsumedMessageQuery implements watermillsql.OffsetsAdapter; nothing is recorded between
// delivery and ack.
func (OffsetsAdapter) ConsumedMessageQuery(watermillsql.ConsumedMessageQueryParams) (watermillsql.Query, error) {
	return watermillsql.Query{}, nil
}

// NextOffsetQuery implements watermillsql.OffsetsAdapter.
func (OffsetsAdapter) NextOffsetQuery(p watermillsql.NextOffsetQueryParams) (watermillsql.Query, error) {
	return watermillsql.Query{
		Query: `SELECT COALESCE((SELECT offset_acked FROM ` + offsetsTable(p.Topic) + ` WHERE consumer_group = ?), 0)`,
		Args:  []any{p.ConsumerGroup},
	}, nil
}

// SchemaInitializingQueries implements watermillsql.OffsetsAdapter.
func (OffsetsAdapter) SchemaInitializingQueries(p watermillsql.OffsetsSchemaInitializingQueriesParams) ([]watermillsql.Query, error) {
	return []watermillsql.Query{{Query: `CREATE TABLE IF NOT EXISTS ` + offsetsTable(p.Topic) + ` (
		consumer_group TEXT PRIMARY KEY,
		offset_acked   INTEGER NOT NULL DEFAULT 0,
		leased_by      TEXT NOT NULL DEFAULT '',
		lease_until    INTEGER NOT NULL DEFAULT 0
	)`}}, nil
}

// BeforeSubscribingQueries implements watermillsql.OffsetsAdapter: the group's row exists
// before its first lease.
func (OffsetsAdapter) BeforeSubscribingQueries(p watermillsql.BeforeSubscribingQueriesParams) ([]watermillsql.Query, error) {
	return []watermillsql.Query{{
		Query: `INSERT INTO ` + offsetsTable(p.Topic) + ` (consumer_group) VALUES (?) ON CONFLICT (consumer_group) DO NOTHING`,
		Args:  []any{p.ConsumerGroup},
	}}, nil
}

// ClaimQuery takes (or renews) the group's lease for holder until the given time, when it is
// free, expired (now) or already the holder's. One row affected means the lease is held.
func (OffsetsAdapter) ClaimQuery(topic, consumerGroup, holder string, now, until int64) watermillsql.Query {
	return watermillsql.Query{
		Query: `UPDATE ` + offsetsTable(topic) + ` SET leased_by = ?, lease_until = ?
			WHERE consumer_group = ? AND (leased_by = '' OR leased_by = ? OR lease_until < ?)`,
		Args: []any{holder, until, consumerGroup, holder, now},
	}
}

// LeasedAckQuery moves the group's offset to offset and renews the lease, only while holder
// still holds it. No row affected means the lease was lost and the ack must not count.
func (OffsetsAdapter) LeasedAckQuery(topic, consumerGroup, holder string, offset, until int64) watermillsql.Query {
	return watermillsql.Query{
		Query: `UPDATE ` + offsetsTable(topic) + ` SET offset_acked = MAX(offset_acked, ?), lease_until = ?
			WHERE consumer_group = ? AND leased_by = ?`,
		Args: []any{offset, until, consumerGroup, holder},
	}
}

// ReleaseQuery gives the lease up so another subscriber of the group can read at once.
func (OffsetsAdapter) ReleaseQuery(topic, consumerGroup, holder string) watermillsql.Query {
	return watermillsql.Query{
		Query: `UPDATE ` + offsetsTable(topic) + ` SET leased_by = '', lease_until = 0 WHERE consumer_group = ? AND leased_by = ?`,
		Args:  []any{consumerGroup, holder},
	}
}

// BacklogQuery counts the messages the group has not acked.
func (OffsetsAdapter) BacklogQuery(topic, consumerGroup string) watermillsql.Query {
	return watermillsql.Query{
		Query: `SELECT COUNT(*) FROM ` + messagesTable(topic) + ` WHERE "offset" >
			COALESCE((SELECT offset_acked FROM ` + offsetsTable(topic) + ` WHERE consumer_group = ?), 0)`,
		Args: []any{consumerGroup},
	}
}
