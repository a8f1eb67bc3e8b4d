// Package bus is the event bus of the PostgreSQL store (bus.driver: sql): watermill-sql v4's
// Publisher and PostgreSQL adapters (DefaultPostgreSQLSchema with a BYTEA payload,
// DefaultPostgreSQLOffsetsAdapter with two lease columns), read by the lease-based subscriber of
// package sqlbus; one table of messages and one of consumer-group offsets per topic
// ("watermill_<topic>", "watermill_offsets_<topic>"), plus Backlog for the relay.
//
// How it behaves on PostgreSQL (watermill-sql v4.1.2 pkg/sql read for this package):
//
//   - A message row records the publishing transaction's id (pg_current_xact_id(), xid8). A
//     reader reads only rows whose transaction id is below the oldest transaction still
//     running (pg_snapshot_xmin), ordered by (transaction id, offset), so a message committed
//     late is never skipped and every group sees one order. Publishing on the store's *sql.Tx
//     (NewPublisher(watermillsql.TxFromStdSQL(tx))) is the transactional outbox: the message
//     exists only if the state change commits.
//   - A group's reader holds a lease on the group's offsets row (leased_by, lease_until) and
//     reads a batch in one short READ COMMITTED transaction that also writes the acks of the
//     batch before: no transaction stays open while a handler runs, so neither a connection
//     nor the server's xmin horizon is held by a message out. With InFlight above 1 a window
//     of messages is out at once (the relay's fan-out commits many together). The position is
//     (last_processed_transaction_id, offset_acked) and only moves forward.
//   - The horizon is still the server's: any transaction holding an xid, in any database of
//     the server (a client left idle in transaction, a long batch job), holds back what the bus
//     reads while it runs. Operators should set idle_in_transaction_session_timeout, and give
//     the bridge a server without long transactions (or use bus.driver: nats).
//   - Subscribers of one group take turns by lease: one reads, the others look every
//     PollInterval for a free or expired lease (a crashed reader's group resumes after at most
//     Lease). Delivery is at least once, in order; a crash before an ack is written reads the
//     message again.
//   - A group's offsets row is created at position 0 when it first subscribes: a new group
//     reads every message kept so far.
package bus

import (
	watermillsql "github.com/ThreeDotsLabs/watermill-sql/v4/pkg/sql"
)

// SchemaAdapter returns the schema adapter of the bus: watermill-sql's PostgreSQL schema with a
// BYTEA payload (a message's payload need not be JSON) and batchSize messages per read (100
// when 0).
func SchemaAdapter(batchSize int) watermillsql.DefaultPostgreSQLSchema {
	return watermillsql.DefaultPostgreSQLSchema{
		GenerateMessagesTableName: messagesTable,
		GeneratePayloadType:       func(string) string { return "BYTEA" },
		SubscribeBatchSize:        batchSize,
	}
}

// offsets is the offsets adapter of the bus: watermill-sql's PostgreSQL offsets, one row per
// consumer group, with the lease's two columns, and a NextOffsetQuery that does not lock (the
// lease guards the row).
type offsets struct {
	watermillsql.DefaultPostgreSQLOffsetsAdapter
}

// OffsetsAdapter returns the offsets adapter of the bus.
func OffsetsAdapter() watermillsql.OffsetsAdapter {
	return offsets{watermillsql.DefaultPostgreSQLOffsetsAdapter{GenerateMessagesOffsetsTableName: offsetsTable}}
}

// SchemaInitializingQueries implements watermillsql.OffsetsAdapter: watermill-sql's table and
// the lease's columns (as migration 0017 adds them to the store's topics).
func (a offsets) SchemaInitializingQueries(p watermillsql.OffsetsSchemaInitializingQueriesParams) ([]watermillsql.Query, error) {
	qs, err := a.DefaultPostgreSQLOffsetsAdapter.SchemaInitializingQueries(p)
	if err != nil {
		return nil, err
	}
	return append(qs, watermillsql.Query{Query: `ALTER TABLE ` + offsetsTable(p.Topic) + `
		ADD COLUMN IF NOT EXISTS leased_by TEXT NOT NULL DEFAULT '',
		ADD COLUMN IF NOT EXISTS lease_until BIGINT NOT NULL DEFAULT 0`}), nil
}

// NextOffsetQuery implements watermillsql.OffsetsAdapter: the group's position, read under its
// lease.
func (a offsets) NextOffsetQuery(p watermillsql.NextOffsetQueryParams) (watermillsql.Query, error) {
	return watermillsql.Query{
		Query: `SELECT COALESCE(offset_acked, 0) AS offset_acked, last_processed_transaction_id FROM ` +
			offsetsTable(p.Topic) + ` WHERE consumer_group = $1`,
		Args: []any{p.ConsumerGroup},
	}, nil
}

// messagesTable and offsetsTable are watermill-sql's own names, quoted; topics are validated
// against watermill-sql's rules (letters, digits and - $ : . _) before they get here.
func messagesTable(topic string) string { return `"watermill_` + topic + `"` }
func offsetsTable(topic string) string  { return `"watermill_offsets_` + topic + `"` }
