-- +goose Up
-- The audit log: what admins did by hand from the status page (release, reassign, replay,
-- pause, resume, sign-in), who did it, when, the ids acted on (a JSON array) and how it went.
CREATE TABLE audit_log (
    id      INTEGER PRIMARY KEY AUTOINCREMENT,
    at      INTEGER NOT NULL,
    who     TEXT NOT NULL,
    action  TEXT NOT NULL,
    targets TEXT NOT NULL,
    detail  TEXT NOT NULL DEFAULT '',
    error   TEXT NOT NULL DEFAULT ''
);

-- +goose Down
DROP TABLE audit_log;
