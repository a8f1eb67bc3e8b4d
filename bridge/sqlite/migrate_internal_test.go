package sqlite

import (
	"context"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/pressly/goose/v3"

	"github.com/transcript-bridge/bridge/bridge"
)

// TestDownMigrations: going down one migration at a time to version 0 leaves only goose's own
// table, and going up again one at a time passes through the same schemas, so every Down undoes
// its Up exactly.
func TestDownMigrations(t *testing.T) {
	ctx := context.Background()
	s, p := openMigrated(t)
	vs, err := embedded() // the migrations' versions, ascending: numbered in ranges, with gaps
	if err != nil {
		t.Fatal(err)
	}
	versions := append([]int{0}, make([]int, len(vs))...)
	for i, v := range vs {
		versions[i+1] = int(v)
	}
	top := versions[len(versions)-1]
	schemas := make([][]string, top+1) // the schema at each version
	schemas[top] = schemaAt(t, s)
	for i := len(versions) - 2; i >= 0; i-- {
		v := versions[i]
		if _, err := p.Down(ctx); err != nil {
			t.Fatalf("down to %d: %v", v, err)
		}
		schemas[v] = schemaAt(t, s)
		if got, err := s.SchemaVersion(ctx); err != nil || got != v {
			t.Fatalf("after going down to %d, the database is at %d (%v)", v, got, err)
		}
	}
	var names []string
	for _, o := range schemas[0] {
		names = append(names, strings.SplitN(o, ":", 2)[0])
	}
	if want := []string{"index " + versionTable + "_once", "table " + versionTable, "table sqlite_sequence"}; !slices.Equal(names, want) {
		t.Errorf("schema at version 0: %v, want only goose's table: %v", names, want)
	}
	for _, v := range versions[1:] {
		if _, err := p.UpByOne(ctx); err != nil {
			t.Fatalf("up to %d: %v", v, err)
		}
		if got := schemaAt(t, s); !slices.Equal(got, schemas[v]) {
			t.Errorf("schema at %d going up:\n%s\nwant (the one going down):\n%s", v, strings.Join(got, "\n"), strings.Join(schemas[v], "\n"))
		}
	}
}

// openMigrated opens a new store (closed with the test) and returns it with a goose provider of
// its migrations.
func openMigrated(t *testing.T) (*Store, *goose.Provider) {
	t.Helper()
	s, err := Open(context.Background(), filepath.Join(t.TempDir(), "bridge.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	p, err := newProvider(s.db)
	if err != nil {
		t.Fatal(err)
	}
	return s, p
}

// schemaAt lists the tables and indexes of the store's database ("type name: sql"), sorted.
func schemaAt(t *testing.T, s *Store) []string {
	t.Helper()
	rows, err := s.db.Query(`SELECT type || ' ' || name || ': ' || COALESCE(sql, '') FROM sqlite_master ORDER BY type, name`)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	var out []string
	for rows.Next() {
		var n string
		if err := rows.Scan(&n); err != nil {
			t.Fatal(err)
		}
		out = append(out, strings.Join(strings.Fields(n), " "))
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	return out
}

// TestDeliveriesRebuildKeepsRows: migration 12 rebuilds deliveries (WITHOUT ROWID) under its
// name; the deliveries and their attempts made before come through it whole, and
// delivery_attempts' foreign key still names deliveries.
func TestDeliveriesRebuildKeepsRows(t *testing.T) {
	ctx := context.Background()
	s, p := openMigrated(t)
	if _, err := p.DownTo(ctx, 11); err != nil {
		t.Fatal(err)
	}
	for _, q := range []string{
		`INSERT INTO deliveries (id, event_id, endpoint, webhook_id, type, job_id, transcription_id, data, event_at,
			status, attempts, next_attempt_at, created_at, updated_at) VALUES
			('d-1', 7, 'crm', 'msg_1', 'transcription.completed', 'j-1', 't-1', '', 1, 'dead', 2, 5, 1, 6),
			('d-2', 7, 'erp', 'msg_2', 'transcription.completed', 'j-1', 't-1', '', 1, 'pending', 0, 5, 1, 1)`,
		`INSERT INTO delivery_attempts (delivery_id, at, status, latency_ms, response, error) VALUES
			('d-1', 3, 500, 1.5, 'oops', ''), ('d-1', 6, 0, 0, '', 'connection refused')`,
	} {
		if _, err := s.db.ExecContext(ctx, q); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := p.UpByOne(ctx); err != nil {
		t.Fatalf("up to 12: %v", err)
	}
	d, attempts, err := s.Delivery(ctx, "d-1")
	if err != nil {
		t.Fatal(err)
	}
	if d.WebhookID != "msg_1" || d.Status != "dead" || d.Attempts != 2 || len(attempts) != 2 || attempts[1].Error != "connection refused" {
		t.Errorf("Delivery(d-1) = %+v, %+v; want it dead after 2 attempts, both kept", d, attempts)
	}
	if ds, err := s.Deliveries(ctx, bridge.DeliveryFilter{Status: "pending"}); err != nil || len(ds) != 1 || ds[0].ID != "d-2" {
		t.Errorf("pending deliveries = %+v, %v; want d-2", ds, err)
	}
	var orphans int
	if err := s.db.QueryRowContext(ctx, `SELECT COUNT(*) FROM pragma_foreign_key_check`).Scan(&orphans); err != nil || orphans != 0 {
		t.Errorf("foreign_key_check: %d rows (%v), want none", orphans, err)
	}
	if _, err := s.db.ExecContext(ctx, `INSERT INTO delivery_attempts (delivery_id, at, status, latency_ms, response, error)
		VALUES ('no-such-delivery', 1, 200, 1, '', '')`); err == nil {
		t.Error("an attempt of no delivery was stored: delivery_attempts' foreign key is gone")
	}
}
