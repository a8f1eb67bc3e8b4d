package teams

import (
	"context"
	"fmt"
	"io"
	"mime"
	"net/http"
	"net/url"

	"github.com/transcript-bridge/bridge/connectors"
)

// recordingURL is the path of a recording (and, with "/content", of its content) under the
// organizer, as the application permission requires.
func (s *Source) recordingURL(organizer, meeting, recording string) string {
	return fmt.Sprintf("%s/v1.0/users/%s/onlineMeetings/%s/recordings/%s", s.cfg.GraphURL,
		url.PathEscape(organizer), url.PathEscape(meeting), url.PathEscape(recording))
}

// getRecording reads one recording's metadata.
func (s *Source) getRecording(ctx context.Context, org user, meeting, id string) (callRecording, error) {
	var cr callRecording
	err := s.api.do(ctx, call{op: "recording of " + org.String(), method: http.MethodGet, url: s.recordingURL(org.ID, meeting, id),
		forbidden: func(m string) string { return needPolicy(org.String(), m) }}, &cr)
	return cr, err
}

// Open streams the recording's content (GET …/recordings/{id}/content, an MP4, through the
// redirect Graph may answer with) after checking the recording is still the listed version.
// 429, 5xx (with Graph's Retry-After), network failures, an HTML page and a body cut short are
// transient (connectors.ErrTransient): the job is retried, never uploaded short; a recording
// gone (404) or replaced, and a 403 (naming the permission or policy missing), are permanent.
func (s *Source) Open(ctx context.Context, r connectors.Recording) (io.ReadCloser, error) {
	org := user{ID: r.Fields["organizer_id"], Mail: r.Fields["organizer_email"]}
	meeting := r.Fields["meeting_id"]
	if org.ID == "" || meeting == "" {
		return nil, fmt.Errorf("teams recording %.40s…: no organizer or meeting id", r.ItemID)
	}
	cr, err := s.getRecording(ctx, org, meeting, r.ItemID)
	if err != nil {
		return nil, transient(ctx, err)
	}
	if v, _, err := version(cr); err != nil || v != r.Version {
		return nil, fmt.Errorf("teams recording of %s at %s: changed since it was listed (created %s)", org, r.Version, cr.CreatedDateTime)
	}
	return s.content(ctx, org, meeting, r.ItemID)
}

// content sends the content request once (the bridge retries transient failures) with a fresh
// token, following redirects (the client drops the bearer token on a redirect to another host).
func (s *Source) content(ctx context.Context, org user, meeting, id string) (io.ReadCloser, error) {
	what := "teams download of " + org.String() + "'s recording"
	for attempt := 0; ; attempt++ {
		tok, err := s.api.tokens.get(ctx)
		if err != nil {
			return nil, tokenErr(err)
		}
		req, err := http.NewRequestWithContext(ctx, http.MethodGet, s.recordingURL(org.ID, meeting, id)+"/content", nil)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", what, err)
		}
		req.Header.Set("Authorization", "Bearer "+tok)
		resp, err := s.api.files.Do(req)
		if err != nil {
			err = fmt.Errorf("%s: %w", what, err)
			if ctx.Err() == nil && connectors.NetFailure(err) {
				err = connectors.Transient(err, 0)
			}
			return nil, err
		}
		if resp.StatusCode == http.StatusUnauthorized && attempt == 0 {
			resp.Body.Close()
			s.api.tokens.invalidate(tok)
			continue
		}
		return s.body(resp, org, what)
	}
}

// body checks a content answer and wraps its body so that a cut is seen.
func (s *Source) body(resp *http.Response, org user, what string) (io.ReadCloser, error) {
	if resp.StatusCode != http.StatusOK {
		defer resp.Body.Close()
		e := graphError(resp, call{op: "download of " + org.String() + "'s recording",
			forbidden: func(m string) string { return needPolicy(org.String(), m) }}, s.cfg.Now())
		if connectors.TransientStatus(e.Status) {
			return nil, connectors.Transient(e, e.RetryAfter)
		}
		return nil, e
	}
	if mt, _, _ := mime.ParseMediaType(resp.Header.Get("Content-Type")); mt == "text/html" || mt == "application/json" {
		resp.Body.Close()
		return nil, connectors.Transient(fmt.Errorf("%s: answered %s instead of the recording", what, mt), 0)
	}
	return connectors.ExactBody(resp.Body, max(resp.ContentLength, 0), what), nil
}
