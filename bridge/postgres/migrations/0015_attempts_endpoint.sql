-- +goose Up
-- Each attempt names its endpoint, indexed with its sequence: an endpoint's newest attempts
-- (EndpointAttempts, the status page's Endpoints) are read from the index's end, whatever the
-- state of their deliveries and however long ago they were made. Without it the newest
-- attempts of all endpoints were read back until ten of this one's turned up: a scan of the
-- whole table for an endpoint disabled long ago. Attempts made before are given theirs.
ALTER TABLE delivery_attempts ADD COLUMN endpoint TEXT NOT NULL DEFAULT '';
UPDATE delivery_attempts SET endpoint = COALESCE((SELECT d.endpoint FROM deliveries d WHERE d.id = delivery_attempts.delivery_id), '');
CREATE INDEX delivery_attempts_endpoint ON delivery_attempts (endpoint, seq);

-- +goose Down
DROP INDEX delivery_attempts_endpoint;
ALTER TABLE delivery_attempts DROP COLUMN endpoint;
