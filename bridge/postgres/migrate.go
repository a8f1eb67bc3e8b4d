package postgres

import (
	"context"
	"database/sql"
	"embed"
	"fmt"
	"io/fs"
	"path/filepath"

	"github.com/pressly/goose/v3"
	"github.com/pressly/goose/v3/lock"

	"github.com/transcript-bridge/bridge/bridge"
)

// migrations holds the schema, one goose SQL file per version (migrations/NNNN_name.sql, with
// "-- +goose Up" and "-- +goose Down" sections), with the versions and names of
// bridge/sqlite/migrations: the same version is the same schema in either store. Every
// migration runs in its own transaction.
//
//go:embed migrations/*.sql
var migrations embed.FS

// lockID is the advisory lock the replicas migrating one database take in turn: goose's own id
// (advisory locks belong to one database, so other databases on the server are not held up).
const lockID = lock.DefaultLockID

// migrationFiles returns the migrations directory as goose reads it.
func migrationFiles() (fs.FS, error) {
	return fs.Sub(migrations, "migrations")
}

// newProvider returns the goose provider of the embedded migrations on db, with PostgreSQL's
// session locker: whoever runs it holds a session-level advisory lock (pg_try_advisory_lock,
// tried every second for up to 5 minutes) from reading the version table to the last
// migration. Out-of-order migrations are allowed, as in bridge/sqlite, so that every embedded
// migration not yet recorded is applied, in version order.
func newProvider(db *sql.DB) (*goose.Provider, error) {
	fsys, err := migrationFiles()
	if err != nil {
		return nil, err
	}
	locker, err := lock.NewPostgresSessionLocker(lock.WithLockID(lockID), lock.WithLockTimeout(1, 300))
	if err != nil {
		return nil, err
	}
	return goose.NewProvider(goose.DialectPostgres, db, fsys, goose.WithDisableGlobalRegistry(true),
		goose.WithAllowOutofOrder(true), goose.WithSessionLocker(locker))
}

// embedded returns the versions of the embedded migrations, ascending (fs.Glob sorts by name and
// the names start with the zero-padded version). It fails on a file name goose cannot read a
// version from.
func embedded() ([]int64, error) {
	names, err := fs.Glob(migrations, "migrations/*.sql")
	if err != nil {
		return nil, fmt.Errorf("list migrations: %w", err)
	}
	out := make([]int64, 0, len(names))
	for _, name := range names {
		v, err := goose.NumericComponent(filepath.Base(name))
		if err != nil {
			return nil, fmt.Errorf("migration %s: %w", name, err)
		}
		out = append(out, v)
	}
	return out, nil
}

// migrate brings the schema up to date with goose, so that several replicas opening the same
// new (or old) database at once all succeed and every migration is applied exactly once: the
// first to take goose's advisory lock creates the version table and applies what is pending,
// each migration with its version row in one transaction; the others wait for the lock and then
// find nothing pending. A replica that dies mid-way loses its session, and the server releases
// its lock and rolls its open migration back: a failed migration leaves the schema as the one
// before it left it. A database whose schema is newer than the migrations this binary carries
// is refused with a *bridge.SchemaError, before anything is written.
func (s *Store) migrate(ctx context.Context) error {
	p, err := newProvider(s.db)
	if err != nil {
		return fmt.Errorf("migrate: %w", err)
	}
	if err := s.notNewer(ctx); err != nil {
		return err
	}
	if _, err := p.Up(ctx); err != nil {
		return fmt.Errorf("migrate: %w", err)
	}
	return nil
}

// SchemaVersion returns the database's schema version: the newest migration applied to it, which
// is SchemaVersion() once Open has migrated it (or more, when a newer bridge migrated the
// database). It fails on a database error.
func (s *Store) SchemaVersion(ctx context.Context) (int, error) {
	p, err := newProvider(s.db)
	if err != nil {
		return 0, fmt.Errorf("schema version: %w", err)
	}
	v, err := p.GetDBVersion(ctx)
	if err != nil {
		return 0, fmt.Errorf("schema version: %w", err)
	}
	return int(v), nil
}

// notNewer fails with a *bridge.SchemaError when the database's schema is newer than the
// migrations this binary carries: an older bridge must not write a schema it does not know. It
// fails too when the version cannot be read.
func (s *Store) notNewer(ctx context.Context) error {
	v, err := s.SchemaVersion(ctx)
	if err != nil {
		return err
	}
	if known := SchemaVersion(); v > known {
		return &bridge.SchemaError{Database: v, Known: known}
	}
	return nil
}
