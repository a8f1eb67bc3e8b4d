package storecopy

import (
	"context"
	"encoding/json"
	"errors"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/ThreeDotsLabs/watermill/message"

	"github.com/transcript-bridge/bridge/bridge"
	"github.com/transcript-bridge/bridge/bridge/postgres"
	pgbus "github.com/transcript-bridge/bridge/bridge/postgres/bus"
	"github.com/transcript-bridge/bridge/bridge/sqlite"
	"github.com/transcript-bridge/bridge/bridge/sqlite/bus"
)

// busRefs reads n messages of bridge.EventsTopic from d's bus (a consumer group of its own) and
// returns their EventRefs, failing the test after 20 s.
func busRefs(t *testing.T, d *Database, n int) []bridge.EventRef {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	var sub message.Subscriber
	switch s := d.store.(type) {
	case *sqlite.Store:
		sb, _, err := s.Bus(bus.SubscriberConfig{ConsumerGroup: "storecopy-test", PollInterval: 20 * time.Millisecond}, nil)
		must(t, err)
		sub = sb
	case *postgres.Store:
		sb, _, err := s.Bus(pgbus.SubscriberConfig{ConsumerGroup: "storecopy-test", PollInterval: 20 * time.Millisecond}, nil)
		must(t, err)
		sub = sb
	}
	defer sub.Close()
	msgs, err := sub.Subscribe(ctx, bridge.EventsTopic)
	must(t, err)
	var out []bridge.EventRef
	for len(out) < n {
		select {
		case m := <-msgs:
			var ref bridge.EventRef
			must(t, json.Unmarshal(m.Payload, &ref))
			out = append(out, ref)
			m.Ack()
		case <-ctx.Done():
			t.Fatalf("%d of %d messages on the bus of %s", len(out), n, d)
		}
	}
	return out
}

// catalog returns the tables of d's database and their columns, sorted, leaving out the bus's
// and the migrations' own tables.
func catalog(t *testing.T, d *Database) map[string][]string {
	t.Helper()
	q := `SELECT m.name, p.name FROM sqlite_master m JOIN pragma_table_info(m.name) p WHERE m.type = 'table'
		AND m.name NOT LIKE 'sqlite_%'`
	if d.dialect.postgres {
		q = `SELECT table_name, column_name FROM information_schema.columns WHERE table_schema = 'public'`
	}
	rows, err := d.DB().QueryContext(context.Background(), q)
	must(t, err)
	defer rows.Close()
	out := map[string][]string{}
	for rows.Next() {
		var table, col string
		must(t, rows.Scan(&table, &col))
		if strings.HasPrefix(table, "watermill_") || table == "goose_db_version" || table == "schema_migrations" {
			continue
		}
		out[table] = append(out[table], col)
	}
	must(t, rows.Err())
	for _, cols := range out {
		slices.Sort(cols)
	}
	return out
}

// TestTablesMatchTheSchemas: Tables (and notCopied) name every table of both stores' schema
// with exactly its columns (SQLite's jobs.seq being its rowid), so a migration that adds a
// table or a column fails here until the copy knows it.
func TestTablesMatchTheSchemas(t *testing.T) {
	want := map[string][]string{}
	for _, tb := range Tables {
		for _, c := range tb.cols {
			want[tb.name] = append(want[tb.name], c.name)
		}
		slices.Sort(want[tb.name])
	}
	for name, d := range map[string]func(t *testing.T) *Database{
		"sqlite":   func(t *testing.T) *Database { return openSQLite(t, "s.db") },
		"postgres": openPostgres,
	} {
		t.Run(name, func(t *testing.T) {
			got := catalog(t, d(t))
			for _, nc := range notCopied {
				if got[nc] == nil {
					t.Errorf("table %s (not copied) does not exist", nc)
				}
				delete(got, nc)
			}
			if name == "sqlite" {
				got["jobs"] = append(got["jobs"], "seq") // the rowid
				slices.Sort(got["jobs"])
			}
			for table, cols := range got {
				if !slices.Equal(cols, want[table]) {
					t.Errorf("table %s has columns %v; Tables says %v", table, cols, want[table])
				}
			}
			for table := range want {
				if got[table] == nil {
					t.Errorf("Tables names %s, which the schema does not have", table)
				}
			}
		})
	}
}

// TestParseDSN: the DSN forms, and what is refused.
func TestParseDSN(t *testing.T) {
	tests := []struct {
		dsn            string
		driver         Driver
		target, errSub string
	}{
		{"sqlite:./data/bridge.db", SQLite, "./data/bridge.db", ""},
		{"sqlite:///var/lib/bridge.db", SQLite, "/var/lib/bridge.db", ""},
		{"./data/bridge.db", SQLite, "./data/bridge.db", ""},
		{"/var/lib/bridge.db", SQLite, "/var/lib/bridge.db", ""},
		{"postgres://bridge:pw@db:5432/bridge?sslmode=disable", Postgres, "postgres://bridge:pw@db:5432/bridge?sslmode=disable", ""},
		{"postgresql://db/bridge", Postgres, "postgresql://db/bridge", ""},
		{"", "", "", "empty DSN"},
		{"sqlite:", "", "", "names no file"},
		{"mysql://db/bridge", "", "", `scheme "mysql"`},
	}
	for _, tc := range tests {
		driver, target, err := ParseDSN(tc.dsn)
		if tc.errSub != "" {
			if !errors.Is(err, ErrDSN) || !strings.Contains(err.Error(), tc.errSub) {
				t.Errorf("ParseDSN(%q) = %v, want ErrDSN saying %q", tc.dsn, err, tc.errSub)
			}
			continue
		}
		if driver != tc.driver || target != tc.target || err != nil {
			t.Errorf("ParseDSN(%q) = %q, %q, %v, want %q, %q, nil", tc.dsn, driver, target, err, tc.driver, tc.target)
		}
	}
}

// TestOpenNeverShowsThePassword: a PostgreSQL database is named by server and database only,
// and a copy's source that does not exist is not created.
func TestOpenNeverShowsThePassword(t *testing.T) {
	if got := postgres.Describe("postgres://bridge:s3cret@db.internal:6432/bridge"); got != "postgres db.internal:6432/bridge" {
		t.Errorf("postgres.Describe = %q, want postgres db.internal:6432/bridge", got)
	}
	_, err := Open(context.Background(), "postgres://bridge:s3cret@127.0.0.1:1/bridge?connect_timeout=1", false)
	if err == nil || strings.Contains(err.Error(), "s3cret") {
		t.Errorf("Open of an unreachable server = %v, want an error without the password", err)
	}
	missing := t.TempDir() + "/none.db"
	if _, err := Open(context.Background(), "sqlite:"+missing, true); err == nil || !strings.Contains(err.Error(), "no such file") {
		t.Errorf("Open(%q, mustExist) = %v, want no such file", missing, err)
	}
}
