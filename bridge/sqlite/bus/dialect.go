package bus

import (
	"context"
	"database/sql"

	watermillsql "github.com/ThreeDotsLabs/watermill-sql/v4/pkg/sql"

	"github.com/transcript-bridge/bridge/bridge/sqlbus"
)

// Dialect is the SQLite dialect of the lease-based subscriber (sqlbus): this package's schema
// and offsets adapters, a group's position being the last acked offset.
type Dialect struct{}

var _ sqlbus.Dialect = Dialect{}

// Schema implements sqlbus.Dialect.
func (Dialect) Schema(batchSize int) watermillsql.SchemaAdapter {
	return SchemaAdapter{BatchSize: batchSize}
}

// Offsets implements sqlbus.Dialect.
func (Dialect) Offsets() watermillsql.OffsetsAdapter { return OffsetsAdapter{} }

// Initialize implements sqlbus.Dialect.
func (Dialect) Initialize(ctx context.Context, db *sql.DB, topic string) error {
	return InitializeSchema(ctx, db, topic)
}

// PendingQuery implements sqlbus.Dialect.
func (Dialect) PendingQuery(topic, group, holder string, now int64) watermillsql.Query {
	return watermillsql.Query{
		Query: `SELECT EXISTS (SELECT 1 FROM ` + offsetsTable(topic) + ` o WHERE o.consumer_group = ?
			AND (o.leased_by = '' OR o.leased_by = ? OR o.lease_until < ?)
			AND EXISTS (SELECT 1 FROM ` + messagesTable(topic) + ` m WHERE m."offset" > o.offset_acked))`,
		Args: []any{group, holder, now},
	}
}

// ClaimQuery takes (or renews) the group's lease for holder until the given time, when it is
// free, expired (now) or already the holder's. One row affected means the lease is held.
func (Dialect) ClaimQuery(topic, consumerGroup, holder string, now, until int64) watermillsql.Query {
	return watermillsql.Query{
		Query: `UPDATE ` + offsetsTable(topic) + ` SET leased_by = ?, lease_until = ?
			WHERE consumer_group = ? AND (leased_by = '' OR leased_by = ? OR lease_until < ?)`,
		Args: []any{holder, until, consumerGroup, holder, now},
	}
}

// LeasedAckQuery moves the group's offset to last's and renews the lease, only while holder
// still holds it. No row affected means the lease was lost and the ack must not count.
func (Dialect) LeasedAckQuery(topic, consumerGroup, holder string, last watermillsql.Row, until int64) watermillsql.Query {
	return watermillsql.Query{
		Query: `UPDATE ` + offsetsTable(topic) + ` SET offset_acked = MAX(offset_acked, ?), lease_until = ?
			WHERE consumer_group = ? AND leased_by = ?`,
		Args: []any{last.Offset, until, consumerGroup, holder},
	}
}

// ReleaseQuery gives the lease up so another subscriber of the group can read at once.
func (Dialect) ReleaseQuery(topic, consumerGroup, holder string) watermillsql.Query {
	return watermillsql.Query{
		Query: `UPDATE ` + offsetsTable(topic) + ` SET leased_by = '', lease_until = 0 WHERE consumer_group = ? AND leased_by = ?`,
		Args:  []any{consumerGroup, holder},
	}
}

// BacklogQuery counts the messages the group has not acked.
func (Dialect) BacklogQuery(topic, consumerGroup string) watermillsql.Query {
	return watermillsql.Query{
		Query: `SELECT COUNT(*) FROM ` + messagesTable(topic) + ` WHERE "offset" >
			COALESCE((SELECT offset_acked FROM ` + offsetsTable(topic) + ` WHERE consumer_group = ?), 0)`,
		Args: []any{consumerGroup},
	}
}
