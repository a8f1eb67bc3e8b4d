package postgres

import "strings"

// jobQuery is the condition of JobFilter.Query, its one argument ($?) containsPattern's: the
// pattern in the recording's file name, item or owner, the mapped external id or author, the
// job's or the transcription's id, any case (ILIKE).
const jobQuery = `(recording::jsonb->>'name' ILIKE $? OR item_id ILIKE $? OR external_id ILIKE $? OR author ILIKE $?
	OR recording::jsonb#>>'{owner,id}' ILIKE $? OR recording::jsonb#>>'{owner,email}' ILIKE $?
	OR recording::jsonb#>>'{owner,name}' ILIKE $? OR id ILIKE $? OR transcription_id ILIKE $?)`

// containsPattern is a LIKE pattern matching q anywhere, with q's %, _ and \ escaped by \ (the
// default escape of LIKE and ILIKE).
func containsPattern(q string) string {
	return "%" + strings.NewReplacer(`\`, `\\`, `%`, `\%`, `_`, `\_`).Replace(q) + "%"
}
