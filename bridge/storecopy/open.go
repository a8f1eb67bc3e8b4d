package storecopy

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"strings"

	"github.com/transcript-bridge/bridge/bridge"
	"github.com/transcript-bridge/bridge/bridge/postgres"
	"github.com/transcript-bridge/bridge/bridge/sqlite"
)

// ErrDSN is wrapped by the errors of ParseDSN: a DSN the copy cannot read.
var ErrDSN = errors.New("not a store DSN")

// Driver names a store implementation.
type Driver string

// The drivers.
const (
	SQLite   Driver = "sqlite"
	Postgres Driver = "postgres"
)

// ParseDSN reads a store DSN: "sqlite:PATH" (or "sqlite://PATH") or a plain path for SQLite,
// "postgres://…" or "postgresql://…" for PostgreSQL. It returns the driver and what its Open
// takes (the path, or the URL), and fails with ErrDSN on an empty DSN, an empty path or another
// scheme.
func ParseDSN(dsn string) (Driver, string, error) {
	switch {
	case strings.TrimSpace(dsn) == "":
		return "", "", fmt.Errorf("empty DSN: %w", ErrDSN)
	case strings.HasPrefix(dsn, "postgres://"), strings.HasPrefix(dsn, "postgresql://"):
		return Postgres, dsn, nil
	case strings.HasPrefix(dsn, "sqlite:"):
		path := strings.TrimPrefix(strings.TrimPrefix(dsn, "sqlite:"), "//")
		if path == "" {
			return "", "", fmt.Errorf("%q names no file: %w", dsn, ErrDSN)
		}
		return SQLite, path, nil
	case strings.Contains(dsn, "://"):
		scheme, _, _ := strings.Cut(dsn, "://")
		return "", "", fmt.Errorf("scheme %q: %w (sqlite:PATH, a path, or postgres://…)", scheme, ErrDSN)
	}
	return SQLite, dsn, nil
}

// store is what the copy uses of a store package's Store, besides the contract.
type store interface {
	bridge.Store
	DB() *sql.DB
	SchemaVersion(ctx context.Context) (int, error)
	RepublishPending(ctx context.Context, tx *sql.Tx) (int, error)
}

var (
	_ store = (*sqlite.Store)(nil)
	_ store = (*postgres.Store)(nil)
)

// Database is one side of a copy: a store opened (and migrated) by its own package's Open.
type Database struct {
	store   store
	dialect dialect
	where   string
}

// Open opens the store dsn names (see ParseDSN) with its package's Open, which migrates it to
// the schema this binary carries. With mustExist, a SQLite file that does not exist is an error
// (a copy's source is never created). It fails, naming the database but never a password, on a
// bad DSN (ErrDSN), a missing file or what the store's Open reports.
func Open(ctx context.Context, dsn string, mustExist bool) (*Database, error) {
	driver, target, err := ParseDSN(dsn)
	if err != nil {
		return nil, err
	}
	if driver == Postgres {
		where := postgres.Describe(target)
		s, err := postgres.Open(ctx, target)
		if err != nil {
			return nil, err // postgres.Open names the server, never the password
		}
		return &Database{store: s, dialect: postgresDialect, where: where}, nil
	}
	where := "sqlite " + target
	if mustExist {
		if _, err := os.Stat(target); errors.Is(err, fs.ErrNotExist) {
			return nil, fmt.Errorf("%s: no such file", where)
		}
	}
	s, err := sqlite.Open(ctx, target)
	if err != nil {
		return nil, err
	}
	return &Database{store: s, dialect: sqliteDialect, where: where}, nil
}

// String names the database for people: "sqlite PATH" or "postgres host:port/name", never a
// password.
func (d *Database) String() string { return d.where }

// Store returns the opened store, for reading it through the contract.
func (d *Database) Store() bridge.Store { return d.store }

// DB returns the database handle the copy reads and writes.
func (d *Database) DB() *sql.DB { return d.store.DB() }

// Close closes the store, returning its error.
func (d *Database) Close() error { return d.store.Close() }
