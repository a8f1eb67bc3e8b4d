-- +goose Up
-- The relay's group commit fans events out in batches that may commit out of event order, so a
-- claim also waits for earlier events of the job not yet fanned out (per-transcription order):
-- outbox_unfanned_job finds them. The claim's indexes hold pending deliveries only: a
-- delivery delivered or dead leaves them (a delete, not a move), and they stay the size of the
-- backlog. Deliveries fanned out from now on keep data '' and read their event's data from the
-- outbox (a row a tenth the size: the relay writes every delivery three times).
CREATE INDEX outbox_unfanned_job ON outbox (job_id, id) WHERE delivered_at IS NULL;
CREATE INDEX deliveries_claim ON deliveries (endpoint, next_attempt_at, event_id) WHERE status = 'pending';
DROP INDEX deliveries_order;
CREATE INDEX deliveries_order ON deliveries (endpoint, job_id, event_id) WHERE status = 'pending';

-- +goose Down
DROP INDEX deliveries_order;
CREATE INDEX deliveries_order ON deliveries (endpoint, job_id, event_id);
DROP INDEX deliveries_claim;
DROP INDEX outbox_unfanned_job;
