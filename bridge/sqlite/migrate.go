package sqlite

import (
	"context"
	"database/sql"
	"embed"
	"errors"
	"fmt"
	"io/fs"
	"path/filepath"

	"github.com/pressly/goose/v3"
	"github.com/pressly/goose/v3/database"

	"github.com/transcript-bridge/bridge/bridge"
)

// migrations holds the schema, one goose SQL file per version (migrations/NNNN_name.sql, with
// "-- +goose Up" and "-- +goose Down" sections). Every migration runs in its own transaction:
// none may be marked "-- +goose NO TRANSACTION" (see migrate).
//
//go:embed migrations/*.sql
var migrations embed.FS

const (
	// versionTable is goose's record of the applied migrations (goose's default name), one row
	// per version, version 0 being goose's own. migrate adds a unique index on its version_id.
	versionTable = goose.DefaultTablename
	// legacyTable is where the bridge recorded migrations before goose: version, applied_at (Unix
	// nanoseconds). It is left as it is after the upgrade.
	legacyTable = "schema_migrations"
)

// migrationFiles returns the migrations directory as goose reads it.
func migrationFiles() (fs.FS, error) {
	return fs.Sub(migrations, "migrations")
}

// newProvider returns the goose provider of the embedded migrations on db. Out-of-order
// migrations are allowed, so that, as before goose, every embedded migration not yet recorded is
// applied, in version order.
func newProvider(db *sql.DB) (*goose.Provider, error) {
	fsys, err := migrationFiles()
	if err != nil {
		return nil, err
	}
	return goose.NewProvider(goose.DialectSQLite3, db, fsys,
		goose.WithDisableGlobalRegistry(true), goose.WithAllowOutofOrder(true))
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

// migrate brings the schema up to date with goose, so that several processes opening the same new
// (or old) file at once all succeed and every migration is applied exactly once.
//
// goose has no session lock for SQLite, and none is needed: SQLite's write lock is the lock.
// Every transaction on the store's connection starts with BEGIN IMMEDIATE (the DSN's
// _txlock=immediate), goose's one per migration included, so a migration's statements and the
// row recording its version commit together, one writer at a time, and see everything committed
// before. A unique index on the version makes recording a version twice impossible. Two processes
// may both find a migration pending; the second to take the write lock then fails on it (its
// tables exist, or its version is already recorded) and its transaction rolls back, changing
// nothing. migrate tells that race from a real failure by looking at the version table: when the
// failed migration is recorded, another process applied it, and goose runs again from what is
// recorded now. Each such retry follows a migration applied elsewhere, so there are at most as
// many as there are migrations. A process that dies mid-way leaves no lock behind: SQLite rolls
// its open transaction back (a lock row, by contrast, would outlive its holder until a lease ran
// out). A server database would rather use goose's session locker (PostgreSQL's advisory lock).
//
// Before goose runs, one transaction (under the write lock) makes goose's version table with its
// unique index when it is missing, and, in a database the bridge's own runner migrated, records
// the versions listed in schema_migrations, with the times they were applied, so that goose
// applies none of them again.
//
// A failed migration leaves the schema as the migration before it left it.
func (s *Store) migrate(ctx context.Context) error {
	p, err := newProvider(s.db)
	if err != nil {
		return fmt.Errorf("migrate: %w", err)
	}
	if err := s.tx(ctx, func(tx *sql.Tx) error { return prepareVersions(ctx, tx) }); err != nil {
		return fmt.Errorf("migrate: %w", err)
	}
	if err := s.notNewer(ctx); err != nil {
		return err
	}
	for retries := len(p.ListSources()); ; retries-- {
		_, err := p.Up(ctx)
		if err == nil {
			return nil
		}
		var pe *goose.PartialError
		if !errors.As(err, &pe) || pe.Failed == nil || pe.Failed.Source == nil {
			return fmt.Errorf("migrate: %w", err)
		}
		if retries > 0 {
			if done, cerr := s.recorded(ctx, pe.Failed.Source.Version); cerr == nil && done {
				continue // applied by another process meanwhile
			}
		}
		return fmt.Errorf("migrate: migration %s: %w", filepath.Base(pe.Failed.Source.Path), pe.Err)
	}
}

// prepareVersions makes goose's version table when it is missing: its version 0, the unique
// index, and the versions the bridge's own runner recorded in schema_migrations, if any.
func prepareVersions(ctx context.Context, tx *sql.Tx) error {
	exists, err := tableExists(ctx, tx, versionTable)
	if err != nil || exists {
		return err
	}
	store, err := database.NewStore(database.DialectSQLite3, versionTable)
	if err != nil {
		return err
	}
	if err := store.CreateVersionTable(ctx, tx); err != nil {
		return fmt.Errorf("create %s: %w", versionTable, err)
	}
	if _, err := tx.ExecContext(ctx, `CREATE UNIQUE INDEX `+versionTable+`_once ON `+versionTable+` (version_id)`); err != nil {
		return fmt.Errorf("create %s: %w", versionTable, err)
	}
	if err := store.Insert(ctx, tx, database.InsertRequest{Version: 0}); err != nil {
		return fmt.Errorf("create %s: %w", versionTable, err)
	}
	legacy, err := tableExists(ctx, tx, legacyTable)
	if err != nil || !legacy {
		return err
	}
	if _, err := tx.ExecContext(ctx, `INSERT INTO `+versionTable+` (version_id, is_applied, tstamp)
		SELECT version, 1, datetime(applied_at / 1000000000, 'unixepoch') FROM `+legacyTable+` WHERE version > 0 ORDER BY version`); err != nil {
		return fmt.Errorf("record the migrations of %s in %s: %w", legacyTable, versionTable, err)
	}
	return nil
}

// tableExists reports whether the database has a table of that name.
func tableExists(ctx context.Context, tx *sql.Tx, name string) (bool, error) {
	var n int
	err := tx.QueryRowContext(ctx, `SELECT COUNT(*) FROM sqlite_master WHERE type = 'table' AND name = ?`, name).Scan(&n)
	return n > 0, err
}

// recorded reports whether goose's version table records version as applied.
func (s *Store) recorded(ctx context.Context, version int64) (bool, error) {
	var n int
	err := s.db.QueryRowContext(ctx, `SELECT COUNT(*) FROM `+versionTable+` WHERE version_id = ?`, version).Scan(&n)
	return n > 0, err
}

// SchemaVersion returns the database's schema version: the newest migration applied to it, which
// is SchemaVersion() once Open has migrated it (or more, when a newer bridge migrated the file).
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
// migrations this binary carries: an older bridge must not write a schema it does not know.
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
