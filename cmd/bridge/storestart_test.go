package main

import (
	"context"
	"database/sql"
	"fmt"
	"net/url"
	"testing"
	"time"

	_ "github.com/jackc/pgx/v5/stdlib"

	"github.com/transcript-bridge/bridge/bridge/postgres"
	"github.com/transcript-bridge/bridge/internal/pgtest"
)

// TestStoreNotYet: bridge run waits at its start for a PostgreSQL server that is down or out of
// connection slots, and fails at once on what waiting cannot mend. Each error is the real one,
// from postgres.Open against the test server (or a port nothing listens on).
func TestStoreNotYet(t *testing.T) {
	dsn := pgtest.New(t)
	u, err := url.Parse(dsn)
	if err != nil {
		t.Fatal(err)
	}
	// A role allowed no connection: the server answers "too many connections for role"
	// (SQLSTATE 53300), as it answers "sorry, too many clients already" when full.
	role := fmt.Sprintf("bridge_nolimit_%d", time.Now().UnixNano())
	admin, err := sql.Open("pgx", dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer admin.Close()
	if _, err := admin.Exec(`CREATE ROLE ` + role + ` LOGIN CONNECTION LIMIT 0`); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { admin.Exec(`DROP ROLE IF EXISTS ` + role) })

	with := func(edit func(u *url.URL)) string {
		c := *u
		edit(&c)
		return c.String()
	}
	tests := []struct {
		name, dsn string
		want      bool
	}{
		{"no server", with(func(u *url.URL) { u.Host = "127.0.0.1:1" }), true},
		{"no connection slot", with(func(u *url.URL) { u.User = url.User(role) }), true},
		{"no such database", with(func(u *url.URL) { u.Path = "/bridge_no_such_database" }), false},
		{"no such role", with(func(u *url.URL) { u.User = url.User("bridge_no_such_role") }), false},
		{"certificate not trusted", with(func(u *url.URL) { u.RawQuery = "sslmode=verify-full" }), false},
	}
	for _, tc := range tests {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		s, err := postgres.Open(ctx, tc.dsn)
		cancel()
		if err == nil {
			s.Close()
			t.Errorf("%s: postgres.Open(%s) succeeded, want an error", tc.name, postgres.Describe(tc.dsn))
			continue
		}
		if got := storeNotYet(err); got != tc.want {
			t.Errorf("%s: storeNotYet(%v) = %v, want %v", tc.name, err, got, tc.want)
		}
	}
}
