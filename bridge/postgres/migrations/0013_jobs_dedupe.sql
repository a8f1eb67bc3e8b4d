-- +goose Up
-- The PostgreSQL version of bridge/sqlite/migrations/0013_jobs_dedupe.sql: one job per
-- recording.dedupe_key across sources, whichever source finds it first (AddRecordings inserts
-- with ON CONFLICT DO NOTHING); recordings without a key are not in the index.
CREATE UNIQUE INDEX jobs_dedupe ON jobs (((recording::jsonb) ->> 'dedupe_key'))
    WHERE ((recording::jsonb) ->> 'dedupe_key') IS NOT NULL;

-- +goose Down
DROP INDEX jobs_dedupe;
