-- +goose Up
-- The PostgreSQL store's 0017 gives its bus's offsets the lease that SQLite's have had since
-- 0003 (package sqlbus reads both stores' buses the same way): nothing changes here; the
-- number keeps a schema version meaning the same tables in either store.
SELECT 1;

-- +goose Down
SELECT 1;
