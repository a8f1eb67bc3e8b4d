// Package bus is a Watermill Pub/Sub on SQLite (go-sqlite3): a schema and an offsets adapter for
// watermill-sql, whose Publisher writes messages (also on a caller's *sql.Tx, for the outbox),
// read by the lease-based subscriber of package sqlbus (see there why not watermill-sql's own
// Subscriber), which never holds a transaction while a handler runs: on SQLite, one writer,
// holding one would block every other writer for the handler's whole run (BEGIN IMMEDIATE) or
// fail the ack with SQLITE_BUSY_SNAPSHOT (a deferred read transaction upgraded after another
// write). pubsub_test.go runs Watermill's universal suite (pubsub/tests.TestPubSub) against it.
package bus

import (
	"database/sql"
	"encoding/json"
	"fmt"
	"strings"

	watermillsql "github.com/ThreeDotsLabs/watermill-sql/v4/pkg/sql"
	"github.com/ThreeDotsLabs/watermill/message"
)

// SchemaAdapter keeps each topic in its own table, "watermill_<topic>", whose INTEGER PRIMARY
// KEY is the offset. SQLite has one writer at a time, so offsets grow in commit order and a
// reader never skips a row that commits later with a smaller offset.
type SchemaAdapter struct {
	// BatchSize is how many messages one SelectQuery returns (default 100).
	BatchSize int
}

var _ watermillsql.SchemaAdapter = SchemaAdapter{}

// quote returns the table name for topic and kind, quoted as an SQL identifier; topics are
// validated against watermill-sql's rules before they get here.
func table(kind, topic string) string {
	return `"` + strings.ReplaceAll(kind+topic, `"`, `""`) + `"`
}

func messagesTable(topic string) string { return table("watermill_", topic) }
func offsetsTable(topic string) string  { return table("watermill_offsets_", topic) }

// InsertQuery implements watermillsql.SchemaAdapter: one INSERT for all of p.Msgs. It fails
// when a message's metadata cannot be marshalled.
func (a SchemaAdapter) InsertQuery(p watermillsql.InsertQueryParams) (watermillsql.Query, error) {
	topic, msgs := p.Topic, p.Msgs
	if len(msgs) == 0 {
		return watermillsql.Query{}, fmt.Errorf("insert into %s: no messages", topic)
	}
	args := make([]any, 0, 3*len(msgs))
	for _, m := range msgs {
		md, err := json.Marshal(m.Metadata)
		if err != nil {
			return watermillsql.Query{}, fmt.Errorf("message %s metadata: %w", m.UUID, err)
		}
		args = append(args, m.UUID, []byte(m.Payload), string(md))
	}
	values := strings.TrimSuffix(strings.Repeat("(?,?,?),", len(msgs)), ",")
	return watermillsql.Query{
		Query: `INSERT INTO ` + messagesTable(topic) + ` (uuid, payload, metadata) VALUES ` + values,
		Args:  args,
	}, nil
}

// SelectQuery implements watermillsql.SchemaAdapter: the next batch after the group's acked
// offset, oldest first.
func (a SchemaAdapter) SelectQuery(p watermillsql.SelectQueryParams) (watermillsql.Query, error) {
	batch := a.BatchSize
	if batch <= 0 {
		batch = 100
	}
	return watermillsql.Query{
		Query: `SELECT "offset", uuid, payload, metadata FROM ` + messagesTable(p.Topic) + `
			WHERE "offset" > COALESCE((SELECT offset_acked FROM ` + offsetsTable(p.Topic) + ` WHERE consumer_group = ?), 0)
			ORDER BY "offset" LIMIT ?`,
		Args: []any{p.ConsumerGroup, batch},
	}, nil
}

// UnmarshalMessage implements watermillsql.SchemaAdapter. It fails on a row whose metadata is
// not a JSON object of strings.
func (a SchemaAdapter) UnmarshalMessage(p watermillsql.UnmarshalMessageParams) (watermillsql.Row, error) {
	var r watermillsql.Row
	if err := p.Row.Scan(&r.Offset, &r.UUID, &r.Payload, &r.Metadata); err != nil {
		return r, fmt.Errorf("scan message: %w", err)
	}
	md := message.Metadata{}
	if len(r.Metadata) > 0 {
		if err := json.Unmarshal(r.Metadata, &md); err != nil {
			return r, fmt.Errorf("message at offset %d: metadata: %w", r.Offset, err)
		}
	}
	r.Msg = message.NewMessage(string(r.UUID), r.Payload)
	r.Msg.Metadata = md
	return r, nil
}

// SchemaInitializingQueries implements watermillsql.SchemaAdapter.
func (a SchemaAdapter) SchemaInitializingQueries(p watermillsql.SchemaInitializingQueriesParams) ([]watermillsql.Query, error) {
	return []watermillsql.Query{{Query: `CREATE TABLE IF NOT EXISTS ` + messagesTable(p.Topic) + ` (
		"offset"   INTEGER PRIMARY KEY AUTOINCREMENT,
		uuid       TEXT NOT NULL,
		payload    BLOB,
		metadata   TEXT NOT NULL DEFAULT '{}',
		created_at TEXT NOT NULL DEFAULT (strftime('%Y-%m-%dT%H:%M:%fZ', 'now'))
	)`}}, nil
}

// SubscribeIsolationLevel implements watermillsql.SchemaAdapter: SQLite transactions are
// serializable.
func (a SchemaAdapter) SubscribeIsolationLevel() sql.IsolationLevel { return sql.LevelDefault }
