-- +goose Up
-- The relay's group commit fans events out in batches that may commit out of event order, so a
-- claim also waits for earlier events of the job not yet fanned out (per-transcription order):
-- this index finds them. The second serves one endpoint's claim without scanning the others'.
-- Deliveries fanned out from now on keep data '' and read their event's data from the outbox
-- (a row a tenth the size: the relay writes every delivery three times).
CREATE INDEX outbox_unfanned_job ON outbox (job_id, id) WHERE delivered_at IS NULL;
CREATE INDEX deliveries_claim ON deliveries (endpoint, status, next_attempt_at, event_id);

-- +goose Down
DROP INDEX deliveries_claim;
DROP INDEX outbox_unfanned_job;
