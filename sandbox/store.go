package sandbox

import (
	"context"
	"database/sql"
	_ "embed"
	"fmt"
	"os"
	"path/filepath"

	"github.com/google/uuid"

	_ "github.com/mattn/go-sqlite3" // the SQLite driver
)

//go:embed schema.sql
var schema string

// openDB opens (creating when needed) the SQLite file at path in WAL mode and applies the schema.
// An empty path or ":memory:" gives a private in-memory database. It returns an error naming the
// path when the file cannot be opened or migrated.
func openDB(ctx context.Context, path string) (*sql.DB, error) {
	dsn := "file::memory:?cache=shared&_busy_timeout=5000&_foreign_keys=on&_txlock=immediate"
	if path != "" && path != ":memory:" {
		if dir := filepath.Dir(path); dir != "." {
			if err := os.MkdirAll(dir, 0o755); err != nil {
				return nil, fmt.Errorf("create database folder %s: %w", dir, err)
			}
		}
		dsn = "file:" + path + "?_journal_mode=WAL&_busy_timeout=5000&_foreign_keys=on&_txlock=immediate&_synchronous=NORMAL"
	} else {
		// A private name keeps in-memory databases of several servers apart.
		dsn = fmt.Sprintf("file:sandbox-%s?mode=memory&cache=shared&_busy_timeout=5000&_foreign_keys=on&_txlock=immediate", uuid.NewString())
	}
	db, err := sql.Open("sqlite3", dsn)
	if err != nil {
		return nil, fmt.Errorf("open database %s: %w", path, err)
	}
	// One connection: SQLite has one writer anyway, and this rules out SQLITE_BUSY between our own
	// goroutines. Code must therefore never query s.db while holding rows or a transaction.
	db.SetMaxOpenConns(1)
	db.SetConnMaxIdleTime(0)
	db.SetConnMaxLifetime(0)
	if _, err := db.ExecContext(ctx, schema); err != nil {
		db.Close()
		return nil, fmt.Errorf("migrate database %s: %w", path, err)
	}
	return db, nil
}

// inTx runs fn in one immediate transaction, committing when fn returns nil.
func (s *Server) inTx(ctx context.Context, fn func(tx *sql.Tx) error) error {
	tx, err := s.db.BeginTx(ctx, nil)
	if err != nil {
		return fmt.Errorf("begin: %w", err)
	}
	if err := fn(tx); err != nil {
		tx.Rollback()
		return err
	}
	return tx.Commit()
}
