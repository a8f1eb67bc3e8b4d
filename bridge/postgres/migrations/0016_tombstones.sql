-- +goose Up
-- The PostgreSQL version of bridge/sqlite/migrations/0070_tombstones.sql. What bridge forget leaves behind: ids only, never a name or an
-- e-mail address. A later scan never stores a job for a tombstoned source item or dedupe key,
-- mapping skips a job whose external id is tombstoned, and exports leave the transcription out.
-- Tombstones are kept for good: retention never purges them.
CREATE TABLE tombstones (
    job_id           TEXT PRIMARY KEY,
    source           TEXT NOT NULL,
    item_id          TEXT NOT NULL,
    dedupe_key       TEXT NOT NULL DEFAULT '',
    external_id      TEXT NOT NULL DEFAULT '',
    transcription_id TEXT NOT NULL DEFAULT '',
    reason           TEXT NOT NULL DEFAULT '',
    created_at       BIGINT NOT NULL
);
CREATE INDEX tombstones_item ON tombstones (source, item_id);
CREATE INDEX tombstones_dedupe ON tombstones (dedupe_key) WHERE dedupe_key <> '';
CREATE INDEX tombstones_external ON tombstones (external_id) WHERE external_id <> '';
CREATE INDEX tombstones_transcription ON tombstones (transcription_id) WHERE transcription_id <> '';
-- Retention: finished jobs and delivered deliveries by age.
CREATE INDEX jobs_updated ON jobs (updated_at);
CREATE INDEX deliveries_updated ON deliveries (status, updated_at);
CREATE INDEX deliveries_job ON deliveries (job_id);
CREATE INDEX outbox_job ON outbox (job_id);

-- +goose Down
DROP INDEX outbox_job;
DROP INDEX deliveries_job;
DROP INDEX deliveries_updated;
DROP INDEX jobs_updated;
DROP TABLE tombstones;
