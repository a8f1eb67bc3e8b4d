// Package bus is the event bus of the PostgreSQL store (bus.driver: sql): watermill-sql v4's
// Publisher, Subscriber and PostgreSQL adapters (DefaultPostgreSQLSchema with a BYTEA payload,
// DefaultPostgreSQLOffsetsAdapter), one table of messages and one of consumer-group offsets per
// topic ("watermill_<topic>", "watermill_offsets_<topic>"), plus Backlog for the relay.
//
// How watermill-sql v4.1.2 behaves on PostgreSQL (pkg/sql, read for this package):
//
//   - A message row records the publishing transaction's id (pg_current_xact_id(), xid8). A
//     subscriber reads only rows whose transaction id is below the oldest transaction still
//     running (pg_snapshot_xmin), ordered by (transaction id, offset), so a message committed
//     late is never skipped and every group sees one order. Publishing on the store's *sql.Tx
//     (NewPublisher(watermillsql.TxFromStdSQL(tx))) is the transactional outbox: the message
//     exists only if the state change commits.
//   - Subscriber.query opens one REPEATABLE READ transaction per batch, locks the group's offset
//     row (SELECT … FOR UPDATE), reads up to BatchSize messages, hands them out one at a time and
//     holds that transaction (and its connection) until the handler acks; then it writes the
//     acked offset and commits. A nack resends the same message within the same transaction
//     after ResendInterval; a handler slower than AckDeadline gets the message again. Holding a
//     transaction across the handler is acceptable on PostgreSQL (MVCC: writers are not blocked,
//     unlike SQLite's single writer), with two costs: each subscription holds a connection while
//     a message is out, and while one is out no subscriber of any group sees messages published
//     by transactions that began after it (the xmin horizon), until the ack
//     (TestAMessageOutHoldsBackLaterOnes). The relay's handler is short (a FanOut), so this
//     delays, never blocks. The horizon is the server's: any transaction holding an xid, in any
//     database of the server (a client left idle in transaction, a long batch job), holds the
//     bus back while it runs. Operators should set idle_in_transaction_session_timeout, and give
//     the bridge a server without long transactions (or use bus.driver: nats).
//   - Subscribers of one group compete for the offset row: one reads while the others wait on
//     the lock, and when the holder commits they fail with "could not serialize access due to
//     concurrent update" (REPEATABLE READ) and query again at once. So a group reads in order,
//     one batch at a time, whatever the number of replicas; delivery is exactly once per group
//     while commits succeed, at least once otherwise (a crash before the commit rolls the batch's
//     ack back).
//   - A group's offset row is created at offset 0 when it first subscribes: a new group reads
//     every message kept so far.
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

// OffsetsAdapter returns the offsets adapter of the bus: watermill-sql's PostgreSQL offsets, one
// row per consumer group.
func OffsetsAdapter() watermillsql.DefaultPostgreSQLOffsetsAdapter {
	return watermillsql.DefaultPostgreSQLOffsetsAdapter{GenerateMessagesOffsetsTableName: offsetsTable}
}

// messagesTable and offsetsTable are watermill-sql's own names, quoted; topics are validated
// against watermill-sql's rules (letters, digits and - $ : . _) before they get here.
func messagesTable(topic string) string { return `"watermill_` + topic + `"` }
func offsetsTable(topic string) string  { return `"watermill_offsets_` + topic + `"` }
