-- +goose Up
-- Webhook deliveries: one per event and endpoint, scheduled here (next_attempt_at, leases).
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
CREATE INDEX deliveries_due ON deliveries (status, next_attempt_at);
CREATE INDEX deliveries_order ON deliveries (endpoint, job_id, event_id);

CREATE TABLE delivery_attempts (
    seq         INTEGER PRIMARY KEY AUTOINCREMENT,
    delivery_id TEXT NOT NULL REFERENCES deliveries(id),
    at          INTEGER NOT NULL,
    status      INTEGER NOT NULL,
    latency_ms  REAL NOT NULL,
    response    TEXT NOT NULL,
    error       TEXT NOT NULL
);
CREATE INDEX delivery_attempts_delivery ON delivery_attempts (delivery_id, seq);

CREATE TABLE endpoint_state (
    name        TEXT PRIMARY KEY,
    disabled_at INTEGER NOT NULL,
    reason      TEXT NOT NULL
);

-- +goose Down
DROP TABLE endpoint_state;
DROP TABLE delivery_attempts;
DROP TABLE deliveries;
