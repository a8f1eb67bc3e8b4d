-- +goose Up
-- Deliveries are found by their id: kept in a table keyed by it (WITHOUT ROWID), a delivery is
-- one entry fewer to write when fanned out and one look fewer when recorded than in a rowid
-- table with an index on the id. The table is rebuilt under its name: its rows are copied
-- aside, and delivery_attempts' references to them, orphaned while the table is dropped, are
-- checked only at commit (defer_foreign_keys), once the rows are back.
PRAGMA defer_foreign_keys = ON;
CREATE TABLE deliveries_copy AS SELECT id, event_id, endpoint, webhook_id, type, job_id, transcription_id, data, event_at, status,
    attempts, next_attempt_at, lease_until, last_status, last_error, created_at, updated_at FROM deliveries;
DROP TABLE deliveries;
CREATE TABLE deliveries (
    id               TEXT PRIMARY KEY,
    event_id         INTEGER NOT NULL,
    endpoint         TEXT NOT NULL,
    webhook_id       TEXT NOT NULL,
    type             TEXT NOT NULL,
    job_id           TEXT NOT NULL,
    transcription_id TEXT NOT NULL,
    data             TEXT NOT NULL,
    event_at         INTEGER NOT NULL,
    status           TEXT NOT NULL, -- pending | delivered | dead
    attempts         INTEGER NOT NULL DEFAULT 0,
    next_attempt_at  INTEGER NOT NULL,
    lease_until      INTEGER NOT NULL DEFAULT 0,
    last_status      INTEGER NOT NULL DEFAULT 0,
    last_error       TEXT NOT NULL DEFAULT '',
    created_at       INTEGER NOT NULL,
    updated_at       INTEGER NOT NULL,
    UNIQUE (event_id, endpoint)
) WITHOUT ROWID;
INSERT INTO deliveries (id, event_id, endpoint, webhook_id, type, job_id, transcription_id, data, event_at, status,
    attempts, next_attempt_at, lease_until, last_status, last_error, created_at, updated_at)
SELECT id, event_id, endpoint, webhook_id, type, job_id, transcription_id, data, event_at, status,
    attempts, next_attempt_at, lease_until, last_status, last_error, created_at, updated_at FROM deliveries_copy;
DROP TABLE deliveries_copy;
CREATE INDEX deliveries_claim ON deliveries (endpoint, next_attempt_at, event_id) WHERE status = 'pending';
CREATE INDEX deliveries_order ON deliveries (job_id, endpoint, event_id) WHERE status = 'pending';
CREATE INDEX deliveries_dead ON deliveries (created_at) WHERE status = 'dead';

-- +goose Down
PRAGMA defer_foreign_keys = ON;
CREATE TABLE deliveries_copy AS SELECT id, event_id, endpoint, webhook_id, type, job_id, transcription_id, data, event_at, status,
    attempts, next_attempt_at, lease_until, last_status, last_error, created_at, updated_at FROM deliveries;
DROP TABLE deliveries;
CREATE TABLE deliveries (
    id               TEXT PRIMARY KEY,
    event_id         INTEGER NOT NULL,
    endpoint         TEXT NOT NULL,
    webhook_id       TEXT NOT NULL,
    type             TEXT NOT NULL,
    job_id           TEXT NOT NULL,
    transcription_id TEXT NOT NULL,
    data             TEXT NOT NULL,
    event_at         INTEGER NOT NULL,
    status           TEXT NOT NULL, -- pending | delivered | dead
    attempts         INTEGER NOT NULL DEFAULT 0,
    next_attempt_at  INTEGER NOT NULL,
    lease_until      INTEGER NOT NULL DEFAULT 0,
    last_status      INTEGER NOT NULL DEFAULT 0,
    last_error       TEXT NOT NULL DEFAULT '',
    created_at       INTEGER NOT NULL,
    updated_at       INTEGER NOT NULL,
    UNIQUE (event_id, endpoint)
);
INSERT INTO deliveries (id, event_id, endpoint, webhook_id, type, job_id, transcription_id, data, event_at, status,
    attempts, next_attempt_at, lease_until, last_status, last_error, created_at, updated_at)
SELECT id, event_id, endpoint, webhook_id, type, job_id, transcription_id, data, event_at, status,
    attempts, next_attempt_at, lease_until, last_status, last_error, created_at, updated_at FROM deliveries_copy;
DROP TABLE deliveries_copy;
CREATE INDEX deliveries_claim ON deliveries (endpoint, next_attempt_at, event_id) WHERE status = 'pending';
CREATE INDEX deliveries_order ON deliveries (job_id, endpoint, event_id) WHERE status = 'pending';
CREATE INDEX deliveries_dead ON deliveries (created_at) WHERE status = 'dead';
