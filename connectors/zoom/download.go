package zoom

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"mime"
	"net/http"
	"net/url"
	"strings"
	"time"

	"golang.org/x/oauth2"

	"github.com/transcript-bridge/bridge/connectors"
)

// downloadTokenLife is how long a webhook's download_token is accepted.
const downloadTokenLife = 24 * time.Hour

// Open downloads the recording file, following Zoom's redirect: with the webhook's
// download_token while it is fresh, else a Server-to-Server OAuth token. An HTML answer (Zoom's
// page with status 200, while the recording is still processing or on a hiccup), a byte count
// different from file_size, 429, 5xx and network failures are transient errors
// (connectors.ErrTransient, with Zoom's Retry-After), so the download is retried later and
// never uploaded short. A refusal about the account holds the job (connectors.ErrBlocked): a
// 402, a 403 naming a licence, a subscription or billing, and a spent daily limit, until it
// resets at 00:00 UTC. 404 (the recording is gone), another 403 and a token refused twice are
// permanent.
func (s *Source) Open(ctx context.Context, r connectors.Recording) (io.ReadCloser, error) {
	link := r.Fields["download_url"]
	if link == "" {
		return nil, fmt.Errorf("zoom %s: no download_url", r.ItemID)
	}
	// The link comes from a payload (a webhook anyone who knows the secret can sign, a listing):
	// Zoom's credentials go to Zoom only, and nothing is fetched from elsewhere.
	if err := s.linkAllowed(link); err != nil {
		return nil, fmt.Errorf("zoom %s: %w: refused, no credential sent", r.ItemID, err)
	}
	if tok, ok := s.downloadToken(r.ItemID); ok {
		body, err := s.download(ctx, r, link, "", tok)
		if err == nil {
			return body, nil
		}
		s.log("download with the webhook's token failed; using an OAuth token", r.ItemID, err)
	}
	for attempt := 0; attempt < 2; attempt++ {
		tok, err := s.api.tokens.get(ctx)
		if err != nil {
			return nil, tokenErr(err)
		}
		body, err := s.download(ctx, r, link, tok, "")
		if err == nil || !isStatus(err, http.StatusUnauthorized) {
			return body, err
		}
		s.api.tokens.invalidate(tok)
	}
	return nil, fmt.Errorf("zoom %s: download refused twice with fresh tokens", r.ItemID)
}

func (s *Source) download(ctx context.Context, r connectors.Recording, link, bearer, accessToken string) (io.ReadCloser, error) {
	if accessToken != "" {
		u, err := url.Parse(link)
		if err != nil {
			return nil, fmt.Errorf("zoom %s: download_url: %w", r.ItemID, err)
		}
		q := u.Query()
		q.Set("access_token", accessToken)
		u.RawQuery = q.Encode()
		link = u.String()
	}
	if err := s.api.limits[light].Wait(ctx); err != nil {
		return nil, err
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, link, nil)
	if err != nil {
		return nil, fmt.Errorf("zoom %s: %w", r.ItemID, err)
	}
	if bearer != "" {
		req.Header.Set("Authorization", "Bearer "+bearer)
	}
	resp, err := s.api.files.Do(req) // follows the redirect to the file
	if err != nil {
		err = fmt.Errorf("zoom download %s: %w", r.ItemID, redactErr(err))
		if ctx.Err() == nil && connectors.NetFailure(err) {
			err = connectors.Transient(err, 0)
		}
		return nil, err
	}
	// A failed download is retried later: Zoom answers so while a recording is being processed,
	// and on a hiccup.
	retry := func(format string, a ...any) (io.ReadCloser, error) {
		resp.Body.Close()
		return nil, connectors.Transient(fmt.Errorf("zoom download %s: "+format, append([]any{r.ItemID}, a...)...), 0)
	}
	if resp.StatusCode != http.StatusOK {
		return nil, s.refusal(r, resp)
	}
	if mt, _, _ := mime.ParseMediaType(resp.Header.Get("Content-Type")); mt == "text/html" {
		return retry("answered an HTML page instead of the recording (still processing, or an expired or refused token)")
	}
	if resp.ContentLength >= 0 && resp.ContentLength != r.Size {
		return retry("%d bytes announced, file_size is %d", resp.ContentLength, r.Size)
	}
	return connectors.ExactBody(resp.Body, r.Size, "zoom download "+r.ItemID), nil
}

// refusal classifies a download Zoom did not answer with 200 (see Open); it closes the body.
// A spent daily limit is Blocked rather than Transient: retrying before 00:00 UTC is futile, and
// the wait (up to a day, every day the quota runs out again) would eat into the transient retry
// deadline; held, the job says why and is tried again once the limit has reset.
func (s *Source) refusal(r connectors.Recording, resp *http.Response) error {
	b, _ := io.ReadAll(io.LimitReader(resp.Body, 64<<10))
	resp.Body.Close()
	e := &APIError{Status: resp.StatusCode, Op: "download"}
	json.Unmarshal(b, e)
	if e.Message == "" {
		e.Message = resp.Status
	}
	err := fmt.Errorf("zoom download %s: %w", r.ItemID, e)
	now := s.cfg.Now()
	if resp.StatusCode == http.StatusTooManyRequests {
		if until, ok := dailyReset(resp.Header, e.Message, now); ok {
			return connectors.Blocked(&dailyLimitError{err: err, until: until}, until.Sub(now))
		}
	}
	switch {
	case connectors.BlockedStatus(resp.StatusCode, e.Message):
		return connectors.Blocked(err, 0)
	case connectors.TransientStatus(resp.StatusCode):
		return connectors.Transient(err, connectors.RetryAfter(resp.Header.Get("Retry-After"), now))
	}
	return err
}

// tokenErr classifies a failure to get an OAuth token: a network failure or an answer of 429
// or 5xx from the token endpoint may pass; a refusal (bad credentials) does not.
func tokenErr(err error) error {
	var re *oauth2.RetrieveError
	if connectors.NetFailure(err) || errors.As(err, &re) && re.Response != nil && connectors.TransientStatus(re.Response.StatusCode) {
		return connectors.Transient(err, 0)
	}
	return err
}

// linkAllowed refuses a download link that is not Zoom's to fetch with Zoom's credentials: a
// host other than zoom.us, zoomgov.com, their subdomains and api_url's, or a scheme other than
// https (plain http only to api_url's own host and the names under it when api_url itself is
// http: a test's server).
func (s *Source) linkAllowed(link string) error {
	u, err := url.Parse(link)
	if err != nil {
		return fmt.Errorf("download_url is not a URL")
	}
	if !s.api.hosts.Allows(u.Host) {
		return fmt.Errorf("download_url names %s://%s, not a Zoom host (zoom.us, zoomgov.com or api_url's)", u.Scheme, u.Host)
	}
	api, _ := url.Parse(s.cfg.APIURL)
	switch {
	case u.Scheme == "https":
		return nil
	case u.Scheme == "http" && api != nil && api.Scheme == "http" &&
		(strings.EqualFold(u.Host, api.Host) || strings.HasSuffix(strings.ToLower(u.Hostname()), "."+strings.ToLower(api.Hostname()))):
		return nil
	}
	return fmt.Errorf("download_url %s://%s is not https: Zoom's credentials are never sent in clear", u.Scheme, u.Host)
}

// redactErr keeps a download link's query (its access_token, the signature of the location it
// redirected to) out of an error.
func redactErr(err error) error { return connectors.WithoutQuery(err) }
