package bus

import (
	watermillsql "github.com/ThreeDotsLabs/watermill-sql/v4/pkg/sql"
)

// OffsetsAdapter keeps one row per consumer group in "watermill_offsets_<topic>": the last acked
// offset and the lease (holder and expiry, Unix nanoseconds) of the subscriber reading for the
// group (Dialect's lease queries).
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
