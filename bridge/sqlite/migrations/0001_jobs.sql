-- +goose Up
CREATE TABLE jobs (
    id               TEXT PRIMARY KEY,
    source           TEXT NOT NULL,
    item_id          TEXT NOT NULL,
    version          TEXT NOT NULL,
    recording        TEXT NOT NULL, -- the Recording as JSON (name, size, times, link, owner)
    state            TEXT NOT NULL,
    reason           TEXT NOT NULL DEFAULT '',
    author           TEXT NOT NULL DEFAULT '',
    external_id      TEXT NOT NULL DEFAULT '',
    metadata         TEXT NOT NULL DEFAULT '',
    idempotency_key  TEXT NOT NULL DEFAULT '',
    attempt_at       INTEGER NOT NULL DEFAULT 0,
    attempts         INTEGER NOT NULL DEFAULT 0,
    transcription_id TEXT NOT NULL DEFAULT '',
    required_minutes REAL NOT NULL DEFAULT 0,
    next_at          INTEGER NOT NULL DEFAULT 0,
    created_at       INTEGER NOT NULL,
    updated_at       INTEGER NOT NULL,
    UNIQUE (source, item_id, version)
);
CREATE INDEX jobs_state_due ON jobs (state, next_at);

CREATE TABLE job_history (
    seq    INTEGER PRIMARY KEY AUTOINCREMENT,
    job_id TEXT NOT NULL REFERENCES jobs(id),
    from_state TEXT NOT NULL,
    to_state   TEXT NOT NULL,
    reason TEXT NOT NULL,
    at     INTEGER NOT NULL
);
CREATE INDEX job_history_job ON job_history (job_id, seq);

CREATE TABLE cursors (
    source     TEXT PRIMARY KEY,
    cursor     TEXT NOT NULL,
    updated_at INTEGER NOT NULL
);

-- Events written with the state change they report; the relay hands them on.
CREATE TABLE outbox (
    id               INTEGER PRIMARY KEY AUTOINCREMENT,
    type             TEXT NOT NULL,
    job_id           TEXT NOT NULL,
    transcription_id TEXT NOT NULL,
    data             TEXT NOT NULL,
    created_at       INTEGER NOT NULL,
    delivered_at     INTEGER
);
CREATE INDEX outbox_pending ON outbox (delivered_at, id);

CREATE TABLE meta (
    key   TEXT PRIMARY KEY,
    value TEXT NOT NULL
);

-- +goose Down
DROP TABLE meta;
DROP TABLE outbox;
DROP TABLE cursors;
DROP TABLE job_history;
DROP TABLE jobs;
