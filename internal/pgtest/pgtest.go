// Package pgtest gives a test its own PostgreSQL database on the server that
// BRIDGE_TEST_POSTGRES_DSN names (the machines of this project run PostgreSQL 15 on
// 127.0.0.1:5432; .ci/run starts it and sets the variable).
//
// Without the variable, or with the server unreachable, a test skips with one line naming the
// variable; under CI=true it fails instead, so CI cannot pass by skipping.
package pgtest

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"net/url"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
)

// EnvDSN names the variable holding the DSN of the server's admin database (any database the
// user can connect to and create databases from).
const EnvDSN = "BRIDGE_TEST_POSTGRES_DSN"

// Example is the DSN the skip message suggests: the project's machines' server.
const Example = "postgres://postgres@127.0.0.1:5432/test?sslmode=disable"

// New creates a database with a fresh random name (bridge_test_<hex>) on the server of
// BRIDGE_TEST_POSTGRES_DSN and returns its DSN: the same server, user and options. The database
// is dropped, with any connection still open to it, when the test and its subtests end.
func New(t testing.TB) string {
	t.Helper()
	return create(t, "")
}

// NewOn is New on the server whose admin DSN is admin (a Server's DSN) instead of the one
// BRIDGE_TEST_POSTGRES_DSN names.
func NewOn(t testing.TB, admin string) string {
	t.Helper()
	return createOn(t, admin, "")
}

// NewFrom is New with the new database a copy of the database of dsn (made by New, with no
// connection left open to it): CREATE DATABASE … TEMPLATE, far quicker than migrating a fresh
// one for every case of a suite.
func NewFrom(t testing.TB, dsn string) string {
	t.Helper()
	cfg, err := pgx.ParseConfig(dsn)
	if err != nil {
		t.Fatalf("pgtest: template %v", err)
	}
	return create(t, cfg.Database)
}

// create makes the database of New, from template when it is not empty.
func create(t testing.TB, template string) string {
	t.Helper()
	admin := os.Getenv(EnvDSN)
	if admin == "" {
		unavailable(t, EnvDSN+" is not set")
	}
	return createOn(t, admin, template)
}

// createOn makes a database on the server of admin, from template when it is not empty.
func createOn(t testing.TB, admin, template string) string {
	t.Helper()
	cfg, err := pgx.ParseConfig(admin)
	if err != nil {
		// A malformed DSN is a mistake, not a missing server: never skip it.
		t.Fatalf("pgtest: %s: %v", EnvDSN, err)
	}
	where := fmt.Sprintf("%s:%d", cfg.Host, cfg.Port)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	conn, err := connect(ctx, cfg)
	if err != nil {
		unavailable(t, fmt.Sprintf("PostgreSQL at %s is unreachable (%v)", where, err))
	}
	defer conn.Close(context.Background())

	name := "bridge_test_" + random()
	create := "CREATE DATABASE " + name
	if template != "" {
		create += " TEMPLATE " + pgx.Identifier{template}.Sanitize()
	}
	if _, err := conn.Exec(ctx, create); err != nil {
		t.Fatalf("pgtest: create database %s on %s: %v", name, where, err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		conn, err := connect(ctx, cfg)
		if err != nil {
			t.Errorf("pgtest: drop database %s: %v", name, err)
			return
		}
		defer conn.Close(context.Background())
		if _, err := conn.Exec(ctx, "DROP DATABASE IF EXISTS "+name+" WITH (FORCE)"); err != nil {
			t.Errorf("pgtest: drop database %s: %v", name, err)
		}
	})
	dsn, err := withDatabase(admin, name)
	if err != nil {
		t.Fatalf("pgtest: %s: %v", EnvDSN, err)
	}
	return dsn
}

// connect opens one connection with cfg, giving up after 5 s.
func connect(ctx context.Context, cfg *pgx.ConnConfig) (*pgx.Conn, error) {
	cfg = cfg.Copy()
	if cfg.ConnectTimeout == 0 || cfg.ConnectTimeout > 5*time.Second {
		cfg.ConnectTimeout = 5 * time.Second
	}
	return pgx.ConnectConfig(ctx, cfg)
}

// withDatabase returns dsn (a URL or keyword/value DSN) with its database set to name.
func withDatabase(dsn, name string) (string, error) {
	if strings.HasPrefix(dsn, "postgres://") || strings.HasPrefix(dsn, "postgresql://") {
		u, err := url.Parse(dsn)
		if err != nil {
			return "", err
		}
		u.Path, u.RawPath = "/"+name, ""
		return u.String(), nil
	}
	// In keyword/value form the last of a repeated keyword wins.
	return dsn + " dbname=" + name, nil
}

// random returns 12 lower-case hex digits: a valid unquoted identifier suffix.
func random() string {
	b := make([]byte, 6)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}

// unavailable skips the test with one line naming the variable, or fails it under CI=true.
func unavailable(t testing.TB, why string) {
	t.Helper()
	msg := fmt.Sprintf("pgtest: %s; set %s=%s to run", why, EnvDSN, Example)
	if ci, _ := strconv.ParseBool(os.Getenv("CI")); ci {
		t.Fatal(msg + " (CI=true: a test that needs PostgreSQL may not skip)")
	}
	t.Skip(msg)
}
