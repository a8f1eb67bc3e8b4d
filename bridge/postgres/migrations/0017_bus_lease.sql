-- +goose Up
-- The bus's consumer groups read under a lease (package sqlbus) instead of watermill-sql's
-- subscriber, which held a transaction and the group's offsets row (FOR UPDATE) while each
-- message was out: the holder and the expiry (Unix nanoseconds) of the group's reading lease,
-- as bus.InitializeSchema adds them to any topic's offsets. A replica of an older version still
-- reads by locking the row, not by the lease: during a rolling upgrade an event may reach the
-- relay twice, which its fan-out absorbs (one delivery per event and endpoint).
ALTER TABLE "watermill_offsets_events"
    ADD COLUMN IF NOT EXISTS leased_by TEXT NOT NULL DEFAULT '',
    ADD COLUMN IF NOT EXISTS lease_until BIGINT NOT NULL DEFAULT 0;
ALTER TABLE "watermill_offsets_events.poison"
    ADD COLUMN IF NOT EXISTS leased_by TEXT NOT NULL DEFAULT '',
    ADD COLUMN IF NOT EXISTS lease_until BIGINT NOT NULL DEFAULT 0;

-- +goose Down
ALTER TABLE "watermill_offsets_events" DROP COLUMN leased_by, DROP COLUMN lease_until;
ALTER TABLE "watermill_offsets_events.poison" DROP COLUMN leased_by, DROP COLUMN lease_until;
