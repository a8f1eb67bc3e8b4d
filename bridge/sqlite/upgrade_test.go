package sqlite_test

import (
	"context"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/transcript-bridge/bridge/bridge"
	"github.com/transcript-bridge/bridge/bridge/sqlite"
	"github.com/transcript-bridge/bridge/bridge/sqlite/bus"
)

// appliedAt is when oldRunnerFile's runner applied migration v.
func appliedAt(v int) time.Time { return time.Date(2024, 5, 6, 7, 8, v, 0, time.UTC) }

// oldRunnerFile makes at path the database that the bridge's own migration runner (before goose)
// left after applying migrations 1 to upTo: in one transaction, the event bus's tables when
// withBus (bus.InitializeSchema, which that runner called on every open; a bridge from before the
// bus had none), the SQL of each migration (its goose Up section: the files only gained the goose
// annotations, and in 0003 the bus's tables, made IF NOT EXISTS), and schema_migrations recording
// each version with the time it was applied.
func oldRunnerFile(t *testing.T, path string, upTo int, withBus bool) {
	t.Helper()
	ctx := context.Background()
	db := rawDB(t, path)
	if _, err := db.Exec(`PRAGMA journal_mode = WAL`); err != nil {
		t.Fatal(err)
	}
	tx, err := db.Begin()
	if err != nil {
		t.Fatal(err)
	}
	defer tx.Rollback()
	if _, err := tx.Exec(`CREATE TABLE IF NOT EXISTS schema_migrations (version INTEGER PRIMARY KEY, applied_at INTEGER NOT NULL)`); err != nil {
		t.Fatal(err)
	}
	if withBus {
		for _, topic := range []string{bridge.EventsTopic, bridge.EventsPoisonTopic} {
			if err := bus.InitializeSchema(ctx, tx, topic); err != nil {
				t.Fatal(err)
			}
		}
	}
	files, err := filepath.Glob("migrations/*.sql")
	if err != nil || len(files) == 0 {
		t.Fatalf("migrations: %v (%v)", files, err)
	}
	for _, f := range files { // numbered in ranges: there may be gaps
		v, err := strconv.Atoi(strings.SplitN(filepath.Base(f), "_", 2)[0])
		if err != nil {
			t.Fatalf("migration %s: %v", f, err)
		}
		if v > upTo {
			break
		}
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		up, _, ok := strings.Cut(string(b), "-- +goose Down")
		if !ok {
			t.Fatalf("%s has no Down section", f)
		}
		if _, err := tx.Exec(up); err != nil {
			t.Fatalf("%s: %v", f, err)
		}
		if _, err := tx.Exec(`INSERT INTO schema_migrations (version, applied_at) VALUES (?, ?)`, v, appliedAt(v).UnixNano()); err != nil {
			t.Fatal(err)
		}
	}
	if err := tx.Commit(); err != nil {
		t.Fatal(err)
	}
}

