-- +goose Up
-- The event bus (package bus: watermill-sql v4's PostgreSQL schema and offsets adapters, payload
-- BYTEA) on its two topics, bridge.EventsTopic ("events") and bridge.EventsPoisonTopic
-- ("events.poison"): the tables bus.InitializeSchema makes, a test checks they stay the same. A
-- message's transaction_id is the xid of the transaction that published it; subscribers read
-- only below the oldest transaction still running, so none skips a message committed late.
CREATE TABLE IF NOT EXISTS "watermill_events" (
    "offset"         BIGSERIAL,
    "uuid"           VARCHAR(36) NOT NULL,
    "created_at"     TIMESTAMP NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "payload"        BYTEA DEFAULT NULL,
    "metadata"       JSON DEFAULT NULL,
    "transaction_id" xid8 NOT NULL,
    PRIMARY KEY ("transaction_id", "offset")
);
CREATE TABLE IF NOT EXISTS "watermill_offsets_events" (
    consumer_group                VARCHAR(255) NOT NULL,
    offset_acked                  BIGINT,
    last_processed_transaction_id xid8 NOT NULL,
    PRIMARY KEY (consumer_group)
);
CREATE TABLE IF NOT EXISTS "watermill_events.poison" (
    "offset"         BIGSERIAL,
    "uuid"           VARCHAR(36) NOT NULL,
    "created_at"     TIMESTAMP NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "payload"        BYTEA DEFAULT NULL,
    "metadata"       JSON DEFAULT NULL,
    "transaction_id" xid8 NOT NULL,
    PRIMARY KEY ("transaction_id", "offset")
);
CREATE TABLE IF NOT EXISTS "watermill_offsets_events.poison" (
    consumer_group                VARCHAR(255) NOT NULL,
    offset_acked                  BIGINT,
    last_processed_transaction_id xid8 NOT NULL,
    PRIMARY KEY (consumer_group)
);

-- Events written before the bus existed and not yet handed on are published on it, in order, so
-- an upgrade loses none (as in SQLite's 0003; a new database has none).
INSERT INTO "watermill_events" (uuid, payload, metadata, transaction_id)
SELECT gen_random_uuid()::text,
       convert_to(json_build_object('event_id', id, 'type', type, 'job_id', job_id, 'transcription_id', transcription_id)::text, 'UTF8'),
       json_build_object('correlation_id', job_id),
       pg_current_xact_id()
FROM outbox WHERE delivered_at IS NULL ORDER BY id;

-- +goose Down
-- Before the bus: the events on it go with it (the outbox keeps every event).
DROP TABLE "watermill_offsets_events.poison";
DROP TABLE "watermill_events.poison";
DROP TABLE "watermill_offsets_events";
DROP TABLE "watermill_events";
