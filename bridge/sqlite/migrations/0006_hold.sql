-- +goose Up
-- Why a held job waits, typed (bridge.HoldReason: unmapped, no_balance, source_unavailable,
-- author_refused, upstream_setting); reason stays the words. Jobs held before the column existed
-- take theirs from the beginning of their reason, as the bridge read it then.
ALTER TABLE jobs ADD COLUMN hold TEXT NOT NULL DEFAULT '';
UPDATE jobs SET hold = CASE
    WHEN reason GLOB 'unmapped:*' THEN 'unmapped'
    WHEN reason GLOB 'insufficient_balance*' THEN 'no_balance'
    WHEN reason GLOB 'source_unavailable:*' THEN 'source_unavailable'
    WHEN reason GLOB '*author_not_member*' OR reason GLOB '*invalid_author*' OR reason GLOB '*unsupported_author_type*'
        THEN 'author_refused'
    ELSE 'upstream_setting'
END
WHERE state = 'held';

-- +goose Down
ALTER TABLE jobs DROP COLUMN hold;
