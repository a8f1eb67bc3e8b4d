package api

import (
	"context"
	"fmt"
	"net/http"
	"net/url"
	"slices"
	"strings"
)

// Workspace returns the balance, limits and the key's rights. Call it before batch uploads.
func (c *Client) Workspace(ctx context.Context) (*Workspace, error) {
	var w Workspace
	if _, err := c.do(ctx, call{op: "get workspace", method: "GET", path: "/workspace", route: routeWorkspace, class: classData, out: &w}); err != nil {
		return nil, err
	}
	return &w, nil
}

// MissingScopes returns the scopes among want that the key lacks (nil when it has them all), so
// a program can refuse to start and say what is missing.
func (c *Client) MissingScopes(ctx context.Context, want ...string) ([]string, error) {
	w, err := c.Workspace(ctx)
	if err != nil {
		return nil, err
	}
	var missing []string
	for _, s := range want {
		if !slices.Contains(w.Key.Scopes, s) {
			missing = append(missing, s)
		}
	}
	return missing, nil
}

// Members returns the active members with their identities (needs the member-management right).
func (c *Client) Members(ctx context.Context) ([]Member, error) {
	var out struct {
		Items []Member `json:"items"`
		Total int      `json:"total"`
	}
	if _, err := c.do(ctx, call{op: "list members", method: "GET", path: "/workspace/members", route: routeMembers, class: classData, out: &out}); err != nil {
		return nil, err
	}
	return out.Items, nil
}

// PutIdentity binds an external identity to member userID. created is false when the pair was
// already bound to that member; a pair bound to another member gives identity_conflict.
func (c *Client) PutIdentity(ctx context.Context, userID string, id Identity) (created bool, err error) {
	if err := ValidateIdentity(id); err != nil {
		return false, fmt.Errorf("put identity: %w", err)
	}
	var out Identity
	resp, err := c.do(ctx, call{op: fmt.Sprintf("put identity %s:%s on member %s", id.Provider, id.ExternalID, userID), method: "PUT",
		path: "/workspace/members/" + url.PathEscape(userID) + "/identities", route: routeIdentities, body: id, class: classData, out: &out})
	if err != nil {
		return false, err
	}
	return resp.StatusCode() == http.StatusCreated, nil
}

// DeleteIdentity unbinds an external identity; identity_not_found when nothing is bound. The
// external id is path-escaped (it may hold "/" and ":").
func (c *Client) DeleteIdentity(ctx context.Context, userID, provider, externalID string) error {
	_, err := c.do(ctx, call{op: fmt.Sprintf("delete identity %s:%s of member %s", provider, externalID, userID), method: "DELETE",
		path:  "/workspace/members/" + url.PathEscape(userID) + "/identities/" + escapeSegment(provider) + "/" + escapeSegment(externalID),
		route: routeIdentity, class: classData})
	return err
}

// Projects returns the projects visible to the key's creator, newest first.
func (c *Client) Projects(ctx context.Context) ([]Project, error) {
	var out struct {
		Items []Project `json:"items"`
		Total int       `json:"total"`
	}
	if _, err := c.do(ctx, call{op: "list projects", method: "GET", path: "/projects", route: routeProjects, class: classData, out: &out}); err != nil {
		return nil, err
	}
	return out.Items, nil
}

// Prompts returns the report templates visible to the key (needs the AI-report right).
func (c *Client) Prompts(ctx context.Context) ([]Template, error) {
	var out struct {
		Prompts []Template `json:"prompts"`
	}
	if _, err := c.do(ctx, call{op: "list prompts", method: "GET", path: "/prompts", route: routePrompts, class: classData, out: &out}); err != nil {
		return nil, err
	}
	return out.Prompts, nil
}

// escapeSegment escapes s as one path segment, ":" included, as the reference asks of external ids.
func escapeSegment(s string) string {
	return strings.ReplaceAll(url.PathEscape(s), ":", "%3A")
}
