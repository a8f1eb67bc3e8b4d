-- +goose Up
-- A group commit leases the deliveries it fans out when nothing earlier of their jobs is pending
-- at their endpoints: one look per job (job_id first) instead of one per job and endpoint. The
-- claim's per-job order test uses both columns and is served as before.
DROP INDEX deliveries_order;
CREATE INDEX deliveries_order ON deliveries (job_id, endpoint, event_id) WHERE status = 'pending';

-- +goose Down
DROP INDEX deliveries_order;
CREATE INDEX deliveries_order ON deliveries (endpoint, job_id, event_id) WHERE status = 'pending';
