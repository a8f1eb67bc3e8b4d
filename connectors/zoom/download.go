package zoom

import (
	"context"
	"fmt"
	"io"
	"mime"
	"net/http"
	"net/url"
	"time"

	"github.com/transcript-bridge/bridge/bridge"
)

// downloadTokenLife is how long a webhook's download_token is accepted.
const downloadTokenLife = 24 * time.Hour

// Open downloads the recording file, following Zoom's redirect: with the webhook's
// download_token while it is fresh, else a Server-to-Server OAuth token. An HTML answer (Zoom's
// error page with status 200) or a byte count different from file_size is an error, so a bad
// download is retried and never uploaded.
func (s *Source) Open(ctx context.Context, r bridge.Recording) (io.ReadCloser, error) {
	link := r.Fields["download_url"]
	if link == "" {
		return nil, fmt.Errorf("zoom %s: no download_url", r.ItemID)
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
			return nil, err
		}
		body, err := s.download(ctx, r, link, tok, "")
		if err == nil || !isStatus(err, http.StatusUnauthorized) {
			return body, err
		}
		s.api.tokens.invalidate(tok)
	}
	return nil, fmt.Errorf("zoom %s: download refused twice with fresh tokens", r.ItemID)
}

func (s *Source) download(ctx context.Context, r bridge.Recording, link, bearer, accessToken string) (io.ReadCloser, error) {
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
		return nil, fmt.Errorf("zoom download %s: %w", r.ItemID, redactErr(err))
	}
	fail := func(format string, a ...any) (io.ReadCloser, error) {
		resp.Body.Close()
		return nil, fmt.Errorf("zoom download %s: "+format, append([]any{r.ItemID}, a...)...)
	}
	if resp.StatusCode != http.StatusOK {
		resp.Body.Close()
		return nil, fmt.Errorf("zoom download %s: %w", r.ItemID, &APIError{Status: resp.StatusCode, Op: "download", Message: resp.Status})
	}
	if mt, _, _ := mime.ParseMediaType(resp.Header.Get("Content-Type")); mt == "text/html" {
		return fail("answered an HTML page instead of the recording (an expired or refused token)")
	}
	if resp.ContentLength >= 0 && resp.ContentLength != r.Size {
		return fail("%d bytes announced, file_size is %d", resp.ContentLength, r.Size)
	}
	return &exact{rc: resp.Body, want: r.Size, item: r.ItemID}, nil
}

// exact fails the read that ends a body of another length than want.
type exact struct {
	rc   io.ReadCloser
	want int64
	n    int64
	item string
}

func (e *exact) Read(p []byte) (int, error) {
	n, err := e.rc.Read(p)
	e.n += int64(n)
	if e.n > e.want {
		return n, fmt.Errorf("zoom download %s: more than file_size %d bytes", e.item, e.want)
	}
	if err == io.EOF && e.n != e.want {
		return n, fmt.Errorf("zoom download %s: %d of %d bytes (cut short): %w", e.item, e.n, e.want, io.ErrUnexpectedEOF)
	}
	return n, err
}

func (e *exact) Close() error { return e.rc.Close() }

// redactErr keeps access_token values out of an error's URL.
func redactErr(err error) error {
	if ue, ok := err.(*url.Error); ok {
		if u, perr := url.Parse(ue.URL); perr == nil && u.Query().Has("access_token") {
			q := u.Query()
			q.Set("access_token", "REDACTED")
			u.RawQuery = q.Encode()
			return &url.Error{Op: ue.Op, URL: u.String(), Err: ue.Err}
		}
	}
	return err
}
