-- +goose Up
-- Why a held job waits, typed (bridge.HoldReason: unmapped, no_balance, source_unavailable,
-- author_refused, upstream_setting); reason stays the words. Jobs held before the column existed
-- take theirs from the beginning of their reason, as the bridge read it then (SQLite's GLOB
-- patterns as LIKE, "_" escaped).
ALTER TABLE jobs ADD COLUMN hold TEXT NOT NULL DEFAULT '';
UPDATE jobs SET hold = CASE
    WHEN reason LIKE 'unmapped:%' THEN 'unmapped'
    WHEN reason LIKE 'insufficient\_balance%' THEN 'no_balance'
    WHEN reason LIKE 'source\_unavailable:%' THEN 'source_unavailable'
    WHEN reason LIKE '%author\_not\_member%' OR reason LIKE '%invalid\_author%' OR reason LIKE '%unsupported\_author\_type%'
        THEN 'author_refused'
    ELSE 'upstream_setting'
END
WHERE state = 'held';

-- +goose Down
ALTER TABLE jobs DROP COLUMN hold;
