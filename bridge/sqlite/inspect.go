package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"io/fs"
	"os"
)

// DatabaseVersion reads the schema version of the database file at path without creating,
// migrating or writing it: 0 for a file that does not exist or was never migrated. It fails
// when the file cannot be read as a database.
func DatabaseVersion(ctx context.Context, path string) (int, error) {
	if _, err := os.Stat(path); errors.Is(err, fs.ErrNotExist) {
		return 0, nil
	}
	db, err := sql.Open("sqlite3", "file:"+uriPath.Replace(path)+"?mode=ro&_busy_timeout=10000")
	if err != nil {
		return 0, fmt.Errorf("store %s: %w", path, err)
	}
	defer db.Close()
	var n int
	if err := db.QueryRowContext(ctx, `SELECT COUNT(*) FROM sqlite_master WHERE type = 'table' AND name = ?`, versionTable).Scan(&n); err != nil {
		return 0, fmt.Errorf("store %s: schema version: %w", path, err)
	}
	if n == 0 {
		return 0, nil
	}
	var v sql.NullInt64
	if err := db.QueryRowContext(ctx, `SELECT MAX(version_id) FROM `+versionTable+` WHERE is_applied`).Scan(&v); err != nil {
		return 0, fmt.Errorf("store %s: schema version: %w", path, err)
	}
	return int(v.Int64), nil
}
