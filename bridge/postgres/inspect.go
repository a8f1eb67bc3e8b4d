package postgres

import (
	"context"
	"database/sql"
	"fmt"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/stdlib"
	"github.com/pressly/goose/v3"
)

// DatabaseVersion reads the schema version of the database dsn names without migrating or
// writing it: 0 for a database that was never migrated. It fails, naming the server and
// database (never the password), when the DSN cannot be read or the server cannot be reached.
func DatabaseVersion(ctx context.Context, dsn string) (int, error) {
	cfg, err := pgx.ParseConfig(dsn)
	if err != nil {
		return 0, fmt.Errorf("store postgres: %w", err)
	}
	where := where(cfg.Config)
	db := stdlib.OpenDB(*cfg)
	defer db.Close()
	var exists bool
	if err := db.QueryRowContext(ctx, `SELECT to_regclass($1) IS NOT NULL`, goose.DefaultTablename).Scan(&exists); err != nil {
		return 0, fmt.Errorf("store %s: schema version: %w", where, err)
	}
	if !exists {
		return 0, nil
	}
	var v sql.NullInt64
	if err := db.QueryRowContext(ctx, `SELECT MAX(version_id) FROM `+goose.DefaultTablename+` WHERE is_applied`).Scan(&v); err != nil {
		return 0, fmt.Errorf("store %s: schema version: %w", where, err)
	}
	return int(v.Int64), nil
}
