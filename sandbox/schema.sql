-- Schema of the sandbox's state. Times are Unix nanoseconds (UTC).
CREATE TABLE IF NOT EXISTS workspaces (
    id                 TEXT PRIMARY KEY,
    name               TEXT NOT NULL,
    plan               TEXT NOT NULL,
    balance_minutes    REAL NOT NULL,
    max_file_size_mb   INTEGER NOT NULL,
    concurrency        INTEGER NOT NULL,
    max_duration_hours INTEGER NOT NULL,
    reports_per_upload INTEGER NOT NULL,
    reports_per_day    INTEGER NOT NULL,
    uploads_per_day    INTEGER NOT NULL,
    max_queued_files   INTEGER NOT NULL
);

CREATE TABLE IF NOT EXISTS members (
    id           TEXT PRIMARY KEY,
    workspace_id TEXT NOT NULL REFERENCES workspaces(id),
    email        TEXT NOT NULL,
    name         TEXT,
    role         TEXT NOT NULL,
    active       INTEGER NOT NULL,
    seq          INTEGER NOT NULL,
    UNIQUE (workspace_id, email)
);

CREATE TABLE IF NOT EXISTS identities (
    workspace_id TEXT NOT NULL,
    member_id    TEXT NOT NULL REFERENCES members(id),
    provider     TEXT NOT NULL,
    external_id  TEXT NOT NULL,
    created_at   INTEGER NOT NULL,
    PRIMARY KEY (workspace_id, provider, external_id)
);

CREATE TABLE IF NOT EXISTS projects (
    id           TEXT PRIMARY KEY,
    workspace_id TEXT NOT NULL,
    name         TEXT NOT NULL,
    created_at   INTEGER NOT NULL
);

CREATE TABLE IF NOT EXISTS project_members (
    project_id TEXT NOT NULL REFERENCES projects(id),
    member_id  TEXT NOT NULL REFERENCES members(id),
    role       TEXT NOT NULL,
    PRIMARY KEY (project_id, member_id)
);

CREATE TABLE IF NOT EXISTS prompts (
    workspace_id TEXT NOT NULL,
    slug         TEXT NOT NULL,
    name         TEXT NOT NULL,
    scope        TEXT NOT NULL,
    owner_id     TEXT NOT NULL,
    draft        INTEGER NOT NULL,
    fails        INTEGER NOT NULL,
    PRIMARY KEY (workspace_id, slug)
);

-- Only the SHA-256 of a key is kept, as upstream does, plus its last characters for display.
CREATE TABLE IF NOT EXISTS api_keys (
    hash         TEXT PRIMARY KEY,
    last4        TEXT NOT NULL,
    kind         TEXT NOT NULL, -- api_key | oauth
    workspace_id TEXT NOT NULL,
    member_id    TEXT NOT NULL,
    scopes       TEXT NOT NULL, -- space separated
    expires_at   INTEGER,
    revoked      INTEGER NOT NULL
);

CREATE TABLE IF NOT EXISTS transcriptions (
    id                 TEXT PRIMARY KEY,
    workspace_id       TEXT NOT NULL,
    key_hash           TEXT NOT NULL,
    creator_id         TEXT NOT NULL,
    author_id          TEXT NOT NULL,
    project_id         TEXT,
    title              TEXT NOT NULL,
    filename           TEXT NOT NULL,
    status             TEXT NOT NULL,
    error_code         TEXT,
    required_minutes   REAL,
    available_minutes  REAL,
    summary            TEXT,
    language           TEXT,
    requested_language TEXT NOT NULL,
    duration_seconds   REAL,
    media_type         TEXT,
    probe_error        TEXT NOT NULL DEFAULT '',
    external_id        TEXT,
    metadata           TEXT,
    diarize            INTEGER NOT NULL,
    speakers_count     INTEGER NOT NULL,
    ai_metadata        INTEGER NOT NULL,
    text               TEXT,
    segments           TEXT NOT NULL DEFAULT '[]',
    speakers           TEXT NOT NULL DEFAULT '[]',
    topics             TEXT,
    reserved_minutes   REAL NOT NULL DEFAULT 0,
    media_path         TEXT NOT NULL DEFAULT '',
    digest             TEXT NOT NULL DEFAULT '',
    locked             INTEGER NOT NULL DEFAULT 0,
    created_at         INTEGER NOT NULL,
    updated_at         INTEGER NOT NULL,
    finish_at          INTEGER NOT NULL DEFAULT 0
);
CREATE INDEX IF NOT EXISTS transcriptions_ws_status ON transcriptions (workspace_id, status, created_at);
CREATE INDEX IF NOT EXISTS transcriptions_ws_external ON transcriptions (workspace_id, external_id);

CREATE TABLE IF NOT EXISTS reports (
    id               TEXT PRIMARY KEY,
    transcription_id TEXT NOT NULL,
    workspace_id     TEXT NOT NULL,
    slug             TEXT NOT NULL,
    name             TEXT NOT NULL,
    status           TEXT NOT NULL,
    error_code       TEXT,
    text             TEXT,
    fails            INTEGER NOT NULL,
    created_at       INTEGER NOT NULL,
    completed_at     INTEGER,
    finish_at        INTEGER NOT NULL DEFAULT 0
);
CREATE INDEX IF NOT EXISTS reports_transcription ON reports (transcription_id, created_at);
CREATE INDEX IF NOT EXISTS reports_ws_status ON reports (workspace_id, status);

-- Idempotency keys, scoped to the API key that sent them. Only successes are kept (state 'done');
-- an 'inflight' row exists while the first request is being received.
CREATE TABLE IF NOT EXISTS idempotency (
    key_hash         TEXT NOT NULL,
    idem_key         TEXT NOT NULL,
    state            TEXT NOT NULL,
    fingerprint      TEXT NOT NULL,
    transcription_id TEXT,
    response         TEXT,
    created_at       INTEGER NOT NULL,
    PRIMARY KEY (key_hash, idem_key)
);

CREATE TABLE IF NOT EXISTS journal (
    seq          INTEGER PRIMARY KEY AUTOINCREMENT,
    at           INTEGER NOT NULL,
    method       TEXT NOT NULL,
    path         TEXT NOT NULL,
    query        TEXT NOT NULL,
    key_last4    TEXT NOT NULL,
    idem_key     TEXT NOT NULL,
    status       INTEGER NOT NULL,
    code         TEXT NOT NULL,
    fault        TEXT NOT NULL,
    duration_ms  REAL NOT NULL
);

-- Daily counters of the anti-abuse caps (uploads, reports); deleting a transcription does not
-- give its count back.
CREATE TABLE IF NOT EXISTS daily_counts (
    workspace_id TEXT NOT NULL,
    day          TEXT NOT NULL, -- YYYY-MM-DD, UTC
    kind         TEXT NOT NULL, -- uploads | reports
    n            INTEGER NOT NULL,
    PRIMARY KEY (workspace_id, day, kind)
);
