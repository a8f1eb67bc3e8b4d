-- +goose Up
-- One job per content across sources: a recording whose source gives it a dedupe_key (a Drive
-- file's "gdrive:<id>@<version>", reached through a gdrive source and a meet source alike) is
-- stored once, whichever source finds it first; AddRecordings inserts with ON CONFLICT DO
-- NOTHING, so another source's sighting of the same key is a no-op, as a second sighting in one
-- source is. Recordings without a key are not in the index (jobs stored before have none).
CREATE UNIQUE INDEX jobs_dedupe ON jobs (json_extract(recording, '$.dedupe_key'))
    WHERE json_extract(recording, '$.dedupe_key') IS NOT NULL;

-- +goose Down
DROP INDEX jobs_dedupe;
