-- +goose Up
-- Endpoints failing for their alert_after (issue 35, point 5): a row per failing spell, inserted
-- with ON CONFLICT DO NOTHING in the transaction that writes endpoint.failing to the outbox, so
-- of several replicas exactly one sends it; deleted when an attempt is delivered again.
CREATE TABLE endpoint_alerts (
    name       TEXT PRIMARY KEY,
    since      INTEGER NOT NULL,
    alerted_at INTEGER NOT NULL,
    error      TEXT NOT NULL
);

-- +goose Down
DROP TABLE endpoint_alerts;
