// Package sqlbus is the consumer side of the stores' event buses (bridge/sqlite/bus and
// bridge/postgres/bus): a Watermill Subscriber over watermill-sql's schema and offsets
// adapters that never holds a transaction while a handler runs.
//
// Why not watermill-sql's own Subscriber (issue 15 evaluated it on SQLite, issue 32 measured
// it on PostgreSQL): it keeps one transaction open from SELECT to ack while the handler runs
// and hands out the next message only after the last one's ack and commit. In watermill-sql
// v4.1.2 pkg/sql/subscriber.go, Subscriber.query begins it (BeginTx), processMessage hands the
// message out with the tx in its context, sendMessage waits for the handler's Ack, and only
// then come the ack query and the commit. On SQLite (one writer) that blocks every other writer
// for the handler's whole run or fails the ack with SQLITE_BUSY_SNAPSHOT; on PostgreSQL it
// costs a commit (a WAL flush) per message and one message in flight per consumer group, and
// the open transaction holds back every group's xmin horizon (1,326 deliveries/s at best).
//
// Here a consumer group's reader takes a lease on the group's offsets row in one short
// transaction, reads a batch, commits, hands the messages out (one at a time, or a window of
// InFlight at once, in order) and writes the acked position with the next batch's read (under
// a backlog: one write per batch), or in a short transaction of its own before it waits for
// more (and with each lease renewal). A lease that is not renewed (a crashed process) expires
// and another subscriber of the group resumes after the last written ack: delivery is at least
// once, in order. The stores' pubsub tests run Watermill's universal suite
// (pubsub/tests.TestPubSub) against it on each database.
package sqlbus

import (
	"context"
	"database/sql"

	watermillsql "github.com/ThreeDotsLabs/watermill-sql/v4/pkg/sql"
)

// Dialect is what a database gives the Subscriber: watermill-sql's schema (SelectQuery reads
// the next batch after the group's acked position; UnmarshalMessage makes its rows) and
// offsets adapters (BeforeSubscribingQueries creates the group's row), and the statements on
// a group's offsets row that hold its lease.
type Dialect interface {
	// Schema returns the schema adapter reading batchSize messages at a time.
	Schema(batchSize int) watermillsql.SchemaAdapter
	// Offsets returns the offsets adapter; its NextOffsetQuery must not lock (the lease
	// guards the row).
	Offsets() watermillsql.OffsetsAdapter
	// Initialize creates topic's tables, lease columns included, when missing.
	Initialize(ctx context.Context, db *sql.DB, topic string) error
	// PendingQuery selects whether the group has messages after its acked position and its
	// lease is free, expired (before now) or holder's: the read before a write.
	PendingQuery(topic, group, holder string, now int64) watermillsql.Query
	// ClaimQuery takes (or renews) the group's lease for holder until the given time, when it
	// is free, expired (before now) or already holder's. One row affected: the lease is held.
	ClaimQuery(topic, group, holder string, now, until int64) watermillsql.Query
	// LeasedAckQuery moves the group's acked position forward to last (never back) and renews
	// the lease, only while holder holds it. No row affected: the lease was lost.
	LeasedAckQuery(topic, group, holder string, last watermillsql.Row, until int64) watermillsql.Query
	// ReleaseQuery gives holder's lease up.
	ReleaseQuery(topic, group, holder string) watermillsql.Query
	// BacklogQuery counts the messages the group has not acked.
	BacklogQuery(topic, group string) watermillsql.Query
}
