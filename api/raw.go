package api

import (
	"context"
	"encoding/json"
	"strings"
)

// GetJSON reads path (a GET of the service: /workspace, /workspace/members, /projects,
// /prompts, /transcriptions/{id}) under the client's retry policy and returns the answer's JSON
// document as the service sent it, every field kept: for callers that print the service's
// answer unchanged. op names the operation in errors ("list members").
func (c *Client) GetJSON(ctx context.Context, op, path string) (json.RawMessage, error) {
	var out json.RawMessage
	if _, err := c.do(ctx, call{op: op, method: "GET", path: path, route: routeOf(path), class: classData, out: &out}); err != nil {
		return nil, err
	}
	return out, nil
}

// ListJSON is List's page as the service sent it ({items, total, limit, offset}, every field
// kept), for callers that print it unchanged.
func (c *Client) ListJSON(ctx context.Context, p ListParams) (json.RawMessage, error) {
	var out json.RawMessage
	if _, err := c.do(ctx, call{op: "list transcriptions", method: "GET", path: routeTranscriptions, route: routeTranscriptions, query: p.values(), class: classData, out: &out}); err != nil {
		return nil, err
	}
	return out, nil
}

// routeOf is the metrics route of a GET path: the path itself, a transcription's id replaced.
func routeOf(path string) string {
	if rest, ok := strings.CutPrefix(path, routeTranscriptions+"/"); ok && !strings.Contains(rest, "/") {
		return routeTranscription
	}
	return path
}
