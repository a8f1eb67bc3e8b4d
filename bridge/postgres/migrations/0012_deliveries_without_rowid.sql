-- +goose Up
-- SQLite's 0012 keeps deliveries in a table keyed by their id (WITHOUT ROWID); a PostgreSQL
-- table is a heap with the key in an index either way: the schema is the same as at 0011.
SELECT 1;

-- +goose Down
SELECT 1;
