-- The event bus (package bus) was created before this migration. Events written before it
-- existed and not yet handed on are published on it, in order, so an upgrade loses none.
INSERT INTO "watermill_events" (uuid, payload, metadata)
SELECT lower(hex(randomblob(16))),
       json_object('event_id', id, 'type', type, 'job_id', job_id, 'transcription_id', transcription_id),
       json_object('correlation_id', job_id)
FROM outbox WHERE delivered_at IS NULL ORDER BY id;
