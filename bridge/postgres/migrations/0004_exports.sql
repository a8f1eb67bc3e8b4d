-- +goose Up
-- Scheduled exports: one row per (export, tick), claimed with a lease; checkpoints per export.
CREATE TABLE export_runs (
    export      TEXT NOT NULL,
    tick        BIGINT NOT NULL,
    status      TEXT NOT NULL,
    lease_until BIGINT NOT NULL,
    window_from BIGINT NOT NULL DEFAULT 0,
    window_to   BIGINT NOT NULL DEFAULT 0,
    location    TEXT NOT NULL DEFAULT '',
    listed      INTEGER NOT NULL DEFAULT 0,
    exported    INTEGER NOT NULL DEFAULT 0,
    skipped     INTEGER NOT NULL DEFAULT 0,
    error       TEXT NOT NULL DEFAULT '',
    started_at  BIGINT NOT NULL,
    finished_at BIGINT NOT NULL DEFAULT 0,
    PRIMARY KEY (export, tick)
);

CREATE TABLE export_checkpoints (
    export     TEXT PRIMARY KEY,
    until      BIGINT NOT NULL,
    updated_at BIGINT NOT NULL
);

CREATE INDEX jobs_transcription ON jobs (transcription_id);

-- What each export has written, so overlapping windows never export a transcript twice.
CREATE TABLE export_items (
    export           TEXT NOT NULL,
    transcription_id TEXT NOT NULL,
    tick             BIGINT NOT NULL,
    PRIMARY KEY (export, transcription_id)
);

-- +goose Down
DROP TABLE export_items;
DROP INDEX jobs_transcription;
DROP TABLE export_checkpoints;
DROP TABLE export_runs;