// TestUpgradeFromTheOldRunner: a database the bridge's own runner migrated opens with goose
// without any migration applied again (migration 3 would publish the pending event once more,
// migration 5 would fail), its data intact, each version recorded once with the time the old
// runner applied it, and the schema a new database has (plus the old runner's table).
func TestUpgradeFromTheOldRunner(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "bridge.db")
	oldRunnerFile(t, path, sqlite.SchemaVersion(), true)
	db := rawDB(t, path)
	for _, q := range []string{
		`INSERT INTO jobs (id, source, item_id, version, recording, state, transcription_id, created_at, updated_at)
			VALUES ('j1', 'inbox', 'a.mp3', 'v1', '{}', 'queued', 't1', 1, 2)`,
		`INSERT INTO job_history (job_id, from_state, to_state, reason, at) VALUES ('j1', 'uploading', 'queued', '', 2)`,
		`INSERT INTO outbox (type, job_id, transcription_id, data, created_at) VALUES ('transcription.uploaded', 'j1', 't1', '{}', 2)`,
		`INSERT INTO meta (key, value) VALUES ('instance_id', 'old-instance')`,
		`UPDATE mapping_changes SET generation = 7, reason = 'identities apply'`,
	} {
		if _, err := db.Exec(q); err != nil {
			t.Fatal(err)
		}
	}
	before := rowCounts(t, path)

	s, err := sqlite.Open(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if got, want := versionsOf(t, path), allVersionsOnce(); !reflect.DeepEqual(got, want) {
		t.Errorf("%s after the upgrade = %v, want %v", versionTable, got, want)
	}
	rows, err := db.Query(`SELECT version_id, tstamp FROM ` + versionTable + ` WHERE version_id > 0`)
	if err != nil {
		t.Fatal(err)
	}
	for rows.Next() {
		var v int
		var at time.Time
		if err := rows.Scan(&v, &at); err != nil {
			t.Fatal(err)
		}
		if !at.Equal(appliedAt(v)) {
			t.Errorf("version %d recorded as applied at %v, want %v (from schema_migrations)", v, at, appliedAt(v))
		}
	}
	rows.Close()
	if after := rowCounts(t, path); !reflect.DeepEqual(after, before) {
		t.Errorf("rows per table after the upgrade:\n%v\nwant (the same as before):\n%v", after, before)
	}
	if j, err := s.Job(ctx, "j1"); err != nil || j.State != bridge.StateQueued || j.TranscriptionID != "t1" {
		t.Errorf("job j1 after the upgrade = %+v, %v", j, err)
	}
	if h, err := s.History(ctx, "j1"); err != nil || len(h) != 1 {
		t.Errorf("history of j1 after the upgrade = %+v, %v", h, err)
	}
	if id, err := s.InstanceID(ctx); err != nil || id != "old-instance" {
		t.Errorf("instance id after the upgrade = %q, %v; want old-instance", id, err)
	}
	var gen int
	if err := db.QueryRow(`SELECT generation FROM mapping_changes`).Scan(&gen); err != nil || gen != 7 {
		t.Errorf("mapping generation after the upgrade = %d, %v; want 7", gen, err)
	}
	if v, err := s.SchemaVersion(ctx); err != nil || v != sqlite.SchemaVersion() {
		t.Errorf("Store.SchemaVersion = %d, %v; want %d", v, err, sqlite.SchemaVersion())
	}
	assertFreshSchema(t, path)
}

// TestUpgradeFromAPreBusFile: a database of a bridge from before the event bus (migrations 1 and
// 2, no bus tables) gets the bus and the later migrations; the events it had not handed on are
// published once each, even when four processes open it at once.
func TestUpgradeFromAPreBusFile(t *testing.T) {
	path := filepath.Join(t.TempDir(), "bridge.db")
	oldRunnerFile(t, path, 2, false)
	if _, err := rawDB(t, path).Exec(`INSERT INTO outbox (type, job_id, transcription_id, data, created_at, delivered_at)
		VALUES ('recording.skipped', 'j1', '', '{}', 1, NULL), ('transcription.uploaded', 'j2', 't2', '{}', 2, NULL),
			('transcription.uploaded', 'j3', 't3', '{}', 3, 4)`); err != nil {
		t.Fatal(err)
	}
	if !openAtOnce(t, path, 4) {
		return
	}
	if got, want := versionsOf(t, path), allVersionsOnce(); !reflect.DeepEqual(got, want) {
		t.Errorf("%s after the upgrade = %v, want %v", versionTable, got, want)
	}
	rows, err := rawDB(t, path).Query(`SELECT json_extract(payload, '$.job_id') FROM watermill_events ORDER BY "offset"`)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	var published []string
	for rows.Next() {
		var j string
		if err := rows.Scan(&j); err != nil {
			t.Fatal(err)
		}
		published = append(published, j)
	}
	if want := []string{"j1", "j2"}; !slices.Equal(published, want) {
		t.Errorf("events published by the upgrade: %v, want the pending ones once each: %v", published, want)
	}
	assertFreshSchema(t, path)
}

