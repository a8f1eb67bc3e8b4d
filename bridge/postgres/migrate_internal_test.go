package postgres

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/transcript-bridge/bridge/bridge"
	"github.com/transcript-bridge/bridge/internal/pgtest"
)

// TestDownMigrations: going down one migration at a time to version 0 leaves only goose's own
// table, and going up again one at a time passes through the same schemas, so every Down undoes
// its Up exactly.
func TestDownMigrations(t *testing.T) {
	ctx := context.Background()
	s, err := Open(ctx, pgtest.New(t))
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	p, err := newProvider(s.db)
	if err != nil {
		t.Fatal(err)
	}
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
	var tables []string
	for _, c := range schemas[0] {
		first, _, _ := strings.Cut(c, " ")
		if name, _, _ := strings.Cut(first, "."); !slices.Contains(tables, name) {
			tables = append(tables, name)
		}
	}
	if want := []string{"goose_db_version"}; !slices.Equal(tables, want) {
		t.Errorf("tables at version 0: %v, want only goose's: %v", tables, want)
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

// schemaAt lists the columns ("table.column type null default") and indexes ("table index: def")
// of the public schema, sorted.
func schemaAt(t *testing.T, s *Store) []string {
	t.Helper()
	rows, err := s.db.Query(`
		SELECT table_name || '.' || column_name || ' ' || data_type || ' ' || is_nullable || ' ' || COALESCE(column_default, '')
		FROM information_schema.columns WHERE table_schema = 'public'
		UNION ALL
		SELECT tablename || ' index: ' || indexdef FROM pg_indexes WHERE schemaname = 'public'
		ORDER BY 1`)
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
		out = append(out, s)
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	return out
}

// TestHoldBackfill: migration 6 gives every job held before it its typed hold reason, read from
// the beginning of its reason as the bridge matched it then (SQLite's GLOB patterns as LIKE,
// where "_" is escaped); jobs in other states have none.
func TestHoldBackfill(t *testing.T) {
	ctx := context.Background()
	dsn := pgtest.New(t)
	s, err := Open(ctx, dsn)
	if err != nil {
		t.Fatal(err)
	}
	p, err := newProvider(s.db)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := p.DownTo(ctx, 5); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		state  bridge.State
		reason string
		want   bridge.HoldReason
	}{
		{bridge.StateHeld, "unmapped: no member matches the owner zoom:u1 <a@acme.test> (rules [identity])", bridge.HoldUnmapped},
		{bridge.StateHeld, "insufficient_balance: the workspace has no minutes left", bridge.HoldNoBalance},
		{bridge.StateHeld, "insufficientXbalance: not the code", bridge.HoldUpstreamSetting},
		{bridge.StateHeld, "source_unavailable: source zoom: item m1: 503 (failing for 72h0m since …)", bridge.HoldSourceUnavailable},
		{bridge.StateHeld, "upload: 422 author_not_member: not a member of the workspace", bridge.HoldAuthorRefused},
		{bridge.StateHeld, "upload: 422 invalid_author: bad form", bridge.HoldAuthorRefused},
		{bridge.StateHeld, "upload: 422 unsupported_author_type: a group", bridge.HoldAuthorRefused},
		{bridge.StateHeld, "upload: 403 upload_scope_required: the key lacks uploads:write", bridge.HoldUpstreamSetting},
		{bridge.StateHeld, "", bridge.HoldUpstreamSetting},
		{bridge.StateResubmit, "insufficient_balance: needs 3.00 minutes; uploaded again once they are available", ""},
		{bridge.StateSkipped, "unmapped: no member matches", ""},
	}
	for i, tc := range tests {
		if _, err := s.db.Exec(`INSERT INTO jobs (id, source, item_id, version, recording, state, reason, created_at, updated_at)
			VALUES ($1, 'inbox', $2, '1', '{}', $3, $4, 1, 2)`, fmt.Sprint("j", i), fmt.Sprint("item", i), tc.state, tc.reason); err != nil {
			t.Fatal(err)
		}
	}
	s.Close()
	s, err = Open(ctx, dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	for i, tc := range tests {
		j, err := s.Job(ctx, fmt.Sprint("j", i))
		if err != nil || j.Hold != tc.want || j.Reason != tc.reason || j.Revision != 1 {
			t.Errorf("job %s %q after migrations 6 and 7 = %+v, %v; want hold %q, the reason kept, revision 1", tc.state, tc.reason, j, err, tc.want)
		}
	}
}
