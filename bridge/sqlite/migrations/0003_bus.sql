-- +goose Up
-- The event bus (package bus) on its two topics, bridge.EventsTopic ("events") and
-- bridge.EventsPoisonTopic ("events.poison"): the tables bus.InitializeSchema makes, a test checks
-- they stay the same. IF NOT EXISTS: a database migrated before goose made them on every open.
CREATE TABLE IF NOT EXISTS "watermill_events" (
		"offset"   INTEGER PRIMARY KEY AUTOINCREMENT,
		uuid       TEXT NOT NULL,
		payload    BLOB,
		metadata   TEXT NOT NULL DEFAULT '{}',
		created_at TEXT NOT NULL DEFAULT (strftime('%Y-%m-%dT%H:%M:%fZ', 'now'))
	);
CREATE TABLE IF NOT EXISTS "watermill_offsets_events" (
		consumer_group TEXT PRIMARY KEY,
		offset_acked   INTEGER NOT NULL DEFAULT 0,
		leased_by      TEXT NOT NULL DEFAULT '',
		lease_until    INTEGER NOT NULL DEFAULT 0
	);
CREATE TABLE IF NOT EXISTS "watermill_events.poison" (
		"offset"   INTEGER PRIMARY KEY AUTOINCREMENT,
		uuid       TEXT NOT NULL,
		payload    BLOB,
		metadata   TEXT NOT NULL DEFAULT '{}',
		created_at TEXT NOT NULL DEFAULT (strftime('%Y-%m-%dT%H:%M:%fZ', 'now'))
	);
CREATE TABLE IF NOT EXISTS "watermill_offsets_events.poison" (
		consumer_group TEXT PRIMARY KEY,
		offset_acked   INTEGER NOT NULL DEFAULT 0,
		leased_by      TEXT NOT NULL DEFAULT '',
		lease_until    INTEGER NOT NULL DEFAULT 0
	);

-- Events written before the bus existed and not yet handed on are published on it, in order, so
-- an upgrade loses none.
INSERT INTO "watermill_events" (uuid, payload, metadata)
SELECT lower(hex(randomblob(16))),
       json_object('event_id', id, 'type', type, 'job_id', job_id, 'transcription_id', transcription_id),
       json_object('correlation_id', job_id)
FROM outbox WHERE delivered_at IS NULL ORDER BY id;

-- +goose Down
-- Before the bus: the events on it go with it (the outbox keeps every event).
DROP TABLE "watermill_offsets_events.poison";
DROP TABLE "watermill_events.poison";
DROP TABLE "watermill_offsets_events";
DROP TABLE "watermill_events";
