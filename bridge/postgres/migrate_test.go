package postgres_test

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/ThreeDotsLabs/watermill/message/router/middleware"

	"github.com/transcript-bridge/bridge/bridge"
	"github.com/transcript-bridge/bridge/bridge/postgres"
	"github.com/transcript-bridge/bridge/bridge/postgres/bus"
	"github.com/transcript-bridge/bridge/internal/pgtest"
)

// rawDB opens dsn with the pgx driver, closed when the test ends.
func rawDB(t *testing.T, dsn string) *sql.DB {
	t.Helper()
	db, err := sql.Open("pgx", dsn)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	return db
}

// TestBusTablesAreWatermills: the tables migration 0003 makes for the store's two topics are
// the ones the bus makes for a topic (bus.InitializeSchema), column for column and index for
// index (a probe topic of the same shape: a dot makes the names quoted).
func TestBusTablesAreWatermills(t *testing.T) {
	ctx := context.Background()
	dsn := pgtest.New(t)
	open(t, dsn)
	db := rawDB(t, dsn)
	for _, topic := range []string{bridge.EventsTopic, bridge.EventsPoisonTopic} {
		probe := strings.Replace(topic, "events", "probe", 1)
		if err := bus.InitializeSchema(ctx, db, probe); err != nil {
			t.Fatal(err)
		}
		if got, want := tableShape(t, db, topic), tableShape(t, db, probe); !slices.Equal(got, want) {
			t.Errorf("tables of topic %s:\n%s\nwant those the bus makes:\n%s", topic, strings.Join(got, "\n"), strings.Join(want, "\n"))
		}
	}
}

// tableShape lists the columns and indexes of topic's two tables, the topic's name replaced by
// "<topic>", sorted.
func tableShape(t *testing.T, db *sql.DB, topic string) []string {
	t.Helper()
	rows, err := db.Query(`
		SELECT table_name || '.' || column_name || ' ' || data_type || ' ' || COALESCE(character_maximum_length::text, '') || ' ' ||
			is_nullable || ' ' || COALESCE(column_default, '')
		FROM information_schema.columns WHERE table_name IN ($1, $2)
		UNION ALL
		SELECT indexdef FROM pg_indexes WHERE tablename IN ($1, $2)`, "watermill_"+topic, "watermill_offsets_"+topic)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	var out []string
	for rows.Next() {
		var s string
		if err := rows.Scan(&s); err != nil {
			t.Fatal(err)
		}
		out = append(out, strings.ReplaceAll(s, topic, "<topic>"))
	}
	if len(out) == 0 {
		t.Fatalf("topic %s has no tables", topic)
	}
	slices.Sort(out)
	return out
}

// TestUpgradePublishesPendingEvents: events written before the bus existed (migration 3) and
// not yet handed on are published on it by the upgrade, in order.
func TestUpgradePublishesPendingEvents(t *testing.T) {
	ctx := context.Background()
	dsn := pgtest.New(t)
	s, err := postgres.Open(ctx, dsn)
	if err != nil {
		t.Fatal(err)
	}
	s.Close()
	db := rawDB(t, dsn)
	for _, q := range []string{ // the state a pre-bus installation leaves
		`DELETE FROM goose_db_version WHERE version_id = 3`,
		`INSERT INTO outbox (type, job_id, transcription_id, data, created_at) VALUES ('recording.skipped', 'j1', '', '{}', 1), ('transcription.uploaded', 'j2', 't2', '{}', 2)`,
		`INSERT INTO outbox (type, job_id, transcription_id, data, created_at, delivered_at) VALUES ('transcription.uploaded', 'j3', 't3', '{}', 3, 4)`,
	} {
		if _, err := db.Exec(q); err != nil {
			t.Fatal(err)
		}
	}
	s = open(t, dsn)
	sub, _, err := s.Bus(bus.SubscriberConfig{PollInterval: 5 * time.Millisecond}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer sub.Close()
	msgs, err := sub.Subscribe(ctx, bridge.EventsTopic)
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"j1", "j2"} {
		select {
		case m := <-msgs:
			var ref bridge.EventRef
			json.Unmarshal(m.Payload, &ref)
			if ref.JobID != want || ref.EventID == 0 || middleware.MessageCorrelationID(m) != want {
				t.Errorf("message %s, want the pending event of %s", m.Payload, want)
			}
			m.Ack()
		case <-time.After(10 * time.Second):
			t.Fatalf("no message for the pending event of %s", want)
		}
	}
	select {
	case m := <-msgs:
		t.Errorf("a third message %s: an event already handed on was published again", m.Payload)
	case <-time.After(300 * time.Millisecond):
	}
}

// TestOpenRefusesANewerSchema: a database a newer bridge migrated is refused with a
// bridge.SchemaError, and left as it is.
func TestOpenRefusesANewerSchema(t *testing.T) {
	ctx := context.Background()
	dsn := pgtest.New(t)
	s, err := postgres.Open(ctx, dsn)
	if err != nil {
		t.Fatal(err)
	}
	s.Close()
	newer := postgres.SchemaVersion() + 1
	if _, err := rawDB(t, dsn).Exec(`INSERT INTO goose_db_version (version_id, is_applied) VALUES ($1, true)`, newer); err != nil {
		t.Fatal(err)
	}
	_, err = postgres.Open(ctx, dsn)
	var se *bridge.SchemaError
	if !errors.As(err, &se) || se.Database != newer || se.Known != postgres.SchemaVersion() {
		t.Fatalf("Open(schema %d) = %v, want a SchemaError naming %d and %d", newer, err, newer, postgres.SchemaVersion())
	}
	if !strings.Contains(err.Error(), "newer than this bridge knows") || !strings.Contains(err.Error(), "bridge_test_") {
		t.Errorf("Open(schema %d) = %q, want it to name the database and say the schema is newer", newer, err)
	}
}
