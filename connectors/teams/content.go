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

// where locates a recording under its organizer, as the application permission requires: in
// an online meeting (meeting set) or an ad hoc call (call set).
type where struct {
	org           user
	meeting, call string
}

// url is the recording's path (and, with "/content", its content's):
// /users/{organizer}/onlineMeetings/{meeting}/recordings/{id}, or
// /users/{organizer}/adhocCalls/{call}/recordings/{id} for an ad hoc call
// (https://learn.microsoft.com/graph/api/callrecording-get).
func (wh where) url(base, id string) string {
	kind, parent := "onlineMeetings", wh.meeting
	if wh.call != "" {
		kind, parent = "adhocCalls", wh.call
	}
	return fmt.Sprintf("%s/v1.0/users/%s/%s/%s/recordings/%s", base, url.PathEscape(wh.org.ID), kind, url.PathEscape(parent), url.PathEscape(id))
}

// need is the permission the recording's calls need.
func (wh where) need() string {
	if wh.call != "" {
		return needCalls
	}
	return needRecordings
}

// getRecording reads one recording's metadata.
func (s *Source) getRecording(ctx context.Context, wh where, id string) (callRecording, error) {
	var cr callRecording
	err := s.api.do(ctx, call{op: "recording of " + wh.org.String(), method: http.MethodGet, url: wh.url(s.cfg.GraphURL, id),
		forbidden: func(m string) string { return needPolicy(wh.org.String(), m, wh.need()) }}, &cr)
	return cr, err
}

// Open streams the recording's content (GET …/recordings/{id}/content, an MP4, through the
// redirect Graph may answer with) after checking the recording is still the listed version.
// 429, 5xx (with Graph's Retry-After), network failures, an HTML page and a body cut short are
// transient (connectors.ErrTransient): the job is retried, never uploaded short. A 402 (a
// metered API's quota spent) and a 403 saying a licence or the application access policy is
// missing are connectors.Blocked: the job waits, held, and is tried again daily and when
// released. A recording gone (404) or replaced, and a 403 naming a permission missing, are
// permanent.
func (s *Source) Open(ctx context.Context, r connectors.Recording) (io.ReadCloser, error) {
	wh := where{org: user{ID: r.Fields["organizer_id"], Mail: r.Fields["organizer_email"]}, meeting: r.Fields["meeting_id"], call: r.Fields["call_id"]}
	if wh.org.ID == "" || wh.meeting == "" && wh.call == "" {
		return nil, fmt.Errorf("teams recording %.40s…: no organizer, meeting or call id", r.ItemID)
	}
	cr, err := s.getRecording(ctx, wh, r.ItemID)
	if err != nil {
		return nil, classify(ctx, err)
	}
	if v, _, err := version(cr); err != nil || v != r.Version {
		return nil, fmt.Errorf("teams recording of %s at %s: changed since it was listed (created %s)", wh.org, r.Version, cr.CreatedDateTime)
	}
	return s.content(ctx, wh, r.ItemID)
}

// content sends the content request once (the bridge retries transient failures) with a fresh
// token, following redirects (the client drops the bearer token on a redirect to another host).
func (s *Source) content(ctx context.Context, wh where, id string) (io.ReadCloser, error) {
	org := wh.org
	what := "teams download of " + org.String() + "'s recording"
	for attempt := 0; ; attempt++ {
		tok, err := s.api.tokens.get(ctx)
		if err != nil {
			return nil, tokenErr(err)
		}
		req, err := http.NewRequestWithContext(ctx, http.MethodGet, wh.url(s.cfg.GraphURL, id)+"/content", nil)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", what, err)
		}
		req.Header.Set("Authorization", "Bearer "+tok)
		resp, err := s.api.files.Do(req)
		if err != nil {
			// The failure may name the pre-authenticated location: its query is a credential.
			err = fmt.Errorf("%s: %w", what, connectors.WithoutQuery(err))
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
		return s.body(resp, wh, what)
	}
}

// body checks a content answer and wraps its body so that a cut is seen.
func (s *Source) body(resp *http.Response, wh where, what string) (io.ReadCloser, error) {
	org := wh.org
	if resp.StatusCode != http.StatusOK {
		defer resp.Body.Close()
		e := graphError(resp, call{op: "download of " + org.String() + "'s recording",
			forbidden: func(m string) string { return needPolicy(org.String(), m, wh.need()) }}, s.cfg.Now())
		if blocked(e) {
			return nil, connectors.Blocked(e, e.RetryAfter)
		}
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
