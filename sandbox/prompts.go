package sandbox

import (
	"context"
	"fmt"
	"net/http"
	"sort"
)

// prompt is a report template visible to a key.
type prompt struct {
	Slug        string  `json:"slug"`
	Name        string  `json:"name"`
	Kind        string  `json:"kind"`
	Scope       *string `json:"scope"`
	Description *string `json:"description"`
	fails       bool
}

// builtins is the built-in catalogue: stable slugs, English names, a category as description.
var builtins = []prompt{
	builtin("summary", "Summary", "General"),
	builtin("action-items", "Action items", "General"),
	builtin("meeting-minutes", "Meeting minutes", "Meetings"),
	builtin("follow-up-email", "Follow-up email", "Sales"),
	builtin("key-decisions", "Key decisions", "Meetings"),
	builtin("sales-call-notes", "Sales call notes", "Sales"),
	builtin("interview-notes", "Interview notes", "Recruiting"),
	builtin("lecture-notes", "Lecture notes", "Education"),
}

func builtin(slug, name, category string) prompt {
	return prompt{Slug: slug, Name: name, Kind: "builtin", Description: &category}
}

var builtinByslug = func() map[string]prompt {
	m := map[string]prompt{}
	for _, p := range builtins {
		m[p.Slug] = p
	}
	return m
}()

// visiblePrompts lists the built-in catalogue, the workspace's published templates and the key
// owner's own published personal templates. Drafts never appear.
func visiblePrompts(ctx context.Context, q queryer, p *principal) ([]prompt, error) {
	out := append([]prompt(nil), builtins...)
	rows, err := q.QueryContext(ctx, `SELECT slug, name, scope, fails FROM prompts WHERE workspace_id = ? AND draft = 0
		AND (scope = 'workspace' OR owner_id = ?) ORDER BY name, slug`, p.workspaceID, p.memberID)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	for rows.Next() {
		var pr prompt
		var scope string
		if err := rows.Scan(&pr.Slug, &pr.Name, &scope, &pr.fails); err != nil {
			return nil, err
		}
		pr.Kind, pr.Scope = "custom", &scope
		out = append(out, pr)
	}
	return out, rows.Err()
}

// resolveSlugs checks requested slugs: at most limit, each visible to the key's owner. The
// error carries too_many_reports or prompt_not_found with detail.slug.
func resolveSlugs(ctx context.Context, q queryer, p *principal, slugs []string, limit int) ([]prompt, *fieldError, error) {
	if len(slugs) > limit {
		return nil, &fieldError{"too_many_reports", fmt.Sprintf("%d reports requested; at most %d are allowed", len(slugs), limit), map[string]any{"max": limit, "requested": len(slugs)}}, nil
	}
	visible, err := visiblePrompts(ctx, q, p)
	if err != nil {
		return nil, nil, err
	}
	bySlug := map[string]prompt{}
	for _, v := range visible {
		bySlug[v.Slug] = v
	}
	var out []prompt
	seen := map[string]bool{}
	for _, slug := range slugs {
		pr, ok := bySlug[slug]
		if !ok {
			return nil, &fieldError{"prompt_not_found", fmt.Sprintf("report template %q is unknown or not visible to the key's owner", slug), map[string]any{"slug": slug}}, nil
		}
		if !seen[slug] {
			seen[slug] = true
			out = append(out, pr)
		}
	}
	return out, nil, nil
}

func (s *Server) handlePrompts(w http.ResponseWriter, r *http.Request) {
	p := principalFrom(r)
	if !require(w, r, p, scopeReports) {
		return
	}
	list, err := visiblePrompts(r.Context(), s.db, p)
	if err != nil {
		internalError(w, r, err)
		return
	}
	sort.SliceStable(list, func(i, j int) bool { return list[i].Kind == "builtin" && list[j].Kind != "builtin" })
	writeJSON(w, http.StatusOK, map[string]any{"prompts": list})
}
