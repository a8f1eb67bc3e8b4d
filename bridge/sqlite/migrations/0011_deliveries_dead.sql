-- +goose Up
-- deliveries_due indexed every delivery by status, so recording one delivered moved its entry,
-- one more write per delivery on the relay's path for an index that only listings read. Only
-- the dead letters are listed or replayed by status among many rows (pending ones have
-- deliveries_claim, delivered ones are most rows): they keep an index, which a delivery leaves
-- only by being replayed.
DROP INDEX deliveries_due;
CREATE INDEX deliveries_dead ON deliveries (created_at) WHERE status = 'dead';

-- +goose Down
DROP INDEX deliveries_dead;
CREATE INDEX deliveries_due ON deliveries (status, next_attempt_at);
