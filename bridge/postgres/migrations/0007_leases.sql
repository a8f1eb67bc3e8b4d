-- +goose Up
-- Several replicas on one store: a job's writes are counted (jobs.revision, compared by every
-- update, so a replica that lost its lease cannot write over a newer state), and named leases
-- let one replica at a time scan a source or track completions.
ALTER TABLE jobs ADD COLUMN revision BIGINT NOT NULL DEFAULT 1;
CREATE TABLE leases (
    name   TEXT PRIMARY KEY,
    holder TEXT NOT NULL,
    until  BIGINT NOT NULL
);

-- +goose Down
DROP TABLE leases;
ALTER TABLE jobs DROP COLUMN revision;