// TestConcurrentProcessesUpgradeAnOldFile: four processes opening a database the old runner
// migrated fully all succeed and record each version once.
func TestConcurrentProcessesUpgradeAnOldFile(t *testing.T) {
	path := filepath.Join(t.TempDir(), "bridge.db")
	oldRunnerFile(t, path, sqlite.SchemaVersion(), true)
	if !openAtOnce(t, path, 4) {
		return
	}
	if got, want := versionsOf(t, path), allVersionsOnce(); !reflect.DeepEqual(got, want) {
		t.Errorf("%s after the upgrade = %v, want %v", versionTable, got, want)
	}
	assertFreshSchema(t, path)
}

// TestBusMigrationIsTheBusSchema: the bus's tables that migration 3 makes are the ones
// bus.InitializeSchema makes for the bridge's two topics.
func TestBusMigrationIsTheBusSchema(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	s, err := sqlite.Open(ctx, filepath.Join(dir, "bridge.db"))
	if err != nil {
		t.Fatal(err)
	}
	s.Close()
	db := rawDB(t, filepath.Join(dir, "bus.db"))
	for _, topic := range []string{bridge.EventsTopic, bridge.EventsPoisonTopic} {
		if err := bus.InitializeSchema(ctx, db, topic); err != nil {
			t.Fatal(err)
		}
	}
	busOnly := func(schema []string) []string {
		return slices.DeleteFunc(schema, func(s string) bool { return !strings.HasPrefix(s, "table watermill_") })
	}
	got, want := busOnly(schemaOf(t, filepath.Join(dir, "bridge.db"))), busOnly(schemaOf(t, filepath.Join(dir, "bus.db")))
	if len(want) != 4 || !reflect.DeepEqual(got, want) {
		t.Errorf("bus tables of the migrations:\n%s\nwant (bus.InitializeSchema):\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}

// TestMigrationFiles: every migration has an Up and a Down section and runs in a transaction
// (migrate relies on it when processes race).
func TestMigrationFiles(t *testing.T) {
	files, err := filepath.Glob("migrations/*.sql")
	if err != nil || len(files) == 0 {
		t.Fatalf("migrations: %v (%v)", files, err)
	}
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		text := string(b)
		if !strings.HasPrefix(text, "-- +goose Up\n") || !strings.Contains(text, "\n-- +goose Down\n") {
			t.Errorf("%s: want a '-- +goose Up' first line and a '-- +goose Down' section", f)
		}
		if strings.Contains(text, "NO TRANSACTION") {
			t.Errorf("%s: a migration must run in a transaction", f)
		}
	}
}

// assertFreshSchema checks that the database at path has the schema a new database has, apart
// from the old runner's schema_migrations.
func assertFreshSchema(t *testing.T, path string) {
	t.Helper()
	fresh := filepath.Join(t.TempDir(), "fresh.db")
	s, err := sqlite.Open(context.Background(), fresh)
	if err != nil {
		t.Fatal(err)
	}
	s.Close()
	got := slices.DeleteFunc(schemaOf(t, path), func(s string) bool { return strings.HasPrefix(s, "table schema_migrations:") })
	if want := schemaOf(t, fresh); !reflect.DeepEqual(got, want) {
		t.Errorf("schema after the upgrade:\n%s\nwant (a new database's):\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}

// rowCounts returns the number of rows of every table but goose's, sqlite_sequence and
// schema_migrations in the database at path.
func rowCounts(t *testing.T, path string) map[string]int {
	t.Helper()
	db := rawDB(t, path)
	rows, err := db.Query(`SELECT name FROM sqlite_master WHERE type = 'table'
		AND name NOT IN ('` + versionTable + `', 'sqlite_sequence', 'schema_migrations')`)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for rows.Next() {
		var n string
		if err := rows.Scan(&n); err != nil {
			t.Fatal(err)
		}
		names = append(names, n)
	}
	rows.Close()
	out := map[string]int{}
	for _, n := range names {
		var c int
		if err := db.QueryRow(`SELECT COUNT(*) FROM "` + n + `"`).Scan(&c); err != nil {
			t.Fatal(err)
		}
		out[n] = c
	}
	return out
}
