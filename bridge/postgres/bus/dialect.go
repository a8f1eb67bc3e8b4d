package bus

import (
	"context"
	"database/sql"
	"fmt"

	watermillsql "github.com/ThreeDotsLabs/watermill-sql/v4/pkg/sql"

	"github.com/transcript-bridge/bridge/bridge/sqlbus"
)

// Dialect is the PostgreSQL dialect of the lease-based subscriber (sqlbus): watermill-sql's
// PostgreSQL schema and offsets, a group's position being (last_processed_transaction_id,
// offset_acked), and the lease in two columns of the offsets row (migration 0017).
type Dialect struct{}

var _ sqlbus.Dialect = Dialect{}

// Schema implements sqlbus.Dialect: watermill-sql's PostgreSQL schema, whose SelectQuery reads
// only below the oldest transaction still running, in (transaction id, offset) order.
func (Dialect) Schema(batchSize int) watermillsql.SchemaAdapter {
	return SchemaAdapter(batchSize)
}

// Offsets implements sqlbus.Dialect.
func (Dialect) Offsets() watermillsql.OffsetsAdapter { return OffsetsAdapter() }

// Initialize implements sqlbus.Dialect.
func (Dialect) Initialize(ctx context.Context, db *sql.DB, topic string) error {
	return InitializeSchema(ctx, db, topic)
}

// after is the condition "message m is after the position of offsets row o", for the
// (transaction_id, offset) primary key's index.
const after = `(m.transaction_id, m."offset") > (o.last_processed_transaction_id, COALESCE(o.offset_acked, 0))`

// PendingQuery implements sqlbus.Dialect: only messages a read would return (below the oldest
// transaction still running) count.
func (Dialect) PendingQuery(topic, group, holder string, now int64) watermillsql.Query {
	return watermillsql.Query{
		Query: `SELECT EXISTS (SELECT 1 FROM ` + offsetsTable(topic) + ` o WHERE o.consumer_group = $1
			AND (o.leased_by = '' OR o.leased_by = $2 OR o.lease_until < $3)
			AND EXISTS (SELECT 1 FROM ` + messagesTable(topic) + ` m WHERE ` + after + `
				AND m.transaction_id < pg_snapshot_xmin(pg_current_snapshot())))`,
		Args: []any{group, holder, now},
	}
}

// ClaimQuery implements sqlbus.Dialect.
func (Dialect) ClaimQuery(topic, group, holder string, now, until int64) watermillsql.Query {
	return watermillsql.Query{
		Query: `UPDATE ` + offsetsTable(topic) + ` SET leased_by = $1, lease_until = $2
			WHERE consumer_group = $3 AND (leased_by = '' OR leased_by = $1 OR lease_until < $4)`,
		Args: []any{holder, until, group, now},
	}
}

// LeasedAckQuery implements sqlbus.Dialect. last is a row read by SelectQuery: its ExtraData
// carries its transaction id.
func (Dialect) LeasedAckQuery(topic, group, holder string, last watermillsql.Row, until int64) watermillsql.Query {
	forward := `($2::text::xid8, $1::bigint) > (last_processed_transaction_id, COALESCE(offset_acked, 0))`
	return watermillsql.Query{
		Query: `UPDATE ` + offsetsTable(topic) + ` SET
			offset_acked = CASE WHEN ` + forward + ` THEN $1 ELSE offset_acked END,
			last_processed_transaction_id = CASE WHEN ` + forward + ` THEN $2::text::xid8 ELSE last_processed_transaction_id END,
			lease_until = $3
			WHERE consumer_group = $4 AND leased_by = $5`,
		Args: []any{last.Offset, transactionID(last), until, group, holder},
	}
}

// transactionID returns the transaction id of a row read by SelectQuery, as the decimal text
// PostgreSQL reads as an xid8.
func transactionID(row watermillsql.Row) string {
	switch x := row.ExtraData["transaction_id"].(type) {
	case watermillsql.XID8:
		return fmt.Sprint(uint64(x))
	case *watermillsql.XID8:
		return fmt.Sprint(uint64(*x))
	default:
		return fmt.Sprint(x)
	}
}

// ReleaseQuery implements sqlbus.Dialect.
func (Dialect) ReleaseQuery(topic, group, holder string) watermillsql.Query {
	return watermillsql.Query{
		Query: `UPDATE ` + offsetsTable(topic) + ` SET leased_by = '', lease_until = 0 WHERE consumer_group = $1 AND leased_by = $2`,
		Args:  []any{group, holder},
	}
}

// BacklogQuery implements sqlbus.Dialect: every message after the group's position (all of
// them before the group's first subscription), committed or not yet visible.
func (Dialect) BacklogQuery(topic, group string) watermillsql.Query {
	return watermillsql.Query{
		Query: `SELECT COUNT(*) FROM ` + messagesTable(topic) + ` m WHERE NOT EXISTS (
			SELECT 1 FROM ` + offsetsTable(topic) + ` o WHERE o.consumer_group = $1
			AND (m.transaction_id, m."offset") <= (o.last_processed_transaction_id, COALESCE(o.offset_acked, 0)))`,
		Args: []any{group},
	}
}
