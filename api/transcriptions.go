package api

import (
	"context"
	"encoding/json"
	"fmt"
	"iter"
	"net/url"
	"strconv"
	"time"
)

// Get returns the full record of transcription id. A missing, deleted or foreign id gives an
// error matching ErrNotFound.
func (c *Client) Get(ctx context.Context, id string) (*Transcription, error) {
	var t Transcription
	if _, err := c.do(ctx, call{op: "get transcription " + id, method: "GET", path: "/transcriptions/" + url.PathEscape(id), route: routeTranscription, class: classData, out: &t}); err != nil {
		return nil, err
	}
	return &t, nil
}

// ListParams filter GET /transcriptions. Zero values are not sent (the service then lists
// completed transcriptions, newest first, 20 a page).
type ListParams struct {
	// Status filters by status; "" means the service's default (completed).
	Status string
	// ProjectID, Language and ExternalID match exactly.
	ProjectID, Language, ExternalID string
	// MetadataKey and MetadataValue match one metadata key exactly (metadata.<key>=<value>).
	MetadataKey, MetadataValue string
	// DateFrom and DateTo bound the creation date (UTC days, inclusive).
	DateFrom, DateTo time.Time
	// Sort is created_at, -created_at, duration or -duration.
	Sort string
	// Limit is the page size, 1 to 100 (the service clamps); Offset the items to skip.
	Limit, Offset int
}

func (p ListParams) values() url.Values {
	q := url.Values{}
	set := func(k, v string) {
		if v != "" {
			q.Set(k, v)
		}
	}
	set("status", p.Status)
	set("project_id", p.ProjectID)
	set("language", p.Language)
	set("external_id", p.ExternalID)
	if p.MetadataKey != "" {
		q.Set("metadata."+p.MetadataKey, p.MetadataValue)
	}
	if !p.DateFrom.IsZero() {
		q.Set("date_from", p.DateFrom.UTC().Format(time.DateOnly))
	}
	if !p.DateTo.IsZero() {
		q.Set("date_to", p.DateTo.UTC().Format(time.DateOnly))
	}
	set("sort", p.Sort)
	if p.Limit != 0 {
		q.Set("limit", strconv.Itoa(p.Limit))
	}
	if p.Offset != 0 {
		q.Set("offset", strconv.Itoa(p.Offset))
	}
	return q
}

// List returns one page of transcriptions.
func (c *Client) List(ctx context.Context, p ListParams) (*ListPage, error) {
	var page ListPage
	if _, err := c.do(ctx, call{op: "list transcriptions", method: "GET", path: "/transcriptions", route: routeTranscriptions, query: p.values(), class: classData, out: &page}); err != nil {
		return nil, err
	}
	return &page, nil
}

// All iterates over every transcription matching p, page by page (100 a page unless p.Limit is
// set), until offset + items reaches total. An error ends the iteration after being yielded.
func (c *Client) All(ctx context.Context, p ListParams) iter.Seq2[ListItem, error] {
	return func(yield func(ListItem, error) bool) {
		if p.Limit == 0 {
			p.Limit = 100
		}
		for {
			page, err := c.List(ctx, p)
			if err != nil {
				yield(ListItem{}, err)
				return
			}
			for _, it := range page.Items {
				if !yield(it, nil) {
					return
				}
			}
			p.Offset = page.Offset + len(page.Items)
			if len(page.Items) == 0 || p.Offset >= page.Total {
				return
			}
		}
	}
}

// Assign gives transcription id to author ("email:<e-mail>" or "user:<uuid>"); an empty author
// returns ownership to the key's creator. It returns the updated record.
func (c *Client) Assign(ctx context.Context, id, author string) (*Transcription, error) {
	var t Transcription
	if err := c.assign(ctx, id, author, &t); err != nil {
		return nil, err
	}
	return &t, nil
}

// AssignJSON is Assign returning the updated record as the service sent it, every field kept.
func (c *Client) AssignJSON(ctx context.Context, id, author string) (json.RawMessage, error) {
	var out json.RawMessage
	if err := c.assign(ctx, id, author, &out); err != nil {
		return nil, err
	}
	return out, nil
}

// assign is the PATCH of Assign, its answer decoded into out.
func (c *Client) assign(ctx context.Context, id, author string, out any) error {
	body := map[string]any{"author": nil}
	if author != "" {
		if err := ValidateAuthor(author, false); err != nil {
			return fmt.Errorf("assign transcription %s: %w", id, err)
		}
		body["author"] = author
	}
	_, err := c.do(ctx, call{op: "assign transcription " + id, method: "PATCH", path: "/transcriptions/" + url.PathEscape(id), route: routeTranscription, body: body, class: classData, out: out})
	return err
}

// Delete removes transcription id for all members. A 404 after a retried attempt counts as done
// (the first attempt landed); a 404 on the first attempt is returned.
func (c *Client) Delete(ctx context.Context, id string) error {
	_, err := c.do(ctx, call{op: "delete transcription " + id, method: "DELETE", path: "/transcriptions/" + url.PathEscape(id), route: routeTranscription, class: classDelete, goneOK: true})
	return err
}

// RequestReports asks for reports of the given template slugs (at most 3) on transcription id.
// Slugs already generating or completed return their existing report.
func (c *Client) RequestReports(ctx context.Context, id string, slugs ...string) ([]ReportRef, error) {
	if len(slugs) == 0 || len(slugs) > 3 {
		return nil, fmt.Errorf("request reports for %s: %w", id, &ValidationError{Field: "reports", Code: "too_many_reports", Message: fmt.Sprintf("%d slugs given; 1 to 3 are allowed", len(slugs))})
	}
	var out struct {
		Reports []ReportRef `json:"reports"`
	}
	if _, err := c.do(ctx, call{op: "request reports for " + id, method: "POST", path: "/transcriptions/" + url.PathEscape(id) + "/reports", route: routeReports,
		body: map[string]any{"reports": slugs}, class: classData, out: &out}); err != nil {
		return nil, err
	}
	return out.Reports, nil
}
