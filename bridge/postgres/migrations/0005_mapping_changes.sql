-- +goose Up
-- The mapping generation: moved on by every process that changes who owns what (identities
-- apply, jobs release) and polled by bridge run, which then maps its held jobs again.
CREATE TABLE mapping_changes (
    id         INTEGER PRIMARY KEY CHECK (id = 1),
    generation BIGINT NOT NULL,
    reason     TEXT NOT NULL,
    changed_at BIGINT NOT NULL
);
INSERT INTO mapping_changes (id, generation, reason, changed_at) VALUES (1, 0, '', 0);

-- +goose Down
DROP TABLE mapping_changes;
