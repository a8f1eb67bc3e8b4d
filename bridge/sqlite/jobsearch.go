package sqlite

import "strings"

// searched are the texts of a job JobFilter.Query looks in: the recording's file name, item
// and owner, the mapped external id and author, the job's and the transcription's ids.
var searched = []string{"json_extract(recording, '$.name')", "item_id", "external_id", "author",
	"json_extract(recording, '$.owner.id')", "json_extract(recording, '$.owner.email')", "json_extract(recording, '$.owner.name')",
	"id", "transcription_id"}

// jobQuery returns the condition of JobFilter.Query q and its arguments: q anywhere in one of
// the searched texts, by LIKE (which folds ASCII letters only), its wildcards taken literally.
func jobQuery(q string) (string, []any) {
	pattern := containsPattern(q)
	conds := make([]string, len(searched))
	args := make([]any, len(searched))
	for i, col := range searched {
		conds[i], args[i] = "COALESCE("+col+", '') LIKE ? ESCAPE '\\'", pattern
	}
	return "(" + strings.Join(conds, " OR ") + ")", args
}

// containsPattern is a LIKE pattern matching q anywhere, with q's %, _ and \ escaped by \.
func containsPattern(q string) string {
	return "%" + strings.NewReplacer(`\`, `\\`, `%`, `\%`, `_`, `\_`).Replace(q) + "%"
}
