package sqlite

import (
	"context"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// TestDownMigrations: going down one migration at a time to version 0 leaves only goose's own
// table, and going up again one at a time passes through the same schemas, so every Down undoes
// its Up exactly.
func TestDownMigrations(t *testing.T) {
	ctx := context.Background()
	s, err := Open(ctx, filepath.Join(t.TempDir(), "bridge.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	p, err := newProvider(s.db)
	if err != nil {
		t.Fatal(err)
	}
	top := SchemaVersion()
	schemas := make([][]string, top+1) // the schema at each version
	schemas[top] = schemaAt(t, s)
	for v := top - 1; v >= 0; v-- {
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
	for v := 1; v <= top; v++ {
		if _, err := p.UpByOne(ctx); err != nil {
			t.Fatalf("up to %d: %v", v, err)
		}
		if got := schemaAt(t, s); !slices.Equal(got, schemas[v]) {
			t.Errorf("schema at %d going up:\n%s\nwant (the one going down):\n%s", v, strings.Join(got, "\n"), strings.Join(schemas[v], "\n"))
		}
	}
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
